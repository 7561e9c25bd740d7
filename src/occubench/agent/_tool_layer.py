"""The tool layer: every agent tool call passes here on its way to the simulator.

Inspect has already checked the arguments against the tool's schema (a bad call got a
parsing error and never arrives). Faults plug in here: an explicit fault answers the
agent without calling the simulator; an implicit one degrades the copy the agent sees
while the simulator's history keeps the clean observation.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from inspect_ai.tool import ToolDef

from occubench.agent._state import Episode
from occubench.dataset import EnvConfig, ToolSpec, tool_params
from occubench.faults import InjectedFault
from occubench.simulator import Simulator


class FaultHook(Protocol):
    """What the tool layer asks of a fault injector (see ``occubench.faults``)."""

    def before_call(
        self, index: int, tool: str, arguments: dict[str, Any]
    ) -> dict[str, Any] | None:
        """An explicit error observation for this call, or None to go on."""

    async def after_call(
        self, index: int, tool: str, arguments: dict[str, Any], observation: dict[str, Any]
    ) -> dict[str, Any]:
        """The observation the agent sees (possibly degraded)."""

    def log(self) -> list[InjectedFault]:
        """Every fault injected so far."""


class ToolLayer:
    """Runs one sample's tool calls against its simulator, recording the episode."""

    def __init__(self, simulator: Simulator, episode: Episode, faults: FaultHook | None = None):
        self.simulator = simulator
        self.episode = episode
        self.faults = faults
        self.calls = episode.tool_calls
        self._written: dict[str, Any] = {"state": episode.state}

    async def call(
        self, tool: str, arguments: dict[str, Any], raw_arguments: str | None = None
    ) -> str:
        """Answer one tool call with the observation the agent sees (its text).

        ``raw_arguments`` is the agent's own argument string when the protocol passes it
        to the simulator unchanged; ``arguments`` are the parsed ones (fault matching).
        An observation no fault changed reaches the agent as the simulator's text.
        """
        index = self.calls
        self.calls = self.episode.tool_calls = index + 1
        try:
            error = self.faults.before_call(index, tool, arguments) if self.faults else None
            if error is not None:
                self.simulator.record_failure(tool, arguments, error, raw_arguments)
                return json.dumps(error, ensure_ascii=False)
            observation = await self.simulator.observe(tool, arguments, raw_arguments)
            if not self.faults or observation.value is None:
                return observation.text
            seen = await self.faults.after_call(index, tool, arguments, observation.value)
            if seen is observation.value:
                return observation.text
            return json.dumps(seen, ensure_ascii=False)
        finally:
            self._record()

    def _record(self) -> None:
        """Write the episode's record of the calls so far (a field only when it changed).

        Each write of a store field validates the whole episode again (Inspect's
        ``StoreModel``), so unchanged fields are not written.
        """
        sim = self.simulator
        self.episode.steps = list(sim.steps)
        changed: dict[str, Any] = {"state": sim.state}
        if sim.checker is not None:
            changed["sim_checked"] = sim.checked
            changed["simulator_suspect"] = any(
                s.check is not None and s.check.suspect for s in sim.steps
            )
        if self.faults:
            changed["fault_log"] = self.faults.log()
        for name, value in changed.items():
            if name not in self._written or self._written[name] != value:
                setattr(self.episode, name, value)
                self._written[name] = value

    def tools(self, env: EnvConfig) -> list[ToolDef]:
        """The env's actions as Inspect tools bound to this layer."""
        return [self._tool(spec) for spec in env.action_set_definitions]

    def _tool(self, spec: ToolSpec) -> ToolDef:
        async def execute(**arguments: Any) -> str:
            return await self.call(spec.name, arguments)

        return ToolDef(
            execute,
            name=spec.name,
            description=spec.description or spec.name,
            parameters=tool_params(spec),
            max_output=0,
        )
