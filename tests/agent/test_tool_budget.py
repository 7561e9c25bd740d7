"""The tool-call budget and the argument rule, stated once (``CallRule``)."""

from __future__ import annotations

import pytest

from occubench.agent import BadToolCall, CallProblem, CallRule, ToolBudget, refusal_error
from occubench.config import PRESETS
from occubench.dataset import ToolSpec
from occubench.protocols import Protocol

TOOLS = [
    ToolSpec(
        name="get_order",
        description="Look an order up.",
        parameters={
            "type": "object",
            "properties": {"order_id": {"type": "string"}},
            "required": ["order_id"],
        },
    )
]
OCCUBENCH = CallRule(budget=ToolBudget(cap=3), checks_arguments=True)
PAPER = CallRule(budget=ToolBudget(cap=0), checks_arguments=False)


def test_the_budget_is_spent_at_its_cap_and_never_without_one():
    assert [ToolBudget(cap=3).spent(n) for n in (0, 2, 3, 4)] == [False, False, True, True]
    assert not ToolBudget(cap=0).spent(10_000)
    assert ToolBudget(cap=3).note() == "At most 3 tool calls." and ToolBudget(cap=0).note() == ""


def test_the_rule_of_each_protocol():
    assert CallRule.of(PRESETS[Protocol.PAPER]) == PAPER
    occubench = CallRule.of(PRESETS[Protocol.OCCUBENCH])
    assert occubench.checks_arguments and occubench.budget.cap > 0


def test_past_the_budget_the_call_is_refused_before_its_arguments_are_read():
    with pytest.raises(BadToolCall) as refused:
        OCCUBENCH.admit(TOOLS, 3, "no_such_tool", "{oops")
    assert refused.value.problem is CallProblem.TOOL_CALL_LIMIT
    assert refused.value.message == (
        "tool call limit of 3 reached: this call was not run; give your answer"
    )
    error = refusal_error(refused.value)
    assert (error.type, error.message) == ("limit", refused.value.message)


@pytest.mark.parametrize(
    ("arguments", "parse_error", "problem"),
    [
        ("{oops", None, CallProblem.NOT_JSON),
        ({}, None, CallProblem.INVALID),
        ({}, "Error parsing the following tool call arguments", CallProblem.NOT_JSON),
    ],
)
def test_the_occubench_rule_refuses_bad_arguments_as_parsing_errors(
    arguments, parse_error, problem
):
    with pytest.raises(BadToolCall) as refused:
        OCCUBENCH.admit(TOOLS, 0, "get_order", arguments, parse_error=parse_error)
    assert refused.value.problem is problem and refusal_error(refused.value).type == "parsing"


def test_the_occubench_rule_admits_checked_arguments_without_the_raw_text():
    admitted = OCCUBENCH.admit(TOOLS, 2, "get_order", '{"order_id": "A1"}', raw="ignored")
    assert admitted.arguments == {"order_id": "A1"} and admitted.raw is None


def test_the_paper_rule_passes_the_raw_text_on_whatever_it_is():
    broken = PAPER.admit(TOOLS, 500, "no_such_tool", "{oops")
    assert broken.arguments == {} and broken.raw == "{oops"
    kept = PAPER.admit(TOOLS, 0, "get_order", {}, raw='{"order_id": 1')
    assert kept.arguments == {} and kept.raw == '{"order_id": 1'
