"""Seeded fault plans: which tool calls of a task fail, and how.

A plan depends only on its arguments, through a SHA-256 hash, so the same run
configuration injects the same faults on any machine and any Python process.
"""

from __future__ import annotations

import hashlib
import json
import random

from pydantic import BaseModel, Field

from occubench.defaults import DEFAULT_EXPECTED_TOOL_CALLS
from occubench.faults._kinds import EXPLICIT_KINDS, IMPLICIT_KINDS, FaultKind
from occubench.faults._modes import EnvMode

_PLAN_SCHEME = "occubench-fault-plan-v1"
"""Tag hashed into every plan seed; bump it when the placement algorithm changes."""


class FaultEvent(BaseModel):
    """A fault that lasts for a run of consecutive tool calls."""

    start_call: int = Field(
        ge=0, description="0-based index of the agent's tool call where the fault starts."
    )
    duration: int = Field(ge=1, description="Consecutive tool calls the fault lasts.")
    kind: FaultKind = Field(description="What the fault does to each call it covers.")

    def covers(self, call_index: int) -> bool:
        """Tell whether the fault affects the given tool call.

        Args:
            call_index: 0-based index of the agent's tool call in the task.

        Returns:
            True when the call falls inside the fault's run of calls.

        """
        return self.start_call <= call_index < self.start_call + self.duration


class FaultPlan(BaseModel):
    """All fault events of one task, decided before the agent starts."""

    env_mode: EnvMode = Field(description="Environment mode the plan was made for.")
    fault_count: int = Field(description="Fault events requested (E0 ignores it).")
    fault_duration: int = Field(description="Consecutive calls each fault event lasts.")
    seed: int = Field(description="Run seed the plan was derived from.")
    task_id: int | str = Field(description="Task the plan belongs to.")
    expected_calls: int = Field(
        description="Tool calls the task is expected to take; events are spread over them."
    )
    events: list[FaultEvent] = Field(description="Fault events, ordered by start call.")

    @property
    def span(self) -> int:
        """Calls the events were spread over.

        This is ``expected_calls``, raised to ``fault_count * (fault_duration + 1)``
        when that is too small to hold every event plus one clean call after each.
        """
        return max(self.expected_calls, self.fault_count * (self.fault_duration + 1))

    def fault_at(self, call_index: int) -> FaultEvent | None:
        """Find the fault event affecting a tool call.

        Args:
            call_index: 0-based index of the agent's tool call in the task.

        Returns:
            The covering event, or None when the call is clean.

        """
        for event in self.events:
            if event.covers(call_index):
                return event
        return None


def make_fault_plan(
    *,
    seed: int,
    task_id: int | str,
    env_mode: EnvMode | str,
    fault_count: int,
    fault_duration: int,
    expected_calls: int | None = None,
) -> FaultPlan:
    """Build the deterministic fault plan of one task.

    The range ``[0, span)`` (see ``FaultPlan.span``) is cut into ``fault_count``
    equal segments and one event is placed at a seeded offset inside each, so
    faults are spread over the interaction. Every event but the last leaves the
    final call of its segment clean, so consecutive events never touch. E1 draws
    explicit kinds, E2 implicit kinds, E3 half of each (the odd one out is a
    seeded coin flip); a kind is drawn uniformly within its class.

    Args:
        seed: Run seed.
        task_id: Task id; different tasks get independent plans.
        env_mode: Environment mode; E0 gives a plan without events.
        fault_count: Number of fault events (>= 0).
        fault_duration: Consecutive calls each event lasts (>= 1).
        expected_calls: Calls the task is expected to take (>= 1); defaults to
            ``DEFAULT_EXPECTED_TOOL_CALLS``.

    Returns:
        The plan; the same arguments give the same plan on any machine.

    Raises:
        ValueError: On an unknown env mode or an out-of-range count.

    """
    try:
        mode = EnvMode(env_mode)
    except ValueError:
        valid = ", ".join(m.value for m in EnvMode)
        raise ValueError(f"unknown env_mode {env_mode!r}; expected one of {valid}") from None
    if fault_count < 0:
        raise ValueError(f"fault_count must be >= 0, got {fault_count}")
    if fault_duration < 1:
        raise ValueError(f"fault_duration must be >= 1, got {fault_duration}")
    calls = DEFAULT_EXPECTED_TOOL_CALLS if expected_calls is None else expected_calls
    if calls < 1:
        raise ValueError(f"expected_calls must be >= 1, got {calls}")

    plan = FaultPlan(
        env_mode=mode,
        fault_count=fault_count,
        fault_duration=fault_duration,
        seed=seed,
        task_id=task_id,
        expected_calls=calls,
        events=[],
    )
    if mode is EnvMode.E0 or fault_count == 0:
        return plan
    rng = random.Random(_plan_seed(plan))
    starts = _place_starts(rng, fault_count, fault_duration, plan.span)
    kinds = _draw_kinds(rng, mode, fault_count)
    events = [
        FaultEvent(start_call=start, duration=fault_duration, kind=kind)
        for start, kind in zip(starts, kinds, strict=True)
    ]
    return plan.model_copy(update={"events": events})


def _plan_seed(plan: FaultPlan) -> int:
    """Derive a plan's RNG seed from a SHA-256 of its canonical settings."""
    canonical = json.dumps(
        {
            "scheme": _PLAN_SCHEME,
            "seed": plan.seed,
            "task_id": plan.task_id,
            "env_mode": plan.env_mode.value,
            "fault_count": plan.fault_count,
            "fault_duration": plan.fault_duration,
            "expected_calls": plan.expected_calls,
        },
        sort_keys=True,
        separators=(",", ":"),
    )
    digest = hashlib.sha256(canonical.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")


def _place_starts(rng: random.Random, count: int, duration: int, span: int) -> list[int]:
    """Pick one start per equal segment of ``[0, span)``; each event fits its segment."""
    starts = []
    for i in range(count):
        seg_start = i * span // count
        seg_end = (i + 1) * span // count
        # All but the last event keep one clean call before the next segment.
        last_start = seg_end - duration - (0 if i == count - 1 else 1)
        starts.append(rng.randint(seg_start, last_start))
    return starts


def _draw_kinds(rng: random.Random, mode: EnvMode, count: int) -> list[FaultKind]:
    """Draw the kind of each event for a faulty mode."""
    if mode is EnvMode.E1:
        classes = [EXPLICIT_KINDS] * count
    elif mode is EnvMode.E2:
        classes = [IMPLICIT_KINDS] * count
    else:
        classes = [EXPLICIT_KINDS, IMPLICIT_KINDS] * (count // 2)
        if count % 2:
            classes.append(rng.choice((EXPLICIT_KINDS, IMPLICIT_KINDS)))
        rng.shuffle(classes)
    return [rng.choice(kinds) for kinds in classes]
