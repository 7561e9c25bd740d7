"""The occubench @task: a dataset in the release layout, run by an agent in the LES.

The task only wires: its keyword arguments are validated into a ``RunConfig`` (the one
declaration of a run's settings; the task's signature is generated from its fields),
resolved once into a ``ResolvedRun``, which selects the samples and configures the
agent, the environment and the scorer.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.solver import Solver, chain

from occubench.agent import agent_input, inspect_agent, occubench_agent, world_in_log
from occubench.config import (
    DATASET_DIGEST_METADATA,
    ResolvedRun,
    RunConfig,
    keyword_parameters,
    setting_names,
)
from occubench.costs import admission
from occubench.dataset import Dataset, TaskRecord, content_digest
from occubench.defaults import (
    DEFAULT_AUDIT_PLANS_PER_ENV,
    DEFAULT_AUDIT_RULE_CHECKS,
    DEFAULT_DATE,
    DEFAULT_MESSAGE_LIMIT,
    DEFAULT_SEED,
    DEFAULT_SERVE_PORT,
)
from occubench.errors import UsageError
from occubench.fidelity import AuditWorld, audit_task
from occubench.grading import needs_state, occubench_scorer
from occubench.protocols import MessageStyle
from occubench.serving import DEFAULT_LINGER, Transport, Unsubmitted
from occubench.simulator import StateMode
from occubench.worlds import WORLD_METADATA, WorldMode

TASK_VERSION = "0.1.0"

T = TypeVar("T", bound=Callable[..., Task])


def record_to_sample(
    dataset: Dataset,
    record: TaskRecord,
    *,
    with_plan: bool = False,
    style: MessageStyle = MessageStyle.OCCUBENCH,
) -> Sample:
    """One task as a Sample: id = task_id, input = instruction (+ plan), target = rubric.

    The input is the agent's first user message in the protocol's ``style``.

    The metadata carries the grouping keys (industry, domain, scenario, difficulty)
    and the full task record and env config, so that a log describes itself.
    """
    plan = record.solution_plan if with_plan else None
    return Sample(
        id=record.task_id,
        input=agent_input(record.agent_instruction, plan, style),
        target=record.verification_plan,
        metadata={
            "task_id": record.task_id,
            "scenario": record.task_scenario_name,
            "industry": dataset.industry(record),
            "domain": dataset.domain(record),
            "difficulty": record.difficulty_level,
            "env_name": record.env_name,
            "task": record.model_dump(mode="json", exclude_none=True),
            "env": dataset.env(record).model_dump(mode="json", exclude_none=True),
        },
    )


def agent_solver(run: ResolvedRun) -> Solver:
    """The agent under test: an agent program over MCP, an Inspect agent, or the built-in loop.

    Each is preceded by the run's admission step: with a spending limit (``--budget``) a
    sample it cannot pay for does not start.
    """
    if run.config.agent_command:
        from occubench.serving import agent_program  # MCP and the SDK's types: only here

        agent = agent_program(run)
    elif run.config.agent:
        agent = inspect_agent(run)
    else:
        agent = occubench_agent(run)
    return chain(admission(), agent)


def benchmark_task(run: ResolvedRun, solver: Solver | None = None) -> Task:
    """The Inspect task of a resolved run (its agent, unless ``solver`` is given).

    Raises:
        DatasetError: the dataset is malformed or a filter names what it lacks.
        UsageError: no dataset is named, or tasks with ``state_equals`` checks are run
            without explicit state.
    """
    config, points = run.config, run.points
    loaded = config.load_tasks()
    config.check_fields(loaded.tasks)  # a setting the tasks cannot serve stops the run
    stateful = [r.task_id for r in loaded.tasks if needs_state(r.checks)]
    if stateful and config.state_mode is not StateMode.EXPLICIT:
        raise UsageError(
            f"tasks {stateful} have state_equals checks: run them with state_mode=explicit"
        )
    samples = [
        record_to_sample(loaded, r, with_plan=config.with_plan, style=points.agent_messages)
        for r in loaded.tasks
    ]
    return Task(
        dataset=MemoryDataset(samples, name=loaded.root.name, location=str(loaded.root)),
        solver=solver or agent_solver(run),
        scorer=occubench_scorer(
            votes=config.votes,
            cache=config.cache,
            style=points.verifier_messages,
            max_tokens=points.verifier_max_tokens or None,
            template=run.release.verifier if run.release is not None else None,
            guard=config.exploit_guard,
        ),
        message_limit=None if points.max_turns else DEFAULT_MESSAGE_LIMIT,
        fail_on_error=False,
        version=TASK_VERSION,
        metadata={**run_metadata(run), DATASET_DIGEST_METADATA: content_digest(loaded.root)},
    )


def run_metadata(run: ResolvedRun) -> dict[str, object]:
    """The log's task metadata: the resolved run, and the world it uses (if any).

    Raises:
        UsageError: the run's world cannot be opened as its mode needs.
    """
    world = world_in_log(run)
    if world is None:
        return run.metadata()
    return {**run.metadata(), WORLD_METADATA: world.model_dump(mode="json")}


def run_config(task_name: str, given: Mapping[str, Any]) -> RunConfig:
    """The run configuration of a task's keyword arguments (``-T name=value``).

    Raises:
        UsageError: a name that is no setting (with the nearest setting's name, if one
            is close), or a value a setting refuses.
    """
    names = setting_names(RunConfig)
    unknown = sorted(set(given) - set(names))
    if unknown:
        said = []
        for name in unknown:
            near = difflib.get_close_matches(name, list(names), n=1)
            said.append(f"{name} (did you mean {near[0]}?)" if near else name)
        raise UsageError(
            f"the {task_name} task has no parameter {', '.join(said)}; its parameters are "
            "the run settings (RunConfig's fields)"
        )
    return RunConfig.model_validate(dict(given))


def takes_run_config(task_function: T) -> T:
    """Give a task that takes ``**config`` a signature with every ``RunConfig`` field.

    Inspect reads a task's parameters from its signature: the listing of task
    parameters and ``-T`` see each field with its default, after the task's own
    parameters. ``**config`` stays in it, so that Inspect passes a name that is no
    parameter on to the task, which refuses it (``run_config``) instead of dropping it.
    """
    declared = list(inspect.signature(task_function).parameters.values())
    own = [p for p in declared if p.kind is not inspect.Parameter.VAR_KEYWORD]
    rest = [p for p in declared if p.kind is inspect.Parameter.VAR_KEYWORD]
    parameters = [*own, *keyword_parameters(RunConfig), *rest]
    task_function.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    return task_function


@task
@takes_run_config
def occubench(**config: Any) -> Task:
    """OccuBench: professional tasks in Language Environment Simulators.

    Every argument is a ``RunConfig`` field (the settings reference documents each; lists
    also come comma-separated, as ``-T`` gives them): the dataset (a folder or
    ``reference``) and its filters (``task_ids``, ``industries``, ``domains``,
    ``difficulty``); the env mode (E0-E3) with its fault count, duration, engine, extra
    fault families (``faults``), latency and seed; ``with_plan``; ``state_mode``; the
    verifier's ``votes``; the fixed ``date``; ``cache``; the ``protocol`` (``paper``, the
    default, or ``occubench``) and its single points (None: the protocol's value);
    ``prompts_from``, a clone of the release to take its prompt wording from; and the
    agent under test when it is not the built-in loop: an Inspect ``agent`` (with
    ``agent_args``) or an ``agent_command`` reaching each sample's environment over MCP
    (with ``agent_time_limit`` and ``submit_tool``). The online simulator checks
    (``sim_checks``, a protocol point) re-ask the ``simulator_fallback`` role when it is
    bound; ``simulator_seed`` seeds the simulator. A name that is no setting is refused.
    """
    return benchmark_task(ResolvedRun.of(run_config("occubench", config)))


@task
def fidelity_audit(
    dataset: str | None = None,
    date: str = DEFAULT_DATE,
    seed: int = DEFAULT_SEED,
    max_plans: int = DEFAULT_AUDIT_PLANS_PER_ENV,
    rule_checks: int = DEFAULT_AUDIT_RULE_CHECKS,
    world: str | None = None,
    world_mode: str = WorldMode.RECORD.value,
    world_variant: int | str = 0,
) -> Task:
    """The fidelity audit of a simulator (the main model and the ``simulator`` role).

    One sample per probe trajectory of every environment of ``dataset``; with a
    ``verifier`` role bound, a seeded sample of ``rule_checks`` observations (seed
    ``seed``) is judged for invented rules. ``occubench audit`` runs it per simulator
    and pools the checks into the report (``occubench.fidelity.run_audit``). With ``world``
    the simulator answers from it first (``world_mode``, ``world_variant`` as for a run).
    """
    used = None
    if world is not None:
        used = AuditWorld.model_validate(
            {"path": world, "mode": world_mode, "variant": world_variant}
        )
    return audit_task(
        dataset,
        date=date,
        seed=seed,
        max_plans=max_plans,
        rule_checks=rule_checks,
        world=used,
    )


@task
@takes_run_config
def serve(
    transport: str = Transport.STDIO.value,
    host: str = "127.0.0.1",
    port: int = DEFAULT_SERVE_PORT,
    unsubmitted: str = Unsubmitted.GRADE.value,
    session_limit: float | None = None,
    linger: float = DEFAULT_LINGER,
    allowed_hosts: list[str] | None = None,
    **config: Any,
) -> Task:
    """One task's environment as an MCP server, for one session (``occubench serve``).

    ``config`` holds ``RunConfig`` fields, as for the ``occubench`` task; the selection
    must be one task. The session is served over ``transport`` (stdio, or streamable
    HTTP on ``host:port``), ends at the submission, when the client leaves, after
    ``session_limit`` seconds or on SIGINT/SIGTERM, and is graded and logged as a sample
    (``unsubmitted``: ``grade`` a session without a submission on what it did, or
    record it as an ``error``). Over HTTP a client must send the token (``$OCCUBENCH_SERVE_TOKEN``
    or the one printed at start) and address one of the loopback names, ``host`` or
    ``allowed_hosts``.
    """
    from occubench.serving import mcp_session  # the MCP server: only for this task

    run = ResolvedRun.of(run_config("serve", config))
    served = benchmark_task(
        run,
        solver=mcp_session(
            run,
            Transport(transport),
            host=host,
            port=port,
            unsubmitted=Unsubmitted(unsubmitted),
            session_limit=session_limit,
            linger=linger,
            allowed_hosts=allowed_hosts or (),
        ),
    )
    if len(served.dataset) != 1:
        raise UsageError(f"serve takes one task; the selection has {len(served.dataset)}")
    return served
