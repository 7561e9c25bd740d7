"""Split a run into shards: disjoint slices of its selected tasks.

A shard is the run's configuration with ``task_ids`` narrowed to a deterministic slice
of the selected tasks (sorted ids dealt round-robin). Fault plans depend only on
(seed, task id, mode, fc, fd, expected calls), so a sharded run gives the same faults,
and with deterministic models the same verdicts, as a run in one process. Shards log
in subfolders of the run's folder; a run carried out in this process is one shard
that logs in the run's folder itself (``whole_run``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from functools import cache

from occubench.config import RunConfig
from occubench.defaults import DEFAULT_SHARD_MIN_SAMPLES
from occubench.errors import UsageError
from occubench.results import SampleRow
from occubench.scale._spec import RunSpec, ShardResult, ShardSpec

_SELECTION = ("dataset", "task_ids", "industries", "domains", "difficulty")


@cache
def _selection(key: str) -> tuple[int, ...]:
    config = RunConfig.model_validate_json(key)
    return tuple(sorted(record.task_id for record in config.load_tasks().tasks))


def selected_task_ids(config: RunConfig) -> list[int]:
    """The task ids the configuration selects (sorted), as the task selects them.

    Loaded once per process and selection. Raises ``DatasetError`` or ``ValueError``
    on bad input.
    """
    selection = config.model_dump(mode="json", include=set(_SELECTION))
    selection["dataset"] = str(config.dataset_dir().resolve())
    return list(_selection(json.dumps(selection, sort_keys=True)))


def shard_count(requested: int | None, tasks: int, samples: int | None = None) -> int:
    """Shards of a run: as requested, else by size; at most one per task.

    By default a run of fewer than ``DEFAULT_SHARD_MIN_SAMPLES`` samples (tasks x epochs)
    is one process (a second costs more than it gains there), a larger one a shard per core.
    """
    size = samples if samples is not None else tasks
    if requested is None and size < DEFAULT_SHARD_MIN_SAMPLES:
        return 1
    return max(1, min(requested or os.cpu_count() or 1, tasks))


def plan_shards(run: RunSpec, count: int) -> list[ShardSpec]:
    """Deal the run's selected task ids into ``count`` disjoint shards.

    The ids are sorted and dealt round-robin, so the plan depends only on the
    selection and ``count`` (the same command finds the same shards again). ``count``
    is capped by the number of tasks; every shard has at least one task. The run's
    connections and samples at once are split over the shards (``ShardSpec.generate_config``).

    Raises:
        UsageError: when the selection is empty.
        ValueError: when ``count`` is below 1.

    """
    if count < 1:
        raise ValueError(f"the number of shards must be at least 1 (got {count})")
    ids = selected_task_ids(run.config)
    if not ids:
        raise UsageError("the task selection is empty: no shard to run")
    count = min(count, len(ids))
    return [
        ShardSpec(run=run, index=i + 1, count=count, task_ids=ids[i::count]) for i in range(count)
    ]


def whole_run(run: RunSpec) -> ShardSpec:
    """The run as one shard that logs in the run's own folder (a run in this process).

    Raises:
        UsageError: when the selection is empty.
    """
    (shard,) = plan_shards(run, 1)
    return shard.model_copy(update={"whole": True})


def merged_rows(results: Sequence[ShardResult]) -> list[SampleRow]:
    """Every sample of the shards, in shard order."""
    return [row for result in results for row in result.rows]
