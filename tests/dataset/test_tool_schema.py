"""Checking a tool's parameter schema: the answer, kept per definition."""

from __future__ import annotations

from occubench.dataset import ToolSpec, check_tool
from occubench.dataset._tool_schema import _checked


def spec(**parameters: object) -> ToolSpec:
    return ToolSpec.model_validate(
        {"name": "get_order", "description": "Look an order up.", "parameters": parameters}
    )


def test_a_definition_is_checked_once_and_its_answer_kept_apart_from_callers():
    broken = spec(type="object", properties={"id": {"type": "nonsense"}})
    first = check_tool(broken)
    assert first.errors and first.errors[0].field.startswith("parameters")
    kept = len(_checked)
    first.errors.clear()  # a caller's copy: what is kept does not change
    again = check_tool(spec(type="object", properties={"id": {"type": "nonsense"}}))
    assert len(_checked) == kept  # the same definition: its answer, not a new check
    assert again.errors and again.errors[0].message == check_tool(broken).errors[0].message


def test_a_changed_definition_is_checked_afresh():
    lossy = spec(type="object", properties={"ids": {"type": "array", "minItems": 1}})
    assert check_tool(lossy).lost == ["$.properties.ids.minItems"]
    plain = spec(type="object", properties={"ids": {"type": "array"}})
    assert check_tool(plain).lost == []


def test_values_json_tells_apart_are_checked_apart():
    nan = spec(type="object", properties={"n": {"type": "number", "minimum": float("nan")}})
    null = spec(type="object", properties={"n": {"type": "number", "minimum": None}})
    assert check_tool(null).errors  # null is no number: an invalid schema
    assert check_tool(nan).errors == []  # NaN is one: not taken for the null kept before
    assert check_tool(null).errors
