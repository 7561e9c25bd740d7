"""Deterministic checks of a trajectory: tool calls, their order, the final answer."""

from __future__ import annotations

import re
from typing import Any

import jsonpointer
from pydantic import BaseModel, Field

from occubench.dataset import (
    AnswerContainsCheck,
    AnswerExcludesCheck,
    Check,
    OrderCheck,
    StateEqualsCheck,
    ToolCalledCheck,
    ToolNotCalledCheck,
)

_ABSENT = object()


class ToolCall(BaseModel):
    """A tool call the agent made (as the agent sent it)."""

    tool: str
    arguments: dict[str, Any]


class CheckResult(BaseModel):
    """The outcome of one check."""

    check: dict[str, Any] = Field(description="The check as written in the task.")
    passed: bool
    detail: str = Field(description="Why it passed or failed.")


def _includes(arguments: dict[str, Any], expected: dict[str, Any]) -> bool:
    def same(a: Any, b: Any) -> bool:
        if isinstance(a, str) and isinstance(b, str):
            return a.strip().casefold() == b.strip().casefold()
        if isinstance(a, int | float) and isinstance(b, int | float):
            return abs(a - b) < 1e-9
        return bool(a == b)

    return all(k in arguments and same(arguments[k], v) for k, v in expected.items())


def mentions(text: str, value: str) -> bool:
    """Whether ``text`` states ``value`` as a whole token (case-insensitive).

    "6" is not mentioned by "26" or "6.5", "0.62" not by "10.62"; "ED-11" is by "bed ED-11."
    """
    pattern = r"(?<![0-9a-z.])" + re.escape(value.casefold()) + r"(?![0-9a-z]|\.[0-9])"
    return re.search(pattern, text.casefold()) is not None


def run_check(
    check: Check, calls: list[ToolCall], answer: str, state: dict[str, Any] | None = None
) -> CheckResult:
    """Evaluate one check against the agent's calls, final answer and final state."""
    passed: bool
    match check:
        case ToolCalledCheck():
            passed = any(
                c.tool == check.tool and _includes(c.arguments, check.arguments) for c in calls
            )
            detail = f"{check.tool} called with {check.arguments}: {passed}"
        case ToolNotCalledCheck():
            passed = all(c.tool != check.tool for c in calls)
            detail = f"{check.tool} never called: {passed}"
        case OrderCheck():
            firsts: dict[str, int] = {}
            for i, c in enumerate(calls):
                firsts.setdefault(c.tool, i)
            positions = [firsts.get(t) for t in check.tools]
            seen = [p for p in positions if p is not None]
            passed = len(seen) == len(positions) and seen == sorted(seen)
            detail = f"first calls of {check.tools} at {positions}"
        case AnswerContainsCheck():
            missing = [v for v in check.values if not mentions(answer, v)]
            passed = not missing
            detail = "answer states all values" if passed else f"answer lacks {missing}"
        case AnswerExcludesCheck():
            found = [v for v in check.values if mentions(answer, v)]
            passed = not found
            detail = "answer avoids all values" if passed else f"answer states {found}"
        case StateEqualsCheck():
            actual = jsonpointer.resolve_pointer(state, check.path, _ABSENT) if state else _ABSENT
            passed = actual is not _ABSENT and actual == check.value
            detail = f"state at {check.path} is {'absent' if actual is _ABSENT else actual!r}"
    return CheckResult(check=check.model_dump(mode="json"), passed=passed, detail=detail)


def run_checks(
    checks: list[Check], calls: list[ToolCall], answer: str, state: dict[str, Any] | None = None
) -> list[CheckResult]:
    """Evaluate every check; all must pass for the checks verdict to pass."""
    return [run_check(check, calls, answer, state) for check in checks]


def needs_state(checks: list[Check] | None) -> bool:
    """Whether any check reads the final state (which only explicit state mode keeps)."""
    return any(isinstance(c, StateEqualsCheck) for c in checks or [])
