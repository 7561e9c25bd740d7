"""The agent loop: the main model calls the env's tools until it answers."""

from __future__ import annotations

import copy
from typing import Any

from inspect_ai.model import ChatMessageSystem, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from occubench.agent._prompt import agent_system_prompt
from occubench.agent._state import Episode, StopReason
from occubench.agent._tool_layer import ToolLayer
from occubench.config import RunConfig
from occubench.dataset import EnvConfig, TaskRecord
from occubench.roles import Role
from occubench.simulator import STATE_CONTRACT, Simulator, StateMode, render_system_prompt


@solver
def occubench_agent(config: RunConfig | None = None) -> Solver:
    """Run the agent under test in the sample's simulated environment.

    The sample's metadata carries its task record and env config. The agent gets a
    system prompt (scenario, fixed date) and the env's tools, and is called until it
    answers without a tool call or makes ``config.max_tool_calls`` calls. The
    configuration also gives the faults, the simulator's re-asks, the cache and the
    state mode (``history``: state implicit in the simulator's history; ``explicit``:
    JSON state changed by the simulator's patches, logged per step).
    """
    settings = config or RunConfig()
    explicit = settings.state_mode is StateMode.EXPLICIT
    max_tool_calls, date = settings.max_tool_calls, settings.date
    simulator_retries, cache = settings.simulator_retries, settings.cache

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        task = TaskRecord.model_validate(state.metadata["task"])
        env = EnvConfig.model_validate(state.metadata["env"])
        model = get_model(role=Role.SIMULATOR.value, required=True)

        session = settings.session(
            task.task_id,
            expected_calls(task),
            (env.fault_hints or {}).get("key_fields", []),
            tools=[t.name for t in env.action_set_definitions],
            critical_calls=critical_calls(task),
            simulator=model,
            simulator_retries=simulator_retries,
            cache=cache,
        )
        simulator = Simulator(
            model,
            render_system_prompt(
                env,
                date=date,
                extra_rules=(STATE_CONTRACT if explicit else "") + settings.simulator_rules(),
            ),
            max_retries=simulator_retries,
            cache=cache,
            state=copy.deepcopy(env.task_initial_state) if explicit else None,
        )
        episode = state.store_as(Episode)
        episode.state = simulator.state
        if session is not None:
            episode.fault_plan = session.record()
        layer = ToolLayer(simulator, episode, session)
        state.messages.insert(
            0, ChatMessageSystem(content=agent_system_prompt(task.task_scenario_name, date))
        )
        state.tools = [t.as_tool() for t in layer.tools(env)]
        episode.stop_reason = StopReason.SAMPLE_LIMIT
        while True:
            state = await generate(state, tool_calls="single")
            if state.completed:
                break
            if not state.output.message.tool_calls:
                episode.stop_reason = StopReason.ANSWERED
                break
            if episode.tool_calls >= max_tool_calls:
                episode.stop_reason = StopReason.TOOL_CALL_LIMIT
                break
        return state

    return solve


def critical_calls(task: TaskRecord) -> list[tuple[str, dict[str, Any]]]:
    """The calls a targeted fault may hit: the plan's critical steps (all, if none marked)."""
    steps = task.reference_plan.steps if task.reference_plan else []
    marked = [s for s in steps if s.critical] or steps
    return [(s.tool, s.arguments) for s in marked]


def expected_calls(task: TaskRecord) -> int | None:
    """Tool calls the task is expected to take, when its record says (fault spacing)."""
    if task.expected_tool_calls:
        return task.expected_tool_calls
    if task.reference_plan and task.reference_plan.steps:
        return len(task.reference_plan.steps)
    return None
