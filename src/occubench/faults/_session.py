"""Fault settings of a run and the per-sample injector the tool layer calls.

Explicit faults answer the agent with an error and the simulator is never called
(its history notes the failure, so the state does not advance). Implicit faults let
the simulator produce the clean observation, which its history keeps, and hand the
agent a degraded copy. Faults are transient: the plan covers fixed call indexes, so
a call after an event's calls are used up is clean.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from occubench.faults._injectors import degrade, explicit_error
from occubench.faults._modes import EnvMode, FaultEngine
from occubench.faults._plan import FaultPlan, make_fault_plan
from occubench.faults._prompt_rules import prompt_fault_rules


class InjectedFault(BaseModel):
    """One fault as injected, for the log."""

    call_index: int = Field(description="0-based index of the agent's tool call.")
    tool: str = Field(description="Tool the call went to.")
    kind: str = Field(description="FaultKind value.")
    explicit: bool = Field(description="An error observation (True) or a degraded one.")
    applied: bool = Field(description="False when the observation had nothing to degrade.")
    changes: list[str] = Field(description="What the agent's copy differs in.")
    seen_by_agent: Any = Field(description="The observation the agent got.")
    retried_later: bool = Field(
        default=False, description="The agent called the same tool again afterwards."
    )


class FaultSettings(BaseModel):
    """How a run injects faults: the task arguments that decide every sample's plan."""

    env_mode: EnvMode = EnvMode.E0
    fault_count: int = Field(default=2, ge=0)
    fault_duration: int = Field(default=2, ge=1)
    engine: FaultEngine = FaultEngine.CODE
    seed: int = 0

    def simulator_rules(self) -> str:
        """Text appended to the simulator prompt (the prompt engine only)."""
        if self.engine is not FaultEngine.PROMPT:
            return ""
        return prompt_fault_rules(self.env_mode, self.fault_count, self.fault_duration)

    def session(
        self, task_id: int | str, expected_calls: int | None, key_fields: Sequence[str] = ()
    ) -> FaultSession | None:
        """The injector for one sample, or None (E0, or faults left to the prompt)."""
        if self.env_mode is EnvMode.E0 or self.engine is not FaultEngine.CODE:
            return None
        plan = make_fault_plan(
            seed=self.seed, task_id=task_id, env_mode=self.env_mode,
            fault_count=self.fault_count, fault_duration=self.fault_duration,
            expected_calls=expected_calls,
        )
        return FaultSession(plan, key_fields)


class FaultSession:
    """Applies one sample's fault plan, call by call, and logs what it did."""

    def __init__(self, plan: FaultPlan, key_fields: Sequence[str] = ()) -> None:
        self.plan = plan
        self.key_fields = tuple(key_fields)
        self.injected: list[InjectedFault] = []
        self._calls: list[str] = []
        self._last_clean: dict[str, Any] = {}

    def _rng(self, index: int) -> random.Random:
        # str seeds are hashed with SHA-512 by `random`: the same on every machine
        return random.Random(f"{self.plan.seed}:{self.plan.task_id}:{index}")

    def before_call(self, index: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
        """An explicit error for this call, or None when the simulator should answer."""
        self._calls.append(tool)
        event = self.plan.fault_at(index)
        if event is None or not event.kind.is_explicit:
            return None
        error = explicit_error(event.kind, tool, self._rng(index))
        self.injected.append(
            InjectedFault(
                call_index=index, tool=tool, kind=event.kind.value, explicit=True, applied=True,
                changes=["error returned; the simulator was not called"], seen_by_agent=error,
            )
        )
        return error

    def after_call(
        self, index: int, tool: str, arguments: dict[str, Any], observation: dict[str, Any]
    ) -> dict[str, Any]:
        """The observation the agent sees: the clean one, or a degraded copy.

        A stale value replays the last clean observation of the same call (same tool,
        same arguments), never another entity's data.
        """
        key = f"{tool}:{json.dumps(arguments, sort_keys=True, default=str)}"
        previous = self._last_clean.get(key)
        self._last_clean[key] = observation
        event = self.plan.fault_at(index)
        if event is None or event.kind.is_explicit:
            return observation
        result = degrade(event.kind, observation, self._rng(index), previous, self.key_fields)
        self.injected.append(
            InjectedFault(
                call_index=index, tool=tool, kind=event.kind.value, explicit=False,
                applied=result.applied, changes=result.changes,
                seen_by_agent=result.observation,
            )
        )
        return result.observation

    def log(self) -> list[dict[str, Any]]:
        """Every injected fault, with whether the agent called that tool again later."""
        for fault in self.injected:
            fault.retried_later = tool_called_after(self._calls, fault.tool, fault.call_index)
        return [f.model_dump(mode="json") for f in self.injected]


def tool_called_after(calls: list[str], tool: str, index: int) -> bool:
    """Whether ``tool`` appears among ``calls`` after position ``index``."""
    return tool in calls[index + 1 :]
