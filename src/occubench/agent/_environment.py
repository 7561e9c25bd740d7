"""One sample's environment: the simulator, its faults and the tool layer, built in one place.

Every way of driving an environment (the built-in loop, an Inspect agent, an MCP client,
an agent program, the gym API) opens it here, so faults are planned, applied and logged
alike whoever makes the calls, and the simulator is asked in the protocol's layout.
"""

from __future__ import annotations

import copy
from typing import Any

from inspect_ai.model import GenerateConfig, Model, model_roles

from occubench.agent._state import Episode
from occubench.agent._tool_layer import ToolLayer
from occubench.config import ReleasePrompts, RunConfig
from occubench.dataset import EnvConfig, TaskRecord
from occubench.protocols import MessageStyle
from occubench.roles import Role
from occubench.simchecks import ObservationChecker
from occubench.simulator import (
    LAYOUTS,
    SIM_CHECK_CONTRACT,
    STATE_CONTRACT,
    PaperLayout,
    Simulator,
    SimulatorLayout,
    StateMode,
)


def simulator_layout(config: RunConfig, release: ReleasePrompts | None = None) -> SimulatorLayout:
    """The layout the protocol asks the simulator in (the release's words with ``release``)."""
    style = config.points().simulator_messages
    if style is MessageStyle.PAPER and release is not None:
        return PaperLayout(release.simulator_format, release.simulator_reminder)
    return LAYOUTS[style]()


def simulator_prompt(
    config: RunConfig, env: EnvConfig, release: ReleasePrompts | None = None
) -> str:
    """The simulator's system prompt for ``env`` as a run with ``config`` sends it.

    The protocol's layout with the run's date, the state contract (explicit state mode),
    the online checks' contract, and the fault rules the simulator is given.
    """
    points = config.points()
    explicit = config.state_mode is StateMode.EXPLICIT
    rules = config.fault_settings().simulator_rules(
        points.simulator_messages, release.fault_rules if release else None
    )
    contracts = (STATE_CONTRACT if explicit else "") + (
        SIM_CHECK_CONTRACT if points.sim_checks else ""
    )
    layout = simulator_layout(config, release)
    return layout.system_prompt(env, date=config.date, rules=contracts + rules)


def environment_simulator(
    config: RunConfig, env: EnvConfig, simulator: Model, release: ReleasePrompts | None = None
) -> Simulator:
    """The simulator of one env as a run with ``config`` asks it (no episode, no faults).

    Its prompt (``simulator_prompt``), layout, re-asks, state mode, online checks and
    generate settings are the run's.
    """
    points = config.points()
    explicit = config.state_mode is StateMode.EXPLICIT
    checks = points.sim_checks
    return Simulator(
        simulator,
        simulator_prompt(config, env, release),
        layout=simulator_layout(config, release),
        max_retries=points.simulator_retries,
        pass_raw=points.pass_raw_observation,
        cache=config.cache,
        state=copy.deepcopy(env.task_initial_state) if explicit else None,
        checker=ObservationChecker(env) if checks else None,
        check_model=check_model() if checks else None,
        config=GenerateConfig(
            max_tokens=points.simulator_max_tokens or None, seed=config.simulator_seed
        ),
    )


def open_environment(
    config: RunConfig,
    task: TaskRecord,
    env: EnvConfig,
    simulator: Model,
    episode: Episode,
    release: ReleasePrompts | None = None,
) -> ToolLayer:
    """The tool layer of one task's environment, its episode record started.

    Args:
        config: The run's configuration (protocol, faults, state mode, date, cache, the
            online simulator checks, the simulator's seed). With the checks on, the
            ``simulator_fallback`` role (if bound) answers their re-asks.
        task: The task record (its id, plan and expected calls place the faults).
        env: The task's env config.
        simulator: The simulator role's model (also used by semantic faults).
        episode: The episode record to keep (a sample's store, or a store of its own).
        release: The release's own prompt wording (``prompts_from``), if the run uses it.
    """
    points = config.points()
    session = config.fault_settings().session(
        task.task_id,
        expected_calls(task),
        (env.fault_hints or {}).get("key_fields", []),
        tools=[t.name for t in env.action_set_definitions],
        critical_calls=critical_calls(task),
        simulator=simulator,
        simulator_retries=points.simulator_retries,
        cache=config.cache,
        error_hints=points.error_hints,
    )
    sim = environment_simulator(config, env, simulator, release)
    episode.state = sim.state
    if session is not None:
        episode.fault_plan = session.record()
    return ToolLayer(sim, episode, session)


def check_model() -> Model | None:
    """The ``simulator_fallback`` role, re-asked after a failed online check (None: unbound)."""
    chosen = model_roles().get(Role.SIMULATOR_FALLBACK.value)
    if isinstance(chosen, list):
        raise ValueError(f"role {Role.SIMULATOR_FALLBACK.value!r} must be one model, not a list")
    return chosen


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
