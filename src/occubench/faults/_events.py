"""The fault event: one fault decided before the agent starts, and a task's plan of them."""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import Field

from occubench.faults._kinds import FaultKind
from occubench.faults._modes import EnvMode
from occubench.records import NullsKept


class Scope(str, Enum):  # noqa: UP042 - same str-Enum style as EnvMode
    """Which tool calls an event acts on."""

    WINDOW = "window"
    """Calls ``start_call`` to ``start_call + duration - 1`` (of ``tool`` only, if set)."""
    FROM_CALL = "from_call"
    """Calls of ``tool`` from ``start_call`` on, to the end of the task."""
    MATCHING = "matching"
    """The first ``duration`` calls of ``tool`` with exactly ``arguments``."""


class FaultEvent(NullsKept):
    """One fault, placed by a registry entry (an env mode or a family) before the agent starts.

    ``source`` is a name of the fault registry, an open set (``register_fault_type``),
    so it is text; the E1-E3 ``kind`` is a ``FaultKind``.
    """

    source: str = Field(description="Registry entry that placed it: E1-E3 or a family name.")
    scope: Scope = Field(default=Scope.WINDOW, description="Which calls it acts on.")
    start_call: int = Field(default=0, ge=0, description="0-based index of its first call.")
    duration: int | None = Field(
        default=1, ge=1, description="Calls it lasts (matching: calls it hits); None: to the end."
    )
    kind: FaultKind | None = Field(
        default=None, description="What it does, for entries that inject the E1-E3 kinds."
    )
    tool: str | None = Field(default=None, description="The tool it acts on (None: any).")
    arguments: dict[str, Any] | None = Field(
        default=None, description="Matching scope: the call's exact arguments."
    )
    delay_seconds: float | None = Field(default=None, description="Latency: the added delay.")

    def covers(self, call_index: int) -> bool:
        """Whether the call index falls in the event's calls (window and from-call scopes).

        A matching event depends on the calls' arguments and on how often it hit; the
        session decides those (``FaultSession``).
        """
        if call_index < self.start_call:
            return False
        return self.duration is None or call_index < self.start_call + self.duration

    def label(self) -> str:
        """What the fault log calls it: its kind, else its source."""
        return self.kind.value if self.kind is not None else self.source


class FaultPlan(NullsKept):
    """All fault events of one task, decided before the agent starts (``Episode.fault_plan``)."""

    env_mode: EnvMode = Field(description="Environment mode the plan was made for.")
    fault_count: int = Field(description="Fault events requested (E0 ignores it).")
    fault_duration: int = Field(description="Consecutive calls each fault event lasts.")
    seed: int = Field(description="Run seed the plan was derived from.")
    task_id: int | str = Field(description="Task the plan belongs to.")
    expected_calls: int = Field(
        description="Tool calls the task is expected to take; events are spread over them."
    )
    events: list[FaultEvent] = Field(
        description="Fault events: the env mode's, ordered by start call, then each family's."
    )

    @property
    def span(self) -> int:
        """Calls the env mode's events fill: ``fault_count * (fault_duration + 1)``.

        Each event has its own segment of ``fault_duration + 1`` calls with one clean call
        in it, so an agent making at least this many calls meets every event.
        """
        return self.fault_count * (self.fault_duration + 1)

    def fault_at(self, call_index: int) -> FaultEvent | None:
        """The env mode's window event affecting a tool call, or None when the call is clean."""
        for event in self.events:
            if event.source == self.env_mode.value and event.covers(call_index):
                return event
        return None
