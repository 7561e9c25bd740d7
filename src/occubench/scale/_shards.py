"""Split a run into shards and run one shard as its own Inspect eval set.

A shard is the run's task with ``task_ids`` narrowed to a deterministic slice of the
selected tasks (sorted ids dealt round-robin). Fault plans depend only on (seed, task
id, mode, fc, fd, expected calls), so a sharded run gives the same faults, and with
deterministic models the same verdicts, as a run in one process.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import cache
from typing import Any

from inspect_ai import eval_set
from inspect_ai.model import GenerateConfig, get_model

from occubench.analysis import SampleRow, read_runs
from occubench.process import tuned_gc
from occubench.scale._spec import RunSpec, ShardResult, ShardSpec
from occubench.scale._superseded import remove_superseded_logs
from occubench.task import occubench, select_tasks

_SELECTION_ARGS = ("dataset", "task_ids", "categories", "domains", "difficulty")


def _frozen(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


@cache
def _selection(key: tuple[tuple[str, Any], ...]) -> tuple[int, ...]:
    args: dict[str, Any] = {name: list(v) if isinstance(v, tuple) else v for name, v in key}
    _, selection = select_tasks(**args)
    return tuple(sorted(record.task_id for record in selection.tasks))


def selected_task_ids(task_args: dict[str, Any]) -> list[int]:
    """The task ids the occubench task selects with these arguments (sorted).

    The selection is the task's own (``select_tasks``), so shards select exactly what
    a one-process run would; it is loaded once per process and set of filters.
    Raises ``DatasetError`` or ``ValueError`` on bad input.
    """
    key = tuple((name, _frozen(task_args.get(name))) for name in _SELECTION_ARGS)
    return list(_selection(key))


def shard_count(requested: int | None, tasks: int) -> int:
    """Shards of a run: as requested, else the machine's cores; at most one per task."""
    return max(1, min(requested or os.cpu_count() or 1, tasks))


def plan_shards(run: RunSpec, count: int) -> list[ShardSpec]:
    """Deal the run's selected task ids into ``count`` disjoint shards.

    The ids are sorted and dealt round-robin, so the plan depends only on the
    selection and ``count`` (the same command finds the same shards again). ``count``
    is capped by the number of tasks; every shard has at least one task. The run's
    connections and samples at once are split over the shards (``split_concurrency``).

    Raises:
        ValueError: when the selection is empty or ``count`` is below 1.

    """
    if count < 1:
        raise ValueError(f"the number of shards must be at least 1 (got {count})")
    ids = selected_task_ids(run.task_args)
    if not ids:
        raise ValueError("the task selection is empty: no shard to run")
    count = min(count, len(ids))
    share = split_concurrency(run, count)
    return [
        ShardSpec(run=share, index=i + 1, count=count, task_ids=ids[i::count]) for i in range(count)
    ]


def _shared(options: dict[str, Any], count: int) -> dict[str, Any]:
    """GenerateConfig fields with ``max_connections`` split over ``count`` shards."""
    total = options.get("max_connections")
    return options if total is None else {**options, "max_connections": -(-total // count)}


def split_concurrency(run: RunSpec, count: int) -> RunSpec:
    """The run with its concurrency split over ``count`` shards.

    ``max_connections`` (of every model) and ``max_samples`` are the run's totals: each
    shard gets an even share, rounded up, so N shards put about the load of one process
    on a rate-limited API.
    """
    return run.model_copy(
        update={
            "generate": _shared(run.generate, count),
            "role_generate": {role: _shared(g, count) for role, g in run.role_generate.items()},
            "max_samples": None if run.max_samples is None else -(-run.max_samples // count),
        }
    )


def _merged(config: GenerateConfig, extra: dict[str, Any] | None) -> GenerateConfig:
    return config.merge(GenerateConfig(**extra)) if extra else config


def run_shard(spec: ShardSpec, display: str = "none") -> ShardResult:
    """Run one shard as an Inspect eval set in its own log folder (resumable).

    Usable in a worker process (``python -m occubench.shard_worker``) and in a Ray
    task: models are built here from their names, with the run's generate options.
    The shard then tidies its folder (``remove_superseded_logs``) and reads its own
    samples into the result, so that shards read their logs in parallel and the
    caller's summary needs no log reading.
    """
    config = GenerateConfig(**spec.run.generate)
    agent = get_model(spec.run.agent, config=_merged(config, spec.run.agent_generate))
    roles = {
        role: get_model(name, config=_merged(config, spec.run.role_generate.get(role)))
        for role, name in spec.run.roles.items()
    }
    with tuned_gc():
        success, logs = eval_set(
            occubench(**spec.task_args()),
            log_dir=spec.log_dir,
            model=agent,
            model_roles=roles,  # type: ignore[arg-type]
            epochs=spec.run.epochs,
            max_samples=spec.run.max_samples,
            retry_on_error=spec.run.retry_on_error,
            fail_on_error=False,
            display=display,  # type: ignore[arg-type]
            **spec.run.eval_options,
        )
        locations = [log.location for log in logs]
        remove_superseded_logs(locations)
        rows = read_runs(locations)  # the eval's objects are still about: keep the tuning
    return spec.result(
        success,
        logs=locations,
        rows=rows,
        error=None if success else "the shard's eval set did not complete",
    )


def merged_rows(results: Sequence[ShardResult]) -> list[SampleRow]:
    """Every sample of the shards, in shard order."""
    return [row for result in results for row in result.rows]
