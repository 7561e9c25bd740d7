from __future__ import annotations

import pytest

from occubench.agent import BadToolCall, CallProblem, checked_arguments
from occubench.dataset import ToolSpec

TOOLS = [
    ToolSpec(
        name="get_order",
        description="An order.",
        parameters={
            "type": "object",
            "properties": {"order_id": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["order_id"],
        },
    )
]


def problem(arguments, tool="get_order"):
    with pytest.raises(BadToolCall) as raised:
        checked_arguments(TOOLS, tool, arguments)
    return raised.value


def test_good_calls_give_the_arguments():
    assert checked_arguments(TOOLS, "get_order", {"order_id": "A1"}) == {"order_id": "A1"}
    assert checked_arguments(TOOLS, "get_order", '{"order_id": "A1", "limit": 2}')["limit"] == 2


def test_each_bad_call_is_refused_with_its_reason():
    assert problem({}, tool="nope").problem is CallProblem.UNKNOWN_TOOL
    assert problem("{not json").problem is CallProblem.NOT_JSON
    assert problem("[1, 2]").problem is CallProblem.NOT_JSON
    assert problem("[" * 5000 + "]" * 5000).problem is CallProblem.NOT_JSON
    bad = problem({"order_id": 1, "extra": True})
    assert bad.problem is CallProblem.INVALID
    assert "2 problem(s)" in bad.message and "'extra'" in bad.message  # every violation listed
    assert problem({}).problem is CallProblem.INVALID  # a required argument is missing
