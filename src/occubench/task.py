"""The occubench @task: a dataset in the release layout, run by an agent in the LES."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample

from occubench.agent import agent_input, occubench_agent
from occubench.dataset import Dataset, TaskRecord, load_dataset
from occubench.defaults import (
    DEFAULT_DATASET_ENV,
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
from occubench.faults import FaultSettings, parse_families
from occubench.grading import needs_state, occubench_scorer
from occubench.reference._suite import REFERENCE_DATASET, reference_suite_dir
from occubench.simulator import StateMode

TASK_VERSION = "0.1.0"


def resolve_dataset_dir(dataset: str | Path | None) -> Path:
    """The dataset folder: the argument, else $OCCUBENCH_DATASET, else an error.

    The name ``reference`` stands for the built-in reference suite.
    """
    chosen = dataset or os.environ.get(DEFAULT_DATASET_ENV)
    if not chosen:
        raise ValueError(
            f"no dataset given: pass dataset=DIR (CLI: --dataset DIR) or set "
            f"{DEFAULT_DATASET_ENV}; --dataset {REFERENCE_DATASET} is the built-in suite"
        )
    if str(chosen) == REFERENCE_DATASET:
        return reference_suite_dir()
    return Path(chosen)


def split_arg(value: str | Sequence[str | int] | int | None) -> list[str] | None:
    """Accept a list or a comma-separated string (how ``-T`` arguments arrive)."""
    if value is None:
        return None
    if isinstance(value, str | int):
        value = str(value).split(",")
    items = [str(v).strip() for v in value if str(v).strip()]
    return items or None


def select_tasks(
    dataset: str | Path | None = None,
    task_ids: str | Sequence[str | int] | None = None,
    categories: str | Sequence[str] | None = None,
    domains: str | Sequence[str] | None = None,
    difficulty: str | Sequence[str | int] | None = None,
) -> tuple[Path, Dataset]:
    """The dataset folder and its tasks that pass the filters (as the task selects them).

    Filters take lists or comma-separated strings. Raises ``DatasetError`` for a
    malformed dataset and ``ValueError`` for a bad filter or a missing dataset.
    """
    root = resolve_dataset_dir(dataset)
    ids, levels = split_arg(task_ids), split_arg(difficulty)
    selection = load_dataset(
        root,
        task_ids=[int(i) for i in ids] if ids else None,
        categories=split_arg(categories),
        domains=split_arg(domains),
        difficulties=[int(d) for d in levels] if levels else None,
    )
    return root, selection


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


@task
def occubench(
    dataset: str | None = None,
    env_mode: str = DEFAULT_ENV_MODE,
    fault_count: int = DEFAULT_FAULT_COUNT,
    fault_duration: int = DEFAULT_FAULT_DURATION,
    fault_engine: str = DEFAULT_FAULT_ENGINE,
    fault_families: str | list[str] | None = None,
    fault_latency: float = DEFAULT_FAULT_LATENCY,
    seed: int = DEFAULT_SEED,
    with_plan: bool = False,
    task_ids: str | list[int] | None = None,
    categories: str | list[str] | None = None,
    domains: str | list[str] | None = None,
    difficulty: str | list[int] | None = None,
    max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS,
    votes: int = DEFAULT_VERIFIER_VOTES,
    simulator_retries: int = DEFAULT_SIMULATOR_RETRIES,
    date: str = DEFAULT_DATE,
    cache: bool = False,
    state_mode: str = StateMode.HISTORY.value,
) -> Task:
    """OccuBench: professional tasks in Language Environment Simulators.

    Args:
        dataset: Folder in the release layout (default: $OCCUBENCH_DATASET), or
            ``reference`` for the built-in reference suite.
        env_mode: E0 (clean), E1 (explicit errors), E2 (implicit degradation), E3 (mixed).
        fault_count: Fault events per task (E1-E3).
        fault_duration: Consecutive tool calls each fault event covers.
        fault_engine: "code" (seeded, logged faults) or "prompt" (the paper's way).
        fault_families: Extra fault families, mixable: persistent, cascading, targeted,
            semantic, latency (list or "a,b"); always injected by code.
        fault_latency: Seconds a latency fault delays an answer.
        seed: Seed of the fault plans.
        with_plan: Give the agent the task's solution_plan when it has one.
        task_ids: Only these task ids (list or "11,24,26").
        categories: Only these industries.
        domains: Only these domains.
        difficulty: Only these difficulty levels.
        max_tool_calls: Tool calls allowed per task.
        votes: k, judge votes per sample.
        simulator_retries: Re-asks of the simulator for a reply without JSON.
        date: The fixed date agent and simulator are told.
        cache: Cache simulator and verifier responses (Inspect's cache).
        state_mode: ``history`` (the paper's way) or ``explicit`` (JSON state patched by
            the simulator and logged after every step; needed by ``state_equals`` checks).
    """
    mode = StateMode(state_mode)
    faults = FaultSettings(
        env_mode=env_mode,
        fault_count=fault_count,
        fault_duration=fault_duration,
        engine=fault_engine,
        seed=seed,
        families=parse_families(fault_families),
        latency_seconds=fault_latency,
    )
    root, loaded = select_tasks(dataset, task_ids, categories, domains, difficulty)
    stateful = [r.task_id for r in loaded.tasks if needs_state(r.checks)]
    if stateful and mode is not StateMode.EXPLICIT:
        raise ValueError(
            f"tasks {stateful} have state_equals checks: run them with state_mode=explicit"
        )
    samples = [record_to_sample(loaded, r, with_plan=with_plan) for r in loaded.tasks]
    return Task(
        dataset=MemoryDataset(samples, name=root.name, location=str(root)),
        solver=occubench_agent(
            faults=faults,
            max_tool_calls=max_tool_calls,
            date=date,
            simulator_retries=simulator_retries,
            cache=cache,
            state_mode=mode,
        ),
        scorer=occubench_scorer(votes=votes, cache=cache),
        message_limit=DEFAULT_MESSAGE_LIMIT,
        fail_on_error=False,
        version=TASK_VERSION,
        metadata={
            "env_mode": faults.env_mode.value,
            "fault_count": fault_count,
            "fault_duration": fault_duration,
            "fault_engine": faults.engine.value,
            "fault_families": [f.value for f in faults.families],
            "seed": seed,
            "with_plan": with_plan,
            "state_mode": mode.value,
        },
    )
