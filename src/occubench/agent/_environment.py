"""One sample's environment: the simulator, its faults and the tool layer, built in one place.

Every way of driving an environment (the built-in loop, an Inspect agent, an MCP client,
an agent program, the gym API) opens it here, so faults are planned, applied and logged
alike whoever makes the calls.
"""

from __future__ import annotations

import copy
from typing import Any

from inspect_ai.model import Model

from occubench.agent._state import Episode
from occubench.agent._tool_layer import ToolLayer
from occubench.config import RunConfig
from occubench.dataset import EnvConfig, TaskRecord
from occubench.simulator import STATE_CONTRACT, Simulator, StateMode, render_system_prompt


def open_environment(
    config: RunConfig, task: TaskRecord, env: EnvConfig, simulator: Model, episode: Episode
) -> ToolLayer:
    """The tool layer of one task's environment, its episode record started.

    Args:
        config: The run's configuration (faults, state mode, date, re-asks, cache).
        task: The task record (its id, plan and expected calls place the faults).
        env: The task's env config.
        simulator: The simulator role's model (also used by semantic faults).
        episode: The episode record to keep (a sample's store, or a store of its own).
    """
    explicit = config.state_mode is StateMode.EXPLICIT
    session = config.session(
        task.task_id,
        expected_calls(task),
        (env.fault_hints or {}).get("key_fields", []),
        tools=[t.name for t in env.action_set_definitions],
        critical_calls=critical_calls(task),
        simulator=simulator,
        simulator_retries=config.simulator_retries,
        cache=config.cache,
    )
    sim = Simulator(
        simulator,
        render_system_prompt(
            env,
            date=config.date,
            extra_rules=(STATE_CONTRACT if explicit else "") + config.simulator_rules(),
        ),
        max_retries=config.simulator_retries,
        cache=config.cache,
        state=copy.deepcopy(env.task_initial_state) if explicit else None,
    )
    episode.state = sim.state
    if session is not None:
        episode.fault_plan = session.record()
    return ToolLayer(sim, episode, session)


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
