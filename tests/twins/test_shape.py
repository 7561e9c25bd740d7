"""The shape rule of an observation against an example, and a prompt's error examples."""

from __future__ import annotations

from typing import Any

import pytest

from occubench.dataset import load_env, reference_suite_dir
from occubench.twins import error_shapes, json_type, shape_problems

EXAMPLE = {"unit": "ED", "beds": [{"bed_id": "ED-03", "minutes": 42}], "note": None}


@pytest.mark.parametrize(
    ("observation", "problems"),
    [
        ({"unit": "X", "beds": [], "note": "any"}, []),
        ({"unit": "X", "beds": [{"bed_id": "A", "minutes": 1.5}], "note": 3}, []),
        ({"unit": None, "beds": None, "note": None}, []),
        ({"unit": "X", "beds": []}, ["/: missing key 'note'"]),
        ({"unit": "X", "beds": [], "note": 1, "more": 1}, ["/: extra key 'more'"]),
        (
            {"unit": 1, "beds": {}, "note": 1},
            ["/unit: number, the example has string", "/beds: object, the example has array"],
        ),
        (
            {"unit": "X", "beds": [{"bed_id": "A", "minutes": 1}, {"bed_id": True}], "note": 1},
            ["/beds/1: missing key 'minutes'", "/beds/1/bed_id: boolean, the example has string"],
        ),
    ],
)
def test_an_observation_fits_its_examples_shape(
    observation: dict[str, Any], problems: list[str]
) -> None:
    assert shape_problems(observation, EXAMPLE) == problems


def test_empty_examples_leave_their_contents_open() -> None:
    assert shape_problems({"a": {"x": 1}, "b": [1, "s"]}, {"a": {}, "b": []}) == []
    assert shape_problems({"a/b": {"c~": 1}}, {"a/b": {"c~": "s"}}) == [
        "/a~1b/c~0: number, the example has string"
    ]
    assert [json_type(v) for v in (1, 1.5, True, "s", [], {}, None)] == [
        "number",
        "number",
        "boolean",
        "string",
        "array",
        "object",
        "null",
    ]


def test_a_prompts_error_examples_are_read_as_written_or_with_doubled_braces() -> None:
    env = load_env(reference_suite_dir(), "ref_dock_appointment_scheduling")
    assert error_shapes(env) == [{"error": {"code": "NOT_FOUND", "message": "..."}}]
    doubled = env.model_copy(
        update={
            "world_model_system_prompt": 'Say `{{"status": "error", "message": "no"}}` or '
            '{{"error": "Action not found"}}; a record looks like {{"id": 1}}.'
        }
    )
    assert error_shapes(doubled) == [
        {"status": "error", "message": "no"},
        {"error": "Action not found"},
    ]
    assert error_shapes(env.model_copy(update={"world_model_system_prompt": "No {braces"})) == []


def test_an_object_sharing_no_key_below_the_top_is_a_map_keyed_by_data() -> None:
    example = {"integrity_map": {"ECM": 100, "TCM": 45}}
    assert shape_problems({"integrity_map": {"battery": 42, "inverter": 100}}, example) == []
    assert shape_problems({"integrity_map": {"battery": "low"}}, example) == [
        "/integrity_map/battery: string, the example has number"
    ]
    assert shape_problems({"integrity_map": {"ECM": 1, "battery": 2}}, example) == [
        "/integrity_map: missing key 'TCM'",
        "/integrity_map: extra key 'battery'",
    ]
    assert shape_problems({"other": 1}, {"unit": "ED"}) == [
        "/: missing key 'unit'",
        "/: extra key 'other'",
    ]


def test_a_free_part_is_held_to_its_type_only() -> None:
    example = {"name": "MAQ", "data": {"Class_1": {"max_qty": 500}, "Rule": "text"}}
    observation = {"name": "MAQ", "data": {"Class_1": {"unit": "lbs"}, "Other": 3}}
    assert shape_problems(observation, example, free=["/data"]) == []
    assert shape_problems(observation, example) != []
    assert shape_problems({"name": "MAQ", "data": []}, example, free=["/data"]) == [
        "/data: array, the example has object"
    ]
