"""Fault families beyond E0-E3, selectable by name and mixable (``--faults a,b``).

- ``persistent``: one tool goes down from some call on and stays down for the rest of
  the task; the right behaviour is to escalate or work around it, not retry forever.
- ``cascading``: a shared dependency fails, so every tool fails together for
  ``fault_duration`` calls (``fault_count`` times).
- ``targeted``: faults land on the calls the task's plan marks as critical (the first
  ``fault_duration`` calls matching up to ``fault_count`` critical steps), half
  explicit, half implicit.
- ``semantic``: valid JSON with subtly wrong values (a unit swap, a shifted date),
  written by the simulator role under instruction (``fault_count`` windows of
  ``fault_duration`` calls).
- ``latency``: the right answer, late (``fault_count`` windows of ``fault_duration``
  calls, each delayed by the latency setting).

Each family is data (``FamilyEvent``) built by a seeded function registered in
``FAMILIES``; to add one, write a builder here and register it.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from pydantic import BaseModel, Field

from occubench.faults._kinds import EXPLICIT_KINDS, IMPLICIT_KINDS, FaultKind
from occubench.faults._plan import _place_starts

_SCHEME = "occubench-fault-family-v1"


class FaultFamily(str, Enum):
    """Named fault families (see module docstring)."""

    PERSISTENT = "persistent"
    CASCADING = "cascading"
    TARGETED = "targeted"
    SEMANTIC = "semantic"
    LATENCY = "latency"


class FamilyEvent(BaseModel):
    """One fault of a family, decided before the agent starts."""

    family: FaultFamily = Field(description="The family that placed it.")
    start_call: int = Field(default=0, ge=0, description="First call index it can act on.")
    duration: int | None = Field(
        default=None, description="Calls it lasts (targeted: matching calls); None: to the end."
    )
    tool: str | None = Field(default=None, description="Tool it acts on (persistent, targeted).")
    arguments: dict[str, Any] | None = Field(
        default=None, description="Targeted: the critical call's arguments."
    )
    kind: FaultKind | None = Field(default=None, description="Targeted: the fault it injects.")
    delay_seconds: float | None = Field(default=None, description="Latency: added delay.")

    def covers(self, index: int) -> bool:
        """Whether call ``index`` falls in the event's window (window families)."""
        end = None if self.duration is None else self.start_call + self.duration
        return index >= self.start_call and (end is None or index < end)


@dataclass
class FamilyContext:
    """What a family builder may use to place its events."""

    seed: int
    task_id: int | str
    fault_count: int
    fault_duration: int
    expected_calls: int
    tools: list[str]
    critical_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    latency_seconds: float = 0.0

    @property
    def span(self) -> int:
        """Calls the events are spread over (as for E1-E3 plans)."""
        return max(self.expected_calls, self.fault_count * (self.fault_duration + 1))


Builder = Callable[[random.Random, FamilyContext], list[FamilyEvent]]


def _windows(
    family: FaultFamily, rng: random.Random, ctx: FamilyContext, **extra: Any
) -> list[FamilyEvent]:
    starts = _place_starts(rng, ctx.fault_count, ctx.fault_duration, ctx.span)
    return [
        FamilyEvent(family=family, start_call=s, duration=ctx.fault_duration, **extra)
        for s in starts
    ]


def _persistent(rng: random.Random, ctx: FamilyContext) -> list[FamilyEvent]:
    candidates = sorted({t for t, _ in ctx.critical_calls}) or sorted(ctx.tools)
    if not candidates:
        return []
    return [
        FamilyEvent(
            family=FaultFamily.PERSISTENT,
            tool=rng.choice(candidates),
            start_call=rng.randint(0, max(0, ctx.span // 2 - 1)),
        )
    ]


def _targeted(rng: random.Random, ctx: FamilyContext) -> list[FamilyEvent]:
    chosen = rng.sample(ctx.critical_calls, min(ctx.fault_count, len(ctx.critical_calls)))
    classes = [EXPLICIT_KINDS, IMPLICIT_KINDS] * len(chosen)
    rng.shuffle(classes)
    return [
        FamilyEvent(
            family=FaultFamily.TARGETED,
            tool=tool,
            arguments=arguments,
            duration=ctx.fault_duration,
            kind=rng.choice(kinds),
        )
        for (tool, arguments), kinds in zip(chosen, classes, strict=False)
    ]


FAMILIES: dict[FaultFamily, Builder] = {
    FaultFamily.PERSISTENT: _persistent,
    FaultFamily.CASCADING: lambda rng, ctx: _windows(FaultFamily.CASCADING, rng, ctx),
    FaultFamily.TARGETED: _targeted,
    FaultFamily.SEMANTIC: lambda rng, ctx: _windows(FaultFamily.SEMANTIC, rng, ctx),
    FaultFamily.LATENCY: lambda rng, ctx: _windows(
        FaultFamily.LATENCY, rng, ctx, delay_seconds=ctx.latency_seconds
    ),
}
"""Builders by family; register a new family here."""


def parse_families(value: str | Sequence[str] | None) -> list[FaultFamily]:
    """Family names from a list or a comma-separated string, with a helpful error."""
    if value is None:
        return []
    names = value.split(",") if isinstance(value, str) else list(value)
    families = []
    for name in (n.strip() for n in names if n.strip()):
        try:
            families.append(FaultFamily(name))
        except ValueError:
            known = ", ".join(f.value for f in FaultFamily)
            raise ValueError(
                f"unknown fault family {name!r}; known: {known}. To add one, write a builder "
                "in occubench/faults/_taxonomy.py and register it in FAMILIES."
            ) from None
    return families


def make_family_events(families: Sequence[FaultFamily], ctx: FamilyContext) -> list[FamilyEvent]:
    """The events of every selected family for one task (seeded, machine-independent)."""
    events: list[FamilyEvent] = []
    for family in families:
        canonical = json.dumps(
            {
                "scheme": _SCHEME,
                "family": family.value,
                "seed": ctx.seed,
                "task_id": ctx.task_id,
                "fault_count": ctx.fault_count,
                "fault_duration": ctx.fault_duration,
                "expected_calls": ctx.expected_calls,
            },
            sort_keys=True,
        )
        rng = random.Random(int.from_bytes(hashlib.sha256(canonical.encode()).digest()[:8], "big"))
        events += FAMILIES[family](rng, ctx)
    return events


def family_error(event: FamilyEvent, tool: str, rng: random.Random) -> dict[str, Any]:
    """The error observation of an explicit family fault."""
    request_id = f"req_{rng.getrandbits(48):012x}"
    if event.family is FaultFamily.PERSISTENT:
        return {
            "error": {
                "status": 503,
                "code": "SERVICE_DOWN",
                "request_id": request_id,
                "message": f"The {tool} service is down for unplanned maintenance; no recovery "
                "time is known. Contact operations to escalate.",
            }
        }
    dependency = rng.choice(("core-db", "auth-gateway", "message-bus", "storage-cluster"))
    return {
        "error": {
            "status": 503,
            "code": "DEPENDENCY_FAILURE",
            "request_id": request_id,
            "message": f"The {tool} service cannot serve requests: its dependency {dependency} "
            "is unavailable.",
        }
    }
