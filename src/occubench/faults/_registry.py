"""The fault registry: E1, E2, E3 and every fault family, each an entry with the same hooks.

An entry (``FaultType``) has three hooks:

- ``place(context)``: the events it injects in one task, decided before the agent
  starts (seeded, see ``PlacementContext``);
- ``before(event, call)``: before the simulator is asked, an error observation that
  answers the call instead (the simulator is then not called), or None;
- ``after(event, call, observation)``: after the simulator answered, a changed copy of
  the observation for the agent (the simulator's history keeps the clean one), or None.

The E1-E3 entries and ``targeted`` inject the E1-E3 kinds (``FaultKind``: an explicit
kind errors before the simulator, an implicit kind degrades after it). To add a fault,
write its hooks and ``register_fault_type(FaultType(...))``; a family also needs its
name in ``FaultFamily`` so that run configurations can select it.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from occubench.faults._events import FaultEvent, Scope
from occubench.faults._injectors import degrade, explicit_error
from occubench.faults._kinds import EXPLICIT_KINDS, IMPLICIT_KINDS, FaultFamily, FaultKind
from occubench.faults._modes import EnvMode
from occubench.faults._placement import PlacementContext, spread_starts
from occubench.faults._seeding import seeded_rng
from occubench.faults._semantic import rewrite_observation

if TYPE_CHECKING:
    from inspect_ai.model import Model

CALL_SCHEME = "occubench-fault-call-v1"
"""Scope of the draws of one call's fault details (request ids, what is degraded)."""


@dataclass(frozen=True)
class SimulatorAccess:
    """The simulator role, for faults the simulator writes (``semantic``)."""

    model: Model
    retries: int
    cache: bool = False


@dataclass(frozen=True)
class Call:
    """One tool call, as a hook sees it."""

    index: int
    tool: str
    arguments: dict[str, Any]
    seed: int
    task_id: int | str
    key_fields: tuple[str, ...] = ()
    previous: Any = None
    """The last clean observation of the same call (same tool, same arguments), or None."""
    simulator: SimulatorAccess | None = None
    error_hints: bool = False
    """Explicit error bodies advise a retry (see ``explicit_error``)."""

    def rng(self) -> random.Random:
        """Fresh draws for this call's fault details (the same for every hook)."""
        return seeded_rng(CALL_SCHEME, seed=self.seed, task_id=self.task_id, call=self.index)


@dataclass(frozen=True)
class Injection:
    """What an ``after`` hook did to an observation."""

    observation: Any
    changes: list[str]
    applied: bool = True
    kind: FaultKind | None = None
    """The kind injected, when it is not the event's (the event's could not apply)."""


Placement = Callable[[PlacementContext], list[FaultEvent]]
BeforeHook = Callable[[FaultEvent, Call], dict[str, Any] | None]
AfterHook = Callable[[FaultEvent, Call, Any], Awaitable[Injection | None]]


@dataclass(frozen=True)
class FaultType:
    """One entry of the registry: how it places events and what they do to a call."""

    name: str
    description: str
    place: Placement
    before: BeforeHook | None = None
    after: AfterHook | None = None


FAULT_TYPES: dict[str, FaultType] = {}
"""Every registered entry by name: ``E1``-``E3`` and the ``FaultFamily`` values."""


def register_fault_type(entry: FaultType) -> FaultType:
    """Add an entry to the registry (its name must be new)."""
    if entry.name in FAULT_TYPES:
        raise ValueError(f"fault type {entry.name!r} is registered already")
    FAULT_TYPES[entry.name] = entry
    return entry


def fault_type(name: str) -> FaultType:
    """The registered entry of this name, or an error saying how to add one."""
    try:
        return FAULT_TYPES[name]
    except KeyError:
        known = ", ".join(FAULT_TYPES)
        raise ValueError(
            f"unknown fault type {name!r}; known: {known}. To add one, write its hooks "
            "(place, before, after) and call register_fault_type(FaultType(...)) in "
            "occubench/faults/_registry.py; a family also needs its name in FaultFamily."
        ) from None


# --- the E1-E3 kinds: explicit errors before the simulator, degradations after it ------


def kind_error(event: FaultEvent, call: Call) -> dict[str, Any] | None:
    """An explicit kind's error observation (None for implicit kinds)."""
    if event.kind is None or not event.kind.is_explicit:
        return None
    return explicit_error(event.kind, call.tool, call.rng(), hints=call.error_hints)


async def kind_degradation(event: FaultEvent, call: Call, observation: Any) -> Injection | None:
    """An implicit kind's degraded copy of the observation (None for explicit kinds).

    No event is a silent no-op: when the event's kind finds nothing to change in this
    observation (no list to cut, no field to age, ...), the other implicit kinds are
    tried in a seeded order and the first that changes something is injected; the log
    names the kind injected and the one planned. Only an observation no implicit kind can
    change (say, nothing but identifiers) is left as it is, logged as not applied.
    """
    if event.kind is None or event.kind.is_explicit:
        return None
    others = [k for k in IMPLICIT_KINDS if k is not event.kind]
    call.rng().shuffle(others)
    for kind in [event.kind, *others]:
        result = degrade(kind, observation, call.rng(), call.previous, call.key_fields)
        if result.applied:
            switched = kind is not event.kind
            changes = result.changes + (
                [f"planned {event.kind.value} could not apply; injected {kind.value}"]
                if switched
                else []
            )
            return Injection(result.observation, changes, True, kind if switched else None)
    return Injection(observation, ["nothing in the observation to degrade"], applied=False)


def _draw_kinds(rng: random.Random, mode: EnvMode, count: int) -> list[FaultKind]:
    """The kind of each event: E1 explicit, E2 implicit, E3 half of each (shuffled)."""
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


def _mode_placement(mode: EnvMode) -> Placement:
    """Place an env mode's events: one per equal segment of the span, kinds drawn after."""

    def place(ctx: PlacementContext) -> list[FaultEvent]:
        if ctx.fault_count == 0:
            return []
        rng = ctx.mode_rng()
        starts = spread_starts(rng, ctx.fault_count, ctx.fault_duration, ctx.span)
        kinds = _draw_kinds(rng, mode, ctx.fault_count)
        return [
            FaultEvent(source=mode.value, start_call=s, duration=ctx.fault_duration, kind=k)
            for s, k in zip(starts, kinds, strict=True)
        ]

    return place


for _mode, _what in (
    (EnvMode.E1, "explicit errors: HTTP 500, timeout, connection refused, unavailable"),
    (EnvMode.E2, "silent degradation: truncated lists, missing or null fields, stale values"),
    (EnvMode.E3, "mixed: about half explicit, half implicit"),
):
    register_fault_type(
        FaultType(
            name=_mode.value,
            description=_what,
            place=_mode_placement(_mode),
            before=kind_error,
            after=kind_degradation,
        )
    )


# --- the families ------------------------------------------------------------------------


def _windows(family: FaultFamily, ctx: PlacementContext, **extra: Any) -> list[FaultEvent]:
    """``fault_count`` windows of ``fault_duration`` calls, spread over the span."""
    starts = spread_starts(
        ctx.family_rng(family.value), ctx.fault_count, ctx.fault_duration, ctx.spread
    )
    return [
        FaultEvent(source=family.value, start_call=s, duration=ctx.fault_duration, **extra)
        for s in starts
    ]


def _place_persistent(ctx: PlacementContext) -> list[FaultEvent]:
    candidates = sorted({c.tool for c in ctx.critical_calls}) or sorted(ctx.tools)
    if not candidates:
        return []
    rng = ctx.family_rng(FaultFamily.PERSISTENT.value)
    return [
        FaultEvent(
            source=FaultFamily.PERSISTENT.value,
            scope=Scope.FROM_CALL,
            tool=rng.choice(candidates),
            start_call=rng.randint(0, max(0, ctx.spread // 2 - 1)),
            duration=None,
        )
    ]


def _place_targeted(ctx: PlacementContext) -> list[FaultEvent]:
    rng = ctx.family_rng(FaultFamily.TARGETED.value)
    chosen = rng.sample(list(ctx.critical_calls), min(ctx.fault_count, len(ctx.critical_calls)))
    classes = [EXPLICIT_KINDS, IMPLICIT_KINDS] * len(chosen)
    rng.shuffle(classes)
    return [
        FaultEvent(
            source=FaultFamily.TARGETED.value,
            scope=Scope.MATCHING,
            tool=call.tool,
            arguments=call.arguments,
            duration=ctx.fault_duration,
            kind=rng.choice(kinds),
        )
        for call, kinds in zip(chosen, classes, strict=False)
    ]


def _outage(code: str, message: Callable[[Call, random.Random], str]) -> BeforeHook:
    """A before-hook answering with a 503 error body of ``code`` (request id, then message)."""

    def error(event: FaultEvent, call: Call) -> dict[str, Any]:
        rng = call.rng()
        request_id = f"req_{rng.getrandbits(48):012x}"
        return {
            "error": {
                "status": 503,
                "code": code,
                "request_id": request_id,
                "message": message(call, rng),
            }
        }

    return error


_service_down = _outage(
    "SERVICE_DOWN",
    lambda call, rng: (
        f"The {call.tool} service is down for unplanned maintenance; no "
        "recovery time is known. Contact operations to escalate."
    ),
)
_dependency_down = _outage(
    "DEPENDENCY_FAILURE",
    lambda call, rng: (
        f"The {call.tool} service cannot serve requests: its dependency "
        f"{rng.choice(('core-db', 'auth-gateway', 'message-bus', 'storage-cluster'))} "
        "is unavailable."
    ),
)


async def _semantic(event: FaultEvent, call: Call, observation: Any) -> Injection | None:
    if call.simulator is None:
        return None
    access = call.simulator
    altered = await rewrite_observation(
        access.model, call.tool, observation, retries=access.retries, cache=access.cache
    )
    changes = changed_paths(observation, altered)
    return Injection(altered, changes, applied=bool(changes))


async def _latency(event: FaultEvent, call: Call, observation: Any) -> Injection | None:
    if not event.delay_seconds:
        return None
    await asyncio.sleep(event.delay_seconds)
    return Injection(observation, [f"answered {event.delay_seconds:g} s late"])


FAMILY_TYPES = (
    FaultType(
        name=FaultFamily.PERSISTENT.value,
        description="one tool goes down from some call on and stays down",
        place=_place_persistent,
        before=_service_down,
    ),
    FaultType(
        name=FaultFamily.CASCADING.value,
        description="a shared dependency fails: every tool fails together for fd calls",
        place=lambda ctx: _windows(FaultFamily.CASCADING, ctx),
        before=_dependency_down,
    ),
    FaultType(
        name=FaultFamily.TARGETED.value,
        description="faults on the plan's critical calls, half explicit, half implicit",
        place=_place_targeted,
        before=kind_error,
        after=kind_degradation,
    ),
    FaultType(
        name=FaultFamily.SEMANTIC.value,
        description="the simulator rewrites the observation with subtly wrong values",
        place=lambda ctx: _windows(FaultFamily.SEMANTIC, ctx),
        after=_semantic,
    ),
    FaultType(
        name=FaultFamily.LATENCY.value,
        description="the right answer, late",
        place=lambda ctx: _windows(FaultFamily.LATENCY, ctx, delay_seconds=ctx.latency_seconds),
        after=_latency,
    ),
)
"""The families' entries, registered below (one per ``FaultFamily``)."""

for _entry in FAMILY_TYPES:
    register_fault_type(_entry)


def changed_paths(before: Any, after: Any, path: str = "$") -> list[str]:
    """Where two JSON values differ, as ``changed $.a.b[2]`` lines (for the fault log)."""
    if isinstance(before, dict) and isinstance(after, dict):
        keys = list(dict.fromkeys([*before, *after]))
        return [p for k in keys for p in changed_paths(before.get(k), after.get(k), f"{path}.{k}")]
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [
            p
            for i, (a, b) in enumerate(zip(before, after, strict=True))
            for p in changed_paths(a, b, f"{path}[{i}]")
        ]
    return [] if before == after else [f"changed {path}"]
