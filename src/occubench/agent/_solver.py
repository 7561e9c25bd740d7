"""The agent solver: one sample's simulator, faults and tool layer, then the agent loop."""

from __future__ import annotations

import copy
from typing import Any

from inspect_ai.model import ChatMessageSystem, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from occubench.agent._loop import AgentLoop
from occubench.agent._prompt import agent_system_prompt
from occubench.agent._state import Episode
from occubench.agent._tool_layer import ToolLayer
from occubench.config import ReleasePrompts, RunConfig
from occubench.dataset import EnvConfig, TaskRecord, tool_info
from occubench.protocols import MessageStyle
from occubench.roles import Role
from occubench.simulator import (
    LAYOUTS,
    STATE_CONTRACT,
    PaperLayout,
    Simulator,
    SimulatorLayout,
    StateMode,
)


@solver
def occubench_agent(config: RunConfig | None = None) -> Solver:
    """Run the agent under test in the sample's simulated environment.

    The sample's metadata carries its task record and env config. The agent gets a
    system prompt (scenario, fixed date) and the instruction in its protocol's style
    and the env's tools, and works until a stop rule of the protocol ends the loop
    (``AgentLoop``). The configuration gives the faults, the simulator's layout and
    re-asks, the cache and the state mode (``history``: state implicit in the
    simulator's history; ``explicit``: JSON state changed by the simulator's patches,
    logged per step).
    """
    settings = config or RunConfig()
    points = settings.points()
    release = ReleasePrompts.read(settings.prompts_from) if settings.prompts_from else None
    explicit = settings.state_mode is StateMode.EXPLICIT
    layout: SimulatorLayout
    if points.simulator_messages is MessageStyle.PAPER and release is not None:
        layout = PaperLayout(release.simulator_format, release.simulator_reminder)
    else:
        layout = LAYOUTS[points.simulator_messages]()

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        task = TaskRecord.model_validate(state.metadata["task"])
        env = EnvConfig.model_validate(state.metadata["env"])
        model = get_model(role=Role.SIMULATOR.value, required=True)
        session = settings.model_copy(update={"fault_engine": points.fault_engine}).session(
            task.task_id,
            expected_calls(task),
            (env.fault_hints or {}).get("key_fields", []),
            tools=[t.name for t in env.action_set_definitions],
            critical_calls=critical_calls(task),
            simulator=model,
            simulator_retries=points.simulator_retries,
            cache=settings.cache,
            error_hints=points.error_hints,
        )
        rules = settings.model_copy(update={"fault_engine": points.fault_engine}).simulator_rules(
            points.simulator_messages, release.fault_rules if release else None
        )
        simulator = Simulator(
            model,
            layout.system_prompt(
                env, date=settings.date, rules=(STATE_CONTRACT if explicit else "") + rules
            ),
            layout=layout,
            max_retries=points.simulator_retries,
            fallback=points.simulator_fallback,
            max_tokens=points.simulator_max_tokens or None,
            cache=settings.cache,
            state=copy.deepcopy(env.task_initial_state) if explicit else None,
        )
        episode = state.store_as(Episode)
        episode.state = simulator.state
        if session is not None:
            episode.fault_plan = session.record()
        layer = ToolLayer(simulator, episode, session)
        style = points.agent_messages
        system = agent_system_prompt(
            task.task_scenario_name,
            settings.date,
            style,
            release.agent_system if release and style is MessageStyle.PAPER else None,
        )
        state.messages.insert(0, ChatMessageSystem(content=system))
        tools = [
            tool_info(spec, fill=points.validate_tool_args) for spec in env.action_set_definitions
        ]
        state.tools = [t.as_tool() for t in layer.tools(env)]
        loop = AgentLoop(get_model(), tools, layer, episode, points)
        return await loop.run(state)

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
