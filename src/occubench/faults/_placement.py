"""Where faults land: what a registry entry may use to place its events."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from occubench.dataset import PlanStep
from occubench.faults._modes import EnvMode
from occubench.faults._seeding import seeded_rng

PLAN_SCHEME = "occubench-fault-plan-v2"
"""Scope of an env mode's placement draws; bump it when the placement algorithm changes.

v2: the events of E1-E3 fill the first ``fault_count * (fault_duration + 1)`` calls, so an
agent making that many calls meets every event (v1 spread them over the expected calls,
and an agent that finished early could miss the last ones)."""

FAMILY_SCHEME = "occubench-fault-family-v2"
"""Scope of a family's placement draws; bump it when a family's placement changes."""


@dataclass(frozen=True)
class PlacementContext:
    """One task's fault settings and what its plan says about the calls to come."""

    seed: int
    task_id: int | str
    env_mode: EnvMode
    fault_count: int
    fault_duration: int
    expected_calls: int
    tools: Sequence[str] = ()
    critical_calls: Sequence[PlanStep] = field(default_factory=tuple)
    latency_seconds: float = 0.0

    @property
    def span(self) -> int:
        """Calls an env mode's events fill: ``fault_count`` segments of ``fault_duration + 1``.

        An agent that makes at least this many tool calls meets every event.
        """
        return self.fault_count * (self.fault_duration + 1)

    @property
    def spread(self) -> int:
        """Calls a family's windows are spread over: the expected calls, or enough for all."""
        return max(self.expected_calls, self.span)

    def mode_rng(self) -> random.Random:
        """The draws of the env mode's plan (placement, then kinds)."""
        return self._draws(PLAN_SCHEME, env_mode=self.env_mode.value)

    def family_rng(self, family: str) -> random.Random:
        """The draws of one family's placement."""
        return self._draws(FAMILY_SCHEME, family=family)

    def _draws(self, scheme: str, **extra: str) -> random.Random:
        return seeded_rng(
            scheme,
            seed=self.seed,
            task_id=self.task_id,
            fault_count=self.fault_count,
            fault_duration=self.fault_duration,
            expected_calls=self.expected_calls,
            **extra,
        )


def spread_starts(rng: random.Random, count: int, duration: int, span: int) -> list[int]:
    """One start per equal segment of ``[0, span)``, each event fitting its segment.

    Every event but the last keeps one clean call before the next segment, so
    consecutive events never touch and a retry after an event can succeed.
    """
    starts = []
    for i in range(count):
        seg_start = i * span // count
        seg_end = (i + 1) * span // count
        last_start = seg_end - duration - (0 if i == count - 1 else 1)
        starts.append(rng.randint(seg_start, last_start))
    return starts
