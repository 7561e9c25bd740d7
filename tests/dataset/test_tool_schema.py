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
    hits = _checked.cache_info().hits
    first.errors.clear()  # a caller's copy: what is kept does not change
    again = check_tool(spec(type="object", properties={"id": {"type": "nonsense"}}))
    assert _checked.cache_info().hits == hits + 1
    assert again.errors and again.errors[0].message == check_tool(broken).errors[0].message


def test_a_changed_definition_is_checked_afresh():
    lossy = spec(type="object", properties={"ids": {"type": "array", "minItems": 1}})
    assert check_tool(lossy).lost == ["$.properties.ids.minItems"]
    plain = spec(type="object", properties={"ids": {"type": "array"}})
    assert check_tool(plain).lost == []
