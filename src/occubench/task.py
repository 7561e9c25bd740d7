"""The occubench @task: a dataset in the release layout, run by an agent in the LES.

The task only wires: its keyword arguments are validated into a ``RunConfig`` (the one
declaration of a run's settings), which selects the samples and configures the agent
loop and the scorer.
"""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample

from occubench.agent import agent_input, occubench_agent
from occubench.config import CONFIG_METADATA, RunConfig
from occubench.dataset import Dataset, TaskRecord
from occubench.defaults import (
    DEFAULT_AUDIT_PLANS_PER_ENV,
    DEFAULT_AUDIT_RULE_CHECKS,
    DEFAULT_DATE,
    DEFAULT_ENV_MODE,
    DEFAULT_FAULT_COUNT,
    DEFAULT_FAULT_DURATION,
    DEFAULT_FAULT_ENGINE,
    DEFAULT_FAULT_LATENCY,
    DEFAULT_MAX_TOOL_CALLS,
    DEFAULT_MESSAGE_LIMIT,
    DEFAULT_SEED,
    DEFAULT_SIMULATOR_RETRIES,
    DEFAULT_VERIFIER_VOTES,
)
from occubench.fidelity import audit_task
from occubench.grading import needs_state, occubench_scorer
from occubench.simulator import StateMode

TASK_VERSION = "0.1.0"


def record_to_sample(dataset: Dataset, record: TaskRecord, *, with_plan: bool = False) -> Sample:
    """One task as a Sample: id = task_id, input = instruction (+ plan), target = rubric.

    The metadata carries the grouping keys (industry, domain, scenario, difficulty)
    and the full task record and env config, so that a log describes itself.
    """
    plan = record.solution_plan if with_plan else None
    return Sample(
        id=record.task_id,
        input=agent_input(record.agent_instruction, plan),
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


def benchmark_task(config: RunConfig) -> Task:
    """The Inspect task of a run configuration.

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
    samples = [record_to_sample(loaded, r, with_plan=config.with_plan) for r in loaded.tasks]
    return Task(
        dataset=MemoryDataset(samples, name=loaded.root.name, location=str(loaded.root)),
        solver=occubench_agent(config),
        scorer=occubench_scorer(votes=config.votes, cache=config.cache),
        message_limit=DEFAULT_MESSAGE_LIMIT,
        fail_on_error=False,
        version=TASK_VERSION,
        metadata={CONFIG_METADATA: config.model_dump(mode="json")},
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
    fault_engine: str = DEFAULT_FAULT_ENGINE,
    faults: str | list[str] | None = None,
    fault_latency: float = DEFAULT_FAULT_LATENCY,
    seed: int = DEFAULT_SEED,
    with_plan: bool = False,
    state_mode: str = StateMode.HISTORY.value,
    max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS,
    votes: int = DEFAULT_VERIFIER_VOTES,
    simulator_retries: int = DEFAULT_SIMULATOR_RETRIES,
    date: str = DEFAULT_DATE,
    cache: bool = False,
) -> Task:
    """OccuBench: professional tasks in Language Environment Simulators.

    Every argument is a ``RunConfig`` field (see ``occubench.config``, whose field
    descriptions document them; lists also come comma-separated, as ``-T`` gives them):
    the dataset (a folder or ``reference``) and its filters (``task_ids``,
    ``categories``, ``domains``, ``difficulty``); the env mode (E0-E3) with its fault
    count, duration, engine (``code`` or ``prompt``), extra fault families (``faults``),
    latency and seed; ``with_plan``; ``state_mode`` (``history`` or ``explicit``); the
    loop's ``max_tool_calls``; the judge's ``votes``; ``simulator_retries``; the fixed
    ``date``; and ``cache``.
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
