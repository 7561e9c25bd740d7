"""Whether one tool call may go to the environment: the tool-call budget, then the argument rule.

The rule is stated here once and every caller asks it: the built-in loop (``AgentLoop``),
an episode driven from outside (``occubench.env.EnvEpisode``: the gym API, MCP clients,
agent programs), an Inspect agent's tools (``limited_tools``) and the play desk, which
shows the budget before the first move (its calls then pass the loop).

- The budget: at most ``max_tool_calls`` calls reach the environment (0: no cap; the
  paper has none, its cap is on model turns). A call past it is refused with the one
  message ``ToolBudget.refusal`` and never reaches the simulator.
- The argument rule (``occubench.agent._arguments``): under ``validate_tool_args`` an
  unknown tool or arguments that are unreadable or fail the tool's schema are refused,
  as a real API would answer; otherwise the agent's raw argument string is passed on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, NamedTuple

from inspect_ai.tool import ToolCallError
from pydantic import BaseModel, ConfigDict, Field

from occubench.agent._arguments import BadToolCall, CallProblem, checked_arguments, loose_arguments
from occubench.config import ProtocolPoints
from occubench.dataset import ToolSpec


class ToolBudget(BaseModel):
    """How many tool calls reach the environment (module doc)."""

    model_config = ConfigDict(frozen=True)

    cap: int = Field(ge=0, description="Tool calls allowed (0: no cap).")

    def spent(self, calls: int) -> bool:
        """Whether ``calls`` calls made use the budget up (never, without a cap)."""
        return bool(self.cap) and calls >= self.cap

    def refusal(self) -> str:
        """The one message a call past the budget gets."""
        return f"tool call limit of {self.cap} reached: this call was not run; give your answer"

    def note(self) -> str:
        """The budget as a person is told it before the first move (empty: no cap)."""
        return f"At most {self.cap} tool calls." if self.cap else ""


class AdmittedCall(NamedTuple):
    """A call the rule lets go: what the tool layer is given."""

    arguments: dict[str, Any]
    """The parsed arguments (checked under the occubench rule; {} when unreadable)."""
    raw: str | None
    """The agent's raw argument string passed to the simulator (the paper's rule), or None."""


class CallRule(BaseModel):
    """The budget and the argument rule of one run's protocol (module doc)."""

    model_config = ConfigDict(frozen=True)

    budget: ToolBudget = Field(description="The tool-call budget.")
    checks_arguments: bool = Field(description="Arguments are checked (occubench's rule).")

    @classmethod
    def of(cls, points: ProtocolPoints) -> CallRule:
        """The rule of a protocol's points."""
        return cls(
            budget=ToolBudget(cap=points.max_tool_calls),
            checks_arguments=points.validate_tool_args,
        )

    def admit(
        self,
        tools: Sequence[ToolSpec],
        calls: int,
        tool: str,
        arguments: str | Mapping[str, Any] | None,
        *,
        parse_error: str | None = None,
        raw: str | None = None,
    ) -> AdmittedCall:
        """The call as the tool layer takes it, once the budget and the argument rule let it go.

        Args:
            tools: The environment's tools.
            calls: The calls that reached the environment so far.
            tool: The tool called.
            arguments: A JSON object, its text, or None (no arguments).
            parse_error: The provider's own parse error of the arguments, if any.
            raw: The agent's argument string as it wrote it, when the caller keeps it
                apart from ``arguments`` (else it is read from them).

        Raises:
            BadToolCall: past the budget (``CallProblem.TOOL_CALL_LIMIT``), or arguments
                the occubench rule refuses.
        """
        if self.budget.spent(calls):
            raise BadToolCall(CallProblem.TOOL_CALL_LIMIT, self.budget.refusal())
        if not self.checks_arguments:
            loose = loose_arguments(arguments)
            return AdmittedCall(loose.parsed, loose.raw if raw is None else raw)
        if parse_error:
            raise BadToolCall(CallProblem.NOT_JSON, parse_error)
        return AdmittedCall(checked_arguments(tools, tool, arguments), None)


def refusal_error(bad: BadToolCall) -> ToolCallError:
    """The tool result's error of a refused call: ``limit`` past the budget, else ``parsing``."""
    kind: Literal["limit", "parsing"] = (
        "limit" if bad.problem is CallProblem.TOOL_CALL_LIMIT else "parsing"
    )
    return ToolCallError(kind, bad.message)
