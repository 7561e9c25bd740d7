"""What one sample's episode leaves in the log (Inspect store)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from functools import cache
from typing import Any, get_args, get_origin

from inspect_ai.util import Store, StoreModel
from pydantic import Field, TypeAdapter, ValidationError

from occubench.faults import FaultPlan, InjectedFault
from occubench.simulator import SimStep
from occubench.text import validation_line
from occubench.users import UserTurn


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
    USER_ENDED = "user_ended"
    """A task with a user: the user ended the conversation (the agent's last message is
    its final answer)."""
    USER_TURN_LIMIT = "user_turn_limit"
    """A task with a user: the user's turn budget was spent without the user ending the
    conversation (the agent's last message is its final answer)."""


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
    user_turns: list[UserTurn] | None = Field(
        default=None,
        description="A task with a user: the user's turns, in order, each with the checks "
        "its reply still fails (user errors); None: the task has no user.",
    )
    simulator_suspect: bool | None = Field(
        default=None,
        description="The trajectory kept an observation that failed an online simulator "
        "check (None: checks off).",
    )


EPISODE_KEYS: dict[str, str] = {
    key.rpartition(":")[2]: key for key in Episode(store=Store()).store.keys()
}
"""Each ``Episode`` field's key in a sample's store (``steps``: ``Episode:steps``)."""


@cache
def _field_reader(name: str) -> tuple[TypeAdapter[Any], Any, TypeAdapter[Any] | None]:
    """One ``Episode`` field's validator, its default, and its items' validator (a list)."""
    field = Episode.model_fields[name]
    annotation = field.annotation or Any
    items = TypeAdapter(get_args(annotation)[0]) if get_origin(annotation) is list else None
    return TypeAdapter(annotation), field.get_default(call_default_factory=True), items


def episode_fields(
    store: Mapping[str, Any], names: Iterable[str] | None = None
) -> tuple[dict[str, Any], list[str]]:
    """Episode fields from a logged store, each read on its own; and what could not be read.

    A log may hold a record that this version cannot read (written by a version with a
    bug, or edited). Such a record is left out, never the whole sample: a field that
    cannot be read takes its default, a list keeps the items that can be read. Each
    record left out is named (``steps[2]: check.kept: Input should be 'first' or
    'reask'``).

    Args:
        store: The sample's store as logged (``sample.store``).
        names: The fields to read (None: every field).
    """
    found: dict[str, Any] = {}
    unread: list[str] = []
    for name in EPISODE_KEYS if names is None else names:
        adapter, default, items = _field_reader(name)
        key = EPISODE_KEYS[name]
        if key not in store:
            found[name] = default
            continue
        value = store[key]
        try:
            found[name] = adapter.validate_python(value)
        except ValidationError as e:
            if items is None or not isinstance(value, list):
                found[name] = default
                unread.append(f"{name}: {validation_line(e)}")
                continue
            kept = []
            for i, item in enumerate(value):
                try:
                    kept.append(items.validate_python(item))
                except ValidationError as item_error:
                    unread.append(f"{name}[{i}]: {validation_line(item_error)}")
            found[name] = kept
    return found, unread


def read_episode(store: Mapping[str, Any] | None) -> tuple[Episode, list[str]]:
    """The episode a logged sample's store holds, typed; and the records left out of it.

    See ``episode_fields``: a record this version cannot read is left out and named.
    """
    values, unread = episode_fields(store or {})
    episode = Episode(store=Store({EPISODE_KEYS[name]: v for name, v in values.items()}))
    return episode, unread


def episode_in(store: Mapping[str, Any] | None) -> Episode:
    """The episode a logged sample's store holds (``sample.store``), typed.

    A record that cannot be read is left out (``read_episode`` names them).
    """
    return read_episode(store)[0]
