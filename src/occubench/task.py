"""The occubench @task: a dataset in the release layout, run by an agent in the LES.

The task only wires: its keyword arguments are validated into a ``RunConfig`` (the one
declaration of a run's settings), which selects the samples and configures the agent
loop and the scorer.
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.solver import Solver, chain

from occubench.agent import agent_input, inspect_agent, occubench_agent
from occubench.config import (
    CONFIG_METADATA,
    POINTS_METADATA,
    RELEASE_METADATA,
    ReleasePrompts,
    RunConfig,
)
from occubench.costs import admission
from occubench.dataset import Dataset, TaskRecord
from occubench.defaults import (
    DEFAULT_AGENT_TIME_LIMIT,
    DEFAULT_AUDIT_PLANS_PER_ENV,
    DEFAULT_AUDIT_RULE_CHECKS,
    DEFAULT_DATE,
    DEFAULT_ENV_MODE,
    DEFAULT_FAULT_COUNT,
    DEFAULT_FAULT_DURATION,
    DEFAULT_FAULT_LATENCY,
    DEFAULT_MESSAGE_LIMIT,
    DEFAULT_PROTOCOL,
    DEFAULT_SEED,
    DEFAULT_SERVE_PORT,
    DEFAULT_SUBMIT_TOOL,
    DEFAULT_VERIFIER_VOTES,
)
from occubench.fidelity import audit_task
from occubench.grading import needs_state, occubench_scorer
from occubench.protocols import MessageStyle
from occubench.serving import DEFAULT_LINGER, Transport, Unsubmitted, agent_program, mcp_session
from occubench.simulator import StateMode

TASK_VERSION = "0.1.0"


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


def agent_solver(config: RunConfig) -> Solver:
    """The agent under test: an agent program over MCP, an Inspect agent, or the built-in loop.

    Each is preceded by the run's admission step: with a spending limit (``--budget``) a
    sample it cannot pay for does not start.
    """
    if config.agent_command:
        agent = agent_program(config)
    elif config.agent:
        agent = inspect_agent(config)
    else:
        agent = occubench_agent(config)
    return chain(admission(), agent)


def benchmark_task(config: RunConfig, solver: Solver | None = None) -> Task:
    """The Inspect task of a run configuration (its agent, unless ``solver`` is given).

    Raises:
        DatasetError: the dataset is malformed or a filter names what it lacks.
        ValueError: no dataset is named, or tasks with ``state_equals`` checks are run
            without explicit state.
    """
    loaded = config.load_tasks()
    stateful = [r.task_id for r in loaded.tasks if needs_state(r.checks)]
    if stateful and config.state_mode is not StateMode.EXPLICIT:
        raise ValueError(
            f"tasks {stateful} have state_equals checks: run them with state_mode=explicit"
        )
    points = config.points()
    release = ReleasePrompts.read(config.prompts_from) if config.prompts_from else None
    samples = [
        record_to_sample(loaded, r, with_plan=config.with_plan, style=points.agent_messages)
        for r in loaded.tasks
    ]
    return Task(
        dataset=MemoryDataset(samples, name=loaded.root.name, location=str(loaded.root)),
        solver=solver or agent_solver(config),
        scorer=occubench_scorer(
            votes=config.votes,
            cache=config.cache,
            style=points.verifier_messages,
            max_tokens=points.verifier_max_tokens or None,
            template=release.verifier if release is not None else None,
        ),
        message_limit=None if points.max_turns else DEFAULT_MESSAGE_LIMIT,
        fail_on_error=False,
        version=TASK_VERSION,
        metadata={
            CONFIG_METADATA: config.model_dump(mode="json"),
            POINTS_METADATA: points.model_dump(mode="json"),
            **({RELEASE_METADATA: release.files} if release is not None else {}),
        },
    )


@task
def occubench(
    dataset: str | None = None,
    task_ids: str | list[int] | None = None,
    categories: str | list[str] | None = None,
    domains: str | list[str] | None = None,
    difficulty: str | list[int] | None = None,
    env_mode: str = DEFAULT_ENV_MODE,
    fault_count: int = DEFAULT_FAULT_COUNT,
    fault_duration: int = DEFAULT_FAULT_DURATION,
    fault_engine: str | None = None,
    faults: str | list[str] | None = None,
    fault_latency: float = DEFAULT_FAULT_LATENCY,
    seed: int = DEFAULT_SEED,
    with_plan: bool = False,
    state_mode: str = StateMode.HISTORY.value,
    votes: int = DEFAULT_VERIFIER_VOTES,
    date: str = DEFAULT_DATE,
    cache: bool = False,
    protocol: str = DEFAULT_PROTOCOL,
    validate_tool_args: bool | None = None,
    max_turns: int | None = None,
    max_tool_calls: int | None = None,
    stop_on_finish: bool | None = None,
    carry_reasoning: bool | None = None,
    agent_errors_end_loop: bool | None = None,
    agent_max_tokens: int | None = None,
    simulator_max_tokens: int | None = None,
    verifier_max_tokens: int | None = None,
    simulator_retries: int | None = None,
    pass_raw_observation: bool | None = None,
    agent_messages: str | None = None,
    simulator_messages: str | None = None,
    verifier_messages: str | None = None,
    error_hints: bool | None = None,
    errors_count_as_failures: bool | None = None,
    prompts_from: str | None = None,
    agent: str | None = None,
    agent_args: str | dict[str, Any] | None = None,
    agent_command: str | None = None,
    agent_time_limit: float = DEFAULT_AGENT_TIME_LIMIT,
    submit_tool: str = DEFAULT_SUBMIT_TOOL,
    sim_checks: bool | None = None,
    simulator_seed: int | None = None,
) -> Task:
    """OccuBench: professional tasks in Language Environment Simulators.

    Every argument is a ``RunConfig`` field (see ``occubench.config``, whose field
    descriptions document them; lists also come comma-separated, as ``-T`` gives them):
    the dataset (a folder or ``reference``) and its filters (``task_ids``,
    ``categories``, ``domains``, ``difficulty``); the env mode (E0-E3) with its fault
    count, duration, engine, extra fault families (``faults``), latency and seed;
    ``with_plan``; ``state_mode``; the judge's ``votes``; the fixed ``date``; ``cache``;
    the ``protocol`` (``paper``, the default, or ``occubench``) and its single points
    (None: the protocol's value); ``prompts_from``, a clone of the release to take its
    prompt wording from; and the agent under test when it is not the built-in loop: an
    Inspect ``agent`` (with ``agent_args``) or an ``agent_command`` reaching each
    sample's environment over MCP (with ``agent_time_limit`` and ``submit_tool``). The
    online simulator checks (``sim_checks``, a protocol point) re-ask the
    ``simulator_fallback`` role when it is bound; ``simulator_seed`` seeds the simulator.
    """
    return benchmark_task(RunConfig.model_validate(dict(locals())))


@task
def fidelity_audit(
    dataset: str | None = None,
    date: str = DEFAULT_DATE,
    seed: int = DEFAULT_SEED,
    max_plans: int = DEFAULT_AUDIT_PLANS_PER_ENV,
    rule_checks: int = DEFAULT_AUDIT_RULE_CHECKS,
) -> Task:
    """The fidelity audit of a simulator (the main model and the ``simulator`` role).

    One sample per probe trajectory of every environment of ``dataset``; with a
    ``verifier`` role bound, a seeded sample of ``rule_checks`` observations (seed
    ``seed``) is judged for invented rules. ``occubench audit`` runs it per simulator
    and pools the checks into the report (``occubench.fidelity.run_audit``).
    """
    return audit_task(dataset, date=date, seed=seed, max_plans=max_plans, rule_checks=rule_checks)


@task
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
    run = RunConfig.model_validate(config)
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
        raise ValueError(f"serve takes one task; the selection has {len(served.dataset)}")
    return served
