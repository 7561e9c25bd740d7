"""A tool's form from its JSON Schema: kinds, values typed in, the protocol's rule on them."""

from __future__ import annotations

import json

import pytest

from occubench.errors import UsageError
from occubench.play import (
    FieldKind,
    FormProblems,
    field_value,
    form_arguments,
    json_arguments,
    tool_view,
)

SCHEMA = {
    "type": "object",
    "properties": {
        "patient_id": {"type": "string", "description": "Patient id, e.g. P-1001."},
        "esi_level": {"type": "integer", "minimum": 1, "maximum": 5},
        "weight_kg": {"type": "number"},
        "urgent": {"type": "boolean"},
        "unit": {"type": "string", "enum": ["ED", "ICU", 3]},
        "codes": {"type": "array", "items": {"type": "string"}},
        "note": {"type": ["string", "null"]},
    },
    "required": ["patient_id", "esi_level"],
}
TOOL = tool_view("triage", "Triage a patient.", SCHEMA)


def test_each_property_is_a_field_of_its_kind():
    kinds = {f.name: (f.kind, f.type_text, f.required) for f in TOOL.fields}
    assert kinds == {
        "patient_id": (FieldKind.TEXT, "string", True),
        "esi_level": (FieldKind.INTEGER, "integer", True),
        "weight_kg": (FieldKind.NUMBER, "number", False),
        "urgent": (FieldKind.BOOLEAN, "boolean", False),
        "unit": (FieldKind.CHOICE, "string", False),
        "codes": (FieldKind.JSON, "array of string", False),
        "note": (FieldKind.JSON, "string or null", False),
    }
    unit = next(f for f in TOOL.fields if f.name == "unit")
    assert unit.choices == ['"ED"', '"ICU"', "3"]
    assert TOOL.fields[0].description == "Patient id, e.g. P-1001."


@pytest.mark.parametrize(
    ("name", "text", "value"),
    [
        ("patient_id", " P-1 ", " P-1 "),  # a string is kept as typed
        ("esi_level", " 2 ", 2),
        ("weight_kg", "70.5", 70.5),
        ("weight_kg", "70", 70),
        ("urgent", "Yes", True),
        ("urgent", "false", False),
        ("unit", "ED", "ED"),  # a choice by its value's text
        ("unit", '"ICU"', "ICU"),  # ... or as JSON
        ("unit", "3", 3),
        ("codes", '["A1", "B2"]', ["A1", "B2"]),
    ],
)
def test_typed_text_gives_the_value_of_its_field(name, text, value):
    field = next(f for f in TOOL.fields if f.name == name)
    assert field_value(field, text) == value


@pytest.mark.parametrize(
    ("name", "text", "problem"),
    [
        ("esi_level", "two", "not a whole number"),
        ("esi_level", "2.5", "not a whole number"),
        ("weight_kg", "nan", "not a finite number"),
        ("urgent", "perhaps", "not true or false"),
        ("unit", "ER", "not one of"),
        ("unit", "2", "not one of"),  # not a position in the list: a value
        ("codes", "[1,", "not JSON"),
        ("codes", "[" * 200 + "]" * 200, "nested more than"),
    ],
)
def test_text_of_the_wrong_kind_is_refused_with_the_reason(name, text, problem):
    field = next(f for f in TOOL.fields if f.name == name)
    with pytest.raises(UsageError, match=problem):
        field_value(field, text)


def test_every_problem_of_a_form_is_listed_at_once():
    with pytest.raises(FormProblems) as caught:
        form_arguments(TOOL, {"esi_level": "two", "urgent": "perhaps", "patient_id": "P"}, True)
    assert caught.value.problems == [
        "esi_level: not a whole number: 'two'",
        "urgent: not true or false: 'perhaps'",
    ]


def test_under_the_occubench_protocol_the_schema_decides():
    with pytest.raises(FormProblems) as caught:
        form_arguments(TOOL, {"esi_level": "9", "codes": "[1]"}, True)
    problems = caught.value.problems
    assert "'patient_id' is a required property" in problems
    assert "9 is greater than the maximum of 5" in problems
    assert "1 is not of type 'string'" in problems
    good = form_arguments(TOOL, {"patient_id": "P-1", "esi_level": "2", "weight_kg": ""}, True)
    assert good == {"patient_id": "P-1", "esi_level": 2}  # an empty field is left out


def test_under_the_paper_protocol_what_was_typed_goes_on():
    assert form_arguments(TOOL, {"esi_level": "9"}, False) == {"esi_level": 9}


def test_arguments_typed_as_one_json_object():
    assert json_arguments(TOOL, '{"patient_id": "P-1", "esi_level": 1}', True) == {
        "patient_id": "P-1",
        "esi_level": 1,
    }
    for text, problem in [("[1]", "a JSON object is needed"), ("{oops", "not JSON")]:
        with pytest.raises(FormProblems, match=problem):
            json_arguments(TOOL, text, False)
    with pytest.raises(FormProblems, match="required"):
        json_arguments(TOOL, json.dumps({"esi_level": 1}), True)
