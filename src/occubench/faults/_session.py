"""Fault settings of a run and the per-sample injector the tool layer calls.

Explicit faults answer the agent with an error and the simulator is never called
(its history notes the failure, so the state does not advance). Implicit faults let
the simulator produce the clean observation, which its history keeps, and hand the
agent a degraded copy. Faults are transient unless their family says otherwise
(``persistent``): the plan covers fixed call indexes, so a call after an event's
calls are used up is clean.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from occubench.defaults import (
    DEFAULT_ENV_MODE,
    DEFAULT_FAULT_COUNT,
    DEFAULT_FAULT_DURATION,
    DEFAULT_FAULT_ENGINE,
    DEFAULT_FAULT_LATENCY,
    DEFAULT_SEED,
)
from occubench.faults._injectors import degrade, explicit_error
from occubench.faults._modes import EnvMode, FaultEngine
from occubench.faults._plan import FaultPlan, make_fault_plan
from occubench.faults._prompt_rules import prompt_fault_rules
from occubench.faults._taxonomy import (
    FamilyContext,
    FamilyEvent,
    FaultFamily,
    family_error,
    make_family_events,
)

Corrupter = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
"""Writes a subtly wrong copy of an observation (semantic faults; the simulator role)."""


class InjectedFault(BaseModel):
    """One fault as injected, for the log."""

    call_index: int = Field(description="0-based index of the agent's tool call.")
    tool: str = Field(description="Tool the call went to.")
    kind: str = Field(description="FaultKind value, or the family name for family faults.")
    family: str | None = Field(default=None, description="Fault family, None for E1-E3.")
    explicit: bool = Field(description="An error observation (True) or a changed one.")
    applied: bool = Field(description="False when the observation had nothing to change.")
    changes: list[str] = Field(description="What the agent's copy differs in.")
    seen_by_agent: Any = Field(description="The observation the agent got.")
    retried_later: bool = Field(
        default=False, description="The agent called the same tool again afterwards."
    )


class FaultSettings(BaseModel):
    """How a run injects faults: the settings that decide every sample's plan."""

    model_config = ConfigDict(extra="forbid")

    env_mode: EnvMode = Field(
        default=EnvMode(DEFAULT_ENV_MODE),
        description="E0 clean, E1 explicit errors, E2 silent degradation, E3 mixed.",
    )
    fault_count: int = Field(
        default=DEFAULT_FAULT_COUNT, ge=0, description="Fault events per task (E1-E3)."
    )
    fault_duration: int = Field(
        default=DEFAULT_FAULT_DURATION,
        ge=1,
        description="Consecutive tool calls each fault event covers.",
    )
    fault_engine: FaultEngine = Field(
        default=FaultEngine(DEFAULT_FAULT_ENGINE),
        description="code: a seeded plan, faults made and logged by code; prompt: fault "
        "rules appended to the simulator's prompt (the paper's way).",
    )
    faults: list[FaultFamily] = Field(
        default_factory=list,
        description="Extra fault families, mixable, always injected by code: persistent, "
        "cascading, targeted, semantic, latency.",
    )
    fault_latency: float = Field(
        default=DEFAULT_FAULT_LATENCY, ge=0, description="Seconds a latency fault delays."
    )
    seed: int = Field(default=DEFAULT_SEED, description="Seed of the fault plans.")

    def simulator_rules(self) -> str:
        """Text appended to the simulator prompt (the prompt engine only)."""
        if self.fault_engine is not FaultEngine.PROMPT:
            return ""
        return prompt_fault_rules(self.env_mode, self.fault_count, self.fault_duration)

    def session(
        self,
        task_id: int | str,
        expected_calls: int | None,
        key_fields: Sequence[str] = (),
        *,
        tools: Sequence[str] = (),
        critical_calls: Sequence[tuple[str, dict[str, Any]]] = (),
        corrupter: Corrupter | None = None,
    ) -> FaultSession | None:
        """The injector for one sample, or None when nothing is injected by code.

        E1-E3 events come from the seeded plan (code engine only); family events
        (always by code) are added to them.
        """
        code_modes = self.env_mode is not EnvMode.E0 and self.fault_engine is FaultEngine.CODE
        if not code_modes and not self.faults:
            return None
        plan = make_fault_plan(
            seed=self.seed,
            task_id=task_id,
            env_mode=self.env_mode if code_modes else EnvMode.E0,
            fault_count=self.fault_count,
            fault_duration=self.fault_duration,
            expected_calls=expected_calls,
        )
        context = FamilyContext(
            seed=self.seed,
            task_id=task_id,
            fault_count=self.fault_count,
            fault_duration=self.fault_duration,
            expected_calls=plan.expected_calls,
            tools=list(tools),
            critical_calls=list(critical_calls),
            latency_seconds=self.fault_latency,
        )
        families = make_family_events(self.faults, context)
        return FaultSession(plan, key_fields, families=families, corrupter=corrupter)


class FaultSession:
    """Applies one sample's faults, call by call, and logs what it did."""

    def __init__(
        self,
        plan: FaultPlan,
        key_fields: Sequence[str] = (),
        *,
        families: Sequence[FamilyEvent] = (),
        corrupter: Corrupter | None = None,
    ) -> None:
        self.plan = plan
        self.families = list(families)
        self.key_fields = tuple(key_fields)
        self.corrupter = corrupter
        self.injected: list[InjectedFault] = []
        self._calls: list[str] = []
        self._last_clean: dict[str, Any] = {}
        self._targeted_hits = [0] * len(self.families)
        self._targeted_now: FamilyEvent | None = None

    def record(self) -> dict[str, Any]:
        """The plan as logged: E1-E3 events and family events."""
        return {
            **self.plan.model_dump(mode="json"),
            "family_events": [e.model_dump(mode="json") for e in self.families],
        }

    def _rng(self, index: int) -> random.Random:
        # str seeds are hashed with SHA-512 by `random`: the same on every machine
        return random.Random(f"{self.plan.seed}:{self.plan.task_id}:{index}")

    def _log(
        self,
        index: int,
        tool: str,
        kind: str,
        *,
        explicit: bool,
        changes: list[str],
        seen: Any,
        family: FaultFamily | None = None,
        applied: bool = True,
    ) -> None:
        self.injected.append(
            InjectedFault(
                call_index=index,
                tool=tool,
                kind=kind,
                explicit=explicit,
                applied=applied,
                changes=changes,
                seen_by_agent=seen,
                family=family.value if family else None,
            )
        )

    def _targeted(self, tool: str, arguments: dict[str, Any]) -> FamilyEvent | None:
        key = json.dumps(arguments, sort_keys=True, default=str)
        for i, event in enumerate(self.families):
            if (
                event.family is FaultFamily.TARGETED
                and event.tool == tool
                and json.dumps(event.arguments, sort_keys=True, default=str) == key
                and self._targeted_hits[i] < (event.duration or 1)
            ):
                self._targeted_hits[i] += 1
                return event
        return None

    def before_call(
        self, index: int, tool: str, arguments: dict[str, Any]
    ) -> dict[str, Any] | None:
        """An explicit error for this call, or None when the simulator should answer."""
        self._calls.append(tool)
        self._targeted_now = self._targeted(tool, arguments)
        rng = self._rng(index)
        for event in self.families:
            down = event.family is FaultFamily.PERSISTENT and event.tool == tool
            outage = event.family is FaultFamily.CASCADING and event.covers(index)
            if (down and index >= event.start_call) or outage:
                error = family_error(event, tool, rng)
                return self._fail(index, tool, event.family.value, error, event.family)
        targeted = self._targeted_now
        if targeted is not None and targeted.kind is not None and targeted.kind.is_explicit:
            error = explicit_error(targeted.kind, tool, rng)
            return self._fail(index, tool, targeted.kind.value, error, targeted.family)
        event = self.plan.fault_at(index)
        if event is None or not event.kind.is_explicit:
            return None
        return self._fail(index, tool, event.kind.value, explicit_error(event.kind, tool, rng))

    def _fail(
        self,
        index: int,
        tool: str,
        kind: str,
        error: dict[str, Any],
        family: FaultFamily | None = None,
    ) -> dict[str, Any]:
        """Log an explicit fault and return its error observation."""
        self._log(
            index,
            tool,
            kind,
            explicit=True,
            family=family,
            changes=["error returned; the simulator was not called"],
            seen=error,
        )
        return error

    async def after_call(
        self, index: int, tool: str, arguments: dict[str, Any], observation: dict[str, Any]
    ) -> dict[str, Any]:
        """The observation the agent sees: the clean one, or a changed copy.

        A stale value replays the last clean observation of the same call (same tool,
        same arguments), never another entity's data.
        """
        key = f"{tool}:{json.dumps(arguments, sort_keys=True, default=str)}"
        previous = self._last_clean.get(key)
        self._last_clean[key] = observation
        seen = observation
        kinds = [e.kind for e in (self.plan.fault_at(index),) if e is not None]
        targeted = self._targeted_now
        kinds += [targeted.kind] if targeted is not None and targeted.kind is not None else []
        for kind in [k for k in kinds if not k.is_explicit]:
            result = degrade(kind, seen, self._rng(index), previous, self.key_fields)
            seen = result.observation
            self._log(
                index,
                tool,
                kind.value,
                explicit=False,
                changes=result.changes,
                seen=seen,
                applied=result.applied,
                family=targeted.family if targeted and targeted.kind is kind else None,
            )
        for event in self.families:
            if not event.covers(index):
                continue
            if event.family is FaultFamily.SEMANTIC and self.corrupter is not None:
                altered = await self.corrupter(tool, seen)
                changes = changed_paths(seen, altered)
                seen = altered
                self._log(
                    index,
                    tool,
                    event.family.value,
                    explicit=False,
                    family=event.family,
                    changes=changes,
                    seen=seen,
                    applied=bool(changes),
                )
            elif event.family is FaultFamily.LATENCY and event.delay_seconds:
                await asyncio.sleep(event.delay_seconds)
                self._log(
                    index,
                    tool,
                    event.family.value,
                    explicit=False,
                    family=event.family,
                    changes=[f"answered {event.delay_seconds:g} s late"],
                    seen=seen,
                )
        return seen

    def log(self) -> list[dict[str, Any]]:
        """Every injected fault, with whether the agent called that tool again later."""
        for fault in self.injected:
            fault.retried_later = fault.tool in self._calls[fault.call_index + 1 :]
        return [f.model_dump(mode="json") for f in self.injected]


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
