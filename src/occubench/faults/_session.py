"""Fault settings of a run, a task's fault plan, and the per-sample injector.

Explicit faults answer the agent with an error and the simulator is never called (its
history notes the failure, so the state does not advance). Implicit faults let the
simulator produce the clean observation, which its history keeps, and hand the agent
a changed copy. Faults are transient unless their entry says otherwise
(``persistent``): events cover fixed call indexes, so a call after an event's calls
are used up is clean.

Order: a plan's events are the env mode's (by start call), then each family's in the
order given. Before the simulator, the first covering event whose entry returns an
error answers the call; after it, every covering event changes the observation in
turn. Each injected fault is logged (``InjectedFault``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from occubench.dataset import PlanStep
from occubench.defaults import (
    DEFAULT_ENV_MODE,
    DEFAULT_EXPECTED_TOOL_CALLS,
    DEFAULT_FAULT_COUNT,
    DEFAULT_FAULT_DURATION,
    DEFAULT_FAULT_LATENCY,
    DEFAULT_SEED,
    DEFAULT_SIMULATOR_RETRIES,
)
from occubench.errors import UsageError
from occubench.faults._events import FaultEvent, FaultPlan, Scope
from occubench.faults._kinds import FaultFamily, FaultKind
from occubench.faults._modes import EnvMode, FaultEngine
from occubench.faults._placement import PlacementContext
from occubench.faults._prompt_rules import FaultRules, prompt_fault_rules
from occubench.faults._registry import Call, SimulatorAccess, fault_type
from occubench.protocols import MessageStyle
from occubench.records import NullsKept

if TYPE_CHECKING:
    from inspect_ai.model import Model


class InjectedFault(NullsKept):
    """One fault as injected, for the log (``Episode.fault_log``).

    ``kind`` is text, not a ``FaultKind``: a family's own fault (latency, semantic, ...)
    is named by its entry in the fault registry, which is open (``register_fault_type``).
    ``family`` is one of ``FaultFamily``: a fault only names a family run configurations
    can select.
    """

    call_index: int = Field(description="0-based index of the agent's tool call.")
    tool: str = Field(description="Tool the call went to.")
    kind: str = Field(
        description="FaultKind value, or the registry name of the family that made it."
    )
    planned_kind: str | None = Field(
        default=None,
        description="The kind the plan drew, when it could not apply to this observation "
        "and ``kind`` was injected instead.",
    )
    family: FaultFamily | None = Field(default=None, description="Fault family, None for E1-E3.")
    explicit: bool = Field(description="An error observation (True) or a changed one.")
    applied: bool = Field(description="False when the observation had nothing to change.")
    changes: list[str] = Field(description="What the agent's copy differs in.")
    seen_by_agent: Any = Field(description="The observation the agent got.")
    retried_later: bool = Field(
        default=False, description="The agent called the same tool again afterwards."
    )


def make_fault_plan(
    *,
    seed: int,
    task_id: int | str,
    env_mode: EnvMode,
    fault_count: int,
    fault_duration: int,
    expected_calls: int | None = None,
    families: Sequence[FaultFamily] = (),
    tools: Sequence[str] = (),
    critical_calls: Sequence[PlanStep] = (),
    latency_seconds: float = DEFAULT_FAULT_LATENCY,
) -> FaultPlan:
    """Build the deterministic fault plan of one task.

    The env mode's entry places its events (E0 places none; see the registry), then
    each family's entry places its own. E1-E3 cut the first ``fault_count *
    (fault_duration + 1)`` calls (``FaultPlan.span``) into ``fault_count`` segments and
    place one event in each, keeping one clean call between events (the last event's
    offset is seeded), so an agent that makes that many calls meets every event; E1
    draws explicit kinds, E2 implicit kinds, E3 half of each (seeded). Families spread
    their windows over the expected calls.

    Args:
        seed: Run seed.
        task_id: Task id; different tasks get independent plans.
        env_mode: Environment mode; E0 gives no env-mode events.
        fault_count: Number of fault events (>= 0).
        fault_duration: Consecutive calls each event lasts (>= 1).
        expected_calls: Calls the task is expected to take (>= 1); defaults to
            ``DEFAULT_EXPECTED_TOOL_CALLS``.
        families: Fault families whose events are added.
        tools: The task's tools (families that pick one).
        critical_calls: The plan's critical calls (``targeted``, ``persistent``).
        latency_seconds: Delay of a latency fault.

    Returns:
        The plan; the same arguments give the same plan on any machine.

    Raises:
        UsageError: On an out-of-range count.

    """
    if fault_count < 0:
        raise UsageError(f"fault_count must be >= 0, got {fault_count}")
    if fault_duration < 1:
        raise UsageError(f"fault_duration must be >= 1, got {fault_duration}")
    calls = DEFAULT_EXPECTED_TOOL_CALLS if expected_calls is None else expected_calls
    if calls < 1:
        raise UsageError(f"expected_calls must be >= 1, got {calls}")
    ctx = PlacementContext(
        seed=seed,
        task_id=task_id,
        env_mode=env_mode,
        fault_count=fault_count,
        fault_duration=fault_duration,
        expected_calls=calls,
        tools=tuple(tools),
        critical_calls=tuple(critical_calls),
        latency_seconds=latency_seconds,
    )
    entries = ([] if env_mode is EnvMode.E0 else [env_mode.value]) + [f.value for f in families]
    return FaultPlan(
        env_mode=env_mode,
        fault_count=fault_count,
        fault_duration=fault_duration,
        seed=seed,
        task_id=task_id,
        expected_calls=calls,
        events=[event for name in entries for event in fault_type(name).place(ctx)],
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
    fault_engine: FaultEngine | None = Field(
        default=None,
        description="code: a seeded plan, faults made and logged by code; prompt: fault "
        "rules appended to the simulator's prompt, as the paper (default: the protocol's).",
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

    def engine(self) -> FaultEngine:
        """The engine this run places E1-E3 faults with (as resolved by its protocol)."""
        if self.fault_engine is None:
            raise ValueError("the fault engine is not resolved: take it from the protocol")
        return self.fault_engine

    def simulator_rules(
        self, style: MessageStyle = MessageStyle.OCCUBENCH, rules: FaultRules | None = None
    ) -> str:
        """Text appended to the simulator prompt (the prompt engine only).

        ``style`` picks the wording: the paper's rules (its semantics and literal error
        bodies) or occubench's; ``rules`` replaces the paper's wording with the release's
        own (``prompts_from``).
        """
        if self.engine() is not FaultEngine.PROMPT:
            return ""
        return prompt_fault_rules(
            self.env_mode, self.fault_count, self.fault_duration, style=style, rules=rules
        )

    def session(
        self,
        task_id: int | str,
        expected_calls: int | None,
        key_fields: Sequence[str] = (),
        *,
        tools: Sequence[str] = (),
        critical_calls: Sequence[PlanStep] = (),
        simulator: Model | None = None,
        simulator_retries: int = DEFAULT_SIMULATOR_RETRIES,
        cache: bool = False,
        error_hints: bool = False,
    ) -> FaultSession | None:
        """The injector for one sample, or None when nothing is injected by code.

        E1-E3 events come from the code engine only; family events (always by code) are
        added to them. ``simulator`` is the simulator role, for semantic faults;
        ``error_hints`` adds retry advice to explicit error bodies.
        """
        by_code = self.env_mode is not EnvMode.E0 and self.engine() is FaultEngine.CODE
        if not by_code and not self.faults:
            return None
        plan = make_fault_plan(
            seed=self.seed,
            task_id=task_id,
            env_mode=self.env_mode if by_code else EnvMode.E0,
            fault_count=self.fault_count,
            fault_duration=self.fault_duration,
            expected_calls=expected_calls,
            families=self.faults,
            tools=tools,
            critical_calls=critical_calls,
            latency_seconds=self.fault_latency,
        )
        access = None if simulator is None else SimulatorAccess(simulator, simulator_retries, cache)
        return FaultSession(plan, key_fields, simulator=access, error_hints=error_hints)


def _family(event: FaultEvent) -> FaultFamily | None:
    """The family that placed the event (None: an env mode or an entry no run can select)."""
    return next((f for f in FaultFamily if f.value == event.source), None)


class FaultSession:
    """Applies one sample's fault plan, call by call, and logs what it did."""

    def __init__(
        self,
        plan: FaultPlan,
        key_fields: Sequence[str] = (),
        *,
        simulator: SimulatorAccess | None = None,
        error_hints: bool = False,
    ) -> None:
        self.plan = plan
        self.key_fields = tuple(key_fields)
        self.simulator = simulator
        self.error_hints = error_hints
        self.injected: list[InjectedFault] = []
        self._calls: list[str] = []
        self._last_clean: dict[str, Any] = {}
        self._hits = [0] * len(plan.events)
        self._active: dict[int, list[FaultEvent]] = {}

    def record(self) -> FaultPlan:
        """The plan as logged (``Episode.fault_plan``)."""
        return self.plan

    def _call(self, index: int, tool: str, arguments: dict[str, Any], previous: Any) -> Call:
        return Call(
            index=index,
            tool=tool,
            arguments=arguments,
            seed=self.plan.seed,
            task_id=self.plan.task_id,
            key_fields=self.key_fields,
            previous=previous,
            simulator=self.simulator,
            error_hints=self.error_hints,
        )

    def _select(self, index: int, tool: str, arguments: dict[str, Any]) -> list[FaultEvent]:
        """The events acting on this call (a matching event counts the hit)."""
        chosen = []
        key = json.dumps(arguments, sort_keys=True, default=str)
        for i, event in enumerate(self.plan.events):
            if event.tool is not None and event.tool != tool:
                continue
            if event.scope is Scope.MATCHING:
                same = json.dumps(event.arguments or {}, sort_keys=True, default=str) == key
                if not same or self._hits[i] >= (event.duration or 1):
                    continue
                self._hits[i] += 1
            elif not event.covers(index):
                continue
            chosen.append(event)
        return chosen

    def before_call(
        self, index: int, tool: str, arguments: dict[str, Any]
    ) -> dict[str, Any] | None:
        """An explicit error for this call, or None when the simulator should answer."""
        self._calls.append(tool)
        active = self._active[index] = self._select(index, tool, arguments)
        call = self._call(index, tool, arguments, None)
        for event in active:
            hook = fault_type(event.source).before
            error = hook(event, call) if hook is not None else None
            if error is not None:
                self._log(
                    index,
                    tool,
                    event,
                    explicit=True,
                    changes=["error returned; the simulator was not called"],
                    seen=error,
                )
                return error
        return None

    async def after_call(
        self, index: int, tool: str, arguments: dict[str, Any], observation: Any
    ) -> Any:
        """The observation the agent sees: the clean one, or a changed copy.

        A stale value replays the last clean observation of the same call (same tool,
        same arguments), never another entity's data.
        """
        active = self._active.pop(index, None)
        if active is None:
            active = self._select(index, tool, arguments)
        key = f"{tool}:{json.dumps(arguments, sort_keys=True, default=str)}"
        previous = self._last_clean.get(key)
        self._last_clean[key] = observation
        call = self._call(index, tool, arguments, previous)
        seen = observation
        for event in active:
            hook = fault_type(event.source).after
            done = await hook(event, call, seen) if hook is not None else None
            if done is None:
                continue
            seen = done.observation
            self._log(
                index,
                tool,
                event,
                explicit=False,
                changes=done.changes,
                seen=seen,
                applied=done.applied,
                injected=done.kind,
            )
        return seen

    def _log(
        self,
        index: int,
        tool: str,
        event: FaultEvent,
        *,
        explicit: bool,
        changes: list[str],
        seen: Any,
        applied: bool = True,
        injected: FaultKind | None = None,
    ) -> None:
        self.injected.append(
            InjectedFault(
                call_index=index,
                tool=tool,
                kind=injected.value if injected is not None else event.label(),
                planned_kind=event.label() if injected is not None else None,
                family=_family(event),
                explicit=explicit,
                applied=applied,
                changes=changes,
                seen_by_agent=seen,
            )
        )

    def log(self) -> list[InjectedFault]:
        """Every injected fault, with whether the agent called that tool again later.

        Copies: a log kept earlier is not changed by later calls.
        """
        for fault in self.injected:
            fault.retried_later = fault.tool in self._calls[fault.call_index + 1 :]
        return [f.model_copy() for f in self.injected]
