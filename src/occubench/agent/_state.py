"""What one sample's episode leaves in the log (Inspect store)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from inspect_ai.util import Store, StoreModel
from pydantic import Field

from occubench.faults import FaultPlan, InjectedFault
from occubench.simulator import SimStep


class StopReason(StrEnum):
    """Why the agent loop ended (a ``StrEnum``: shown as its value in reports)."""

    ANSWERED = "answered"
    """The agent replied without a tool call: its final answer."""
    TOOL_CALL_LIMIT = "tool_call_limit"
    """The agent reached the tool-call limit without answering."""
    SAMPLE_LIMIT = "sample_limit"
    """An Inspect limit (messages, tokens, time) ended the sample."""
    TURN_LIMIT = "turn_limit"
    """The agent used its model turns without answering."""
    FINISH_STOP = "finish_stop"
    """A turn that called tools finished with reason 'stop': the release's rule ends there."""
    AGENT_ERROR = "agent_error"
    """The agent's API failed (after retries); what exists is graded (the paper's rule)."""
    NOT_SUBMITTED = "not_submitted"
    """An MCP client or agent program ended the session without submitting an answer."""


class Episode(StoreModel):
    """Per-sample record of the interaction, kept in the log under ``Episode:*``.

    The log holds each field as JSON (a step without its None fields, a fault plan and
    the fault log with theirs, as before they were typed); reading a logged store
    (``episode_in``) gives the typed records back.
    """

    steps: list[SimStep] = Field(
        default_factory=list, description="Simulator history, in call order."
    )
    tool_calls: int = Field(default=0, description="Tool calls that reached the tool layer.")
    turns: int = Field(default=0, description="Model turns of the agent.")
    rejected_calls: int = Field(
        default=0,
        description="Tool calls answered with an error without reaching the tool layer "
        "(unknown tool, unreadable or invalid arguments, past the budget).",
    )
    agent_error: str | None = Field(
        default=None, description="The agent API failure that ended the loop, if one did."
    )
    state: dict[str, Any] | None = Field(
        default=None, description="Explicit state mode: the state after the last step."
    )
    stop_reason: StopReason | None = Field(default=None, description="Why the loop ended.")
    fault_plan: FaultPlan | None = Field(
        default=None, description="The fault plan injected by code (None: no code faults)."
    )
    fault_log: list[InjectedFault] = Field(
        default_factory=list, description="Every injected fault, in call order."
    )
    sim_checked: int | None = Field(
        default=None,
        description="Observations the online simulator checks looked at (None: checks off); "
        "a failed one's record is its step's ``check``.",
    )
    simulator_suspect: bool | None = Field(
        default=None,
        description="The trajectory kept an observation that failed an online simulator "
        "check (None: checks off).",
    )


def episode_in(store: dict[str, Any] | None) -> Episode:
    """The episode a logged sample's store holds (``sample.store``), typed."""
    return Episode(store=Store(dict(store or {})))
