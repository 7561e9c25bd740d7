"""One sample's environment: the simulator, its faults and the tool layer, built in one place.

Every way of driving an environment (the built-in loop, an Inspect agent, an MCP client,
an agent program, the gym API) opens it here, so faults are planned, applied and logged
alike whoever makes the calls, and the simulator is asked in the protocol's layout.
"""

from __future__ import annotations

import copy

from inspect_ai.model import GenerateConfig, Model, model_roles

from occubench.agent._state import Episode
from occubench.agent._tool_layer import ToolLayer
from occubench.calls import TRANSPORT_SETTINGS
from occubench.config import ResolvedRun, RunConfig
from occubench.dataset import EnvConfig, PlanStep, TaskRecord
from occubench.defaults import DEFAULT_USER_TURNS
from occubench.errors import UsageError
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
    attach_world,
)
from occubench.users import SimulatedUser, UserWorld
from occubench.worlds import (
    World,
    WorldConflicts,
    WorldContext,
    WorldInLog,
    WorldMode,
    env_digest,
    shared_world,
    text_digest,
)


def simulator_layout(run: ResolvedRun) -> SimulatorLayout:
    """The layout the protocol asks the simulator in (the release's words, if the run read them)."""
    style, release = run.points.simulator_messages, run.release
    if style is MessageStyle.PAPER and release is not None:
        return PaperLayout(release.simulator_format, release.simulator_reminder)
    return LAYOUTS[style]()


def simulator_prompt(run: ResolvedRun, env: EnvConfig) -> str:
    """The simulator's system prompt for ``env`` as the run sends it.

    The protocol's layout with the run's date, the state contract (explicit state mode),
    the online checks' contract, and the fault rules the simulator is given.
    """
    config, points, release = run.config, run.points, run.release
    explicit = config.state_mode is StateMode.EXPLICIT
    rules = run.fault_settings.simulator_rules(
        points.simulator_messages, release.fault_rules if release else None
    )
    contracts = (STATE_CONTRACT if explicit else "") + (
        SIM_CHECK_CONTRACT if points.sim_checks else ""
    )
    return simulator_layout(run).system_prompt(env, date=config.date, rules=contracts + rules)


def environment_simulator(
    run: ResolvedRun, env: EnvConfig, simulator: Model, epoch: int = 1
) -> Simulator:
    """The simulator of one env as the run asks it (no episode, no faults).

    Its prompt (``simulator_prompt``), layout, re-asks, state mode, online checks and
    generate settings are the run's; its seed is the epoch's
    (``RunConfig.epoch_simulator_seed``).
    """
    config, points = run.config, run.points
    explicit = config.state_mode is StateMode.EXPLICIT
    checks = points.sim_checks
    return Simulator(
        simulator,
        simulator_prompt(run, env),
        layout=simulator_layout(run),
        max_retries=points.simulator_retries,
        pass_raw=points.pass_raw_observation,
        cache=config.cache,
        state=copy.deepcopy(env.task_initial_state) if explicit else None,
        checker=ObservationChecker(env) if checks else None,
        check_model=check_model() if checks else None,
        config=GenerateConfig(
            max_tokens=points.simulator_max_tokens or None,
            seed=config.epoch_simulator_seed(epoch),
        ),
    )


def open_environment(
    run: ResolvedRun,
    task: TaskRecord,
    env: EnvConfig,
    simulator: Model,
    episode: Episode,
    *,
    epoch: int = 1,
) -> ToolLayer:
    """The tool layer of one task's environment, its episode record started.

    Args:
        run: The resolved run (protocol points, faults, state mode, date, cache, the
            online simulator checks, the simulator's seed, the release's own prompt
            wording if read). With the checks on, the ``simulator_fallback`` role (if
            bound) answers their re-asks.
        task: The task record (its id, plan and expected calls place the faults).
        env: The task's env config.
        simulator: The simulator role's model (also used by semantic faults).
        episode: The episode record to keep (a sample's store, or a store of its own).
        epoch: The sample's epoch (1 for the first): the world's variant under
            ``world_variant=epoch``.

    Raises:
        UsageError: the run's world cannot be opened as its mode needs.
    """
    config, points = run.config, run.points
    session = run.fault_settings.session(
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
    sim = environment_simulator(run, env, simulator, epoch)
    use_run_world(run, sim, env, task, epoch)
    episode.state = sim.state
    if session is not None:
        episode.fault_plan = session.record()
    return ToolLayer(sim, episode, session)


def world_variant(run: ResolvedRun, epoch: int) -> int:
    """The world variant a sample uses: the run's, or under ``epoch`` its epoch's (from 0)."""
    variant = run.config.world_variant
    return max(epoch - 1, 0) if variant == "epoch" else variant


def use_run_world(
    run: ResolvedRun, sim: Simulator, env: EnvConfig, task: TaskRecord, epoch: int = 1
) -> None:
    """Bind the run's world (if it names one) to a sample's simulator, in the run's mode.

    Raises:
        UsageError: the world cannot be opened as the mode needs.
    """
    config = run.config
    if config.world is not None:
        variant = world_variant(run, epoch)
        attach_world(
            sim, env, config.world, config.world_mode, variant=variant, task=str(task.task_id)
        )


def open_run_world(config: RunConfig) -> World | None:
    """A run's world, opened once in this process as its mode needs (None: no world).

    Raises:
        UsageError: not a world (``replay``, ``replay-live``), or not one that can be
            recorded into (``record``: a packed file, a folder that is not a world).
    """
    if config.world is None:
        return None
    world = shared_world(config.world, writable=config.world_mode is WorldMode.RECORD)
    conflicted_world(world, config)
    return world


def conflicted_world(world: World, config: RunConfig) -> str | None:
    """A world's keys with different answers, as the run's setting takes them.

    Returns:
        The line that says so before the run (``warn``), or None when none conflict.

    Raises:
        UsageError: some do and the run refuses such a world (``world_conflicts=refuse``).
    """
    keys = world.conflicts()
    if not keys:
        return None
    said = (
        f"the world {world.path} holds different answers for {len(keys)} key(s) (merged "
        "from disagreeing recordings, or edited; occubench world verify lists them)"
    )
    if config.world_conflicts is WorldConflicts.REFUSE:
        raise UsageError(f"{said}: refused (--world-conflicts refuse)")
    return f"Warning: {said}; each is answered with its earliest entry by time."


def world_in_log(run: ResolvedRun) -> WorldInLog | None:
    """What the run's log records of its world (opening it, once per process), or None.

    Raises:
        UsageError: the world cannot be opened as the run's mode needs, or holds
            conflicting answers and the run refuses them.
    """
    config = run.config
    if config.world is None:
        return None
    open_run_world(config)
    return WorldInLog.opened(config.world, config.world_mode, config.world_variant)


def user_model(task: TaskRecord) -> Model | None:
    """The ``user`` role's model for a task with a user brief (None: the task has none).

    Raises:
        UsageError: the task has a user and the run binds no user model (or a list).
    """
    if task.user is None:
        return None
    chosen = model_roles().get(Role.USER.value)
    if isinstance(chosen, list):
        raise UsageError(f"role {Role.USER.value!r} must be one model, not a list")
    if chosen is None:
        raise UsageError(
            f"task {task.task_id} has a simulated user (a 'user' brief): give the run a user "
            "model (--user-model MODEL, or --model-role user=MODEL)"
        )
    return chosen


def user_turns(run: ResolvedRun, task: TaskRecord) -> int:
    """The user's turn budget on a task: its brief's, else the run's, else the default."""
    brief = task.user
    return (brief.max_turns if brief else None) or run.config.user_turns or DEFAULT_USER_TURNS


def open_user(
    run: ResolvedRun, task: TaskRecord, env: EnvConfig, *, epoch: int = 1
) -> SimulatedUser | None:
    """The simulated user of a task with a user brief, bound to the run's world if any.

    None for a task without a user (it runs as the release's do). The user's turns are
    keyed in the world under a context of their own: the env, the user's system prompt,
    the user model and its settings, the variant.

    Raises:
        UsageError: the task has a user and the run binds no user model; the world
            cannot be opened as its mode needs.
    """
    model = user_model(task)
    if model is None or task.user is None:
        return None
    user = SimulatedUser(model, task.user, task.agent_instruction, max_turns=user_turns(run, task))
    config = run.config
    if config.world is not None:
        world = shared_world(config.world, writable=config.world_mode is WorldMode.RECORD)
        settings = model.config.model_dump(mode="json", exclude_none=True)
        context = WorldContext(
            env_digest=env_digest(env),
            system_prompt_digest=text_digest(user.system_prompt),
            layout=run.points.simulator_messages,
            model=str(model),
            generate={k: v for k, v in settings.items() if k not in TRANSPORT_SETTINGS},
            state_mode="history",
            sim_checks=True,
            retries=1,
            variant=world_variant(run, epoch),
        )
        user.world = UserWorld.bound(world, context, config.world_mode, str(task.task_id))
    return user


def check_model() -> Model | None:
    """The ``simulator_fallback`` role, re-asked after a failed online check (None: unbound)."""
    chosen = model_roles().get(Role.SIMULATOR_FALLBACK.value)
    if isinstance(chosen, list):
        raise UsageError(f"role {Role.SIMULATOR_FALLBACK.value!r} must be one model, not a list")
    return chosen


def critical_calls(task: TaskRecord) -> list[PlanStep]:
    """The calls a targeted fault may hit: the plan's critical steps (all, if none marked)."""
    steps = task.reference_plan.steps if task.reference_plan else []
    return [s for s in steps if s.critical] or list(steps)


def expected_calls(task: TaskRecord) -> int | None:
    """Tool calls the task is expected to take, when its record says (fault spacing)."""
    if task.expected_tool_calls:
        return task.expected_tool_calls
    if task.reference_plan and task.reference_plan.steps:
        return len(task.reference_plan.steps)
    return None
