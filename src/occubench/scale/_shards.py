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
import math
import os
from collections.abc import Sequence
from functools import cache

from occubench.calls import ModelConcurrency
from occubench.config import RunConfig
from occubench.defaults import (
    DEFAULT_SHARD_CALLS_PER_SECOND,
    DEFAULT_SHARD_MIN_IN_FLIGHT,
    DEFAULT_SHARD_MIN_SAMPLES,
)
from occubench.errors import UsageError
from occubench.results import SampleRow
from occubench.scale._spec import RunSpec, ShardResult, ShardSpec

_SELECTION = ("dataset", "task_ids", "industries", "domains", "difficulty")
MIN_LATENCY = 0.001
"""Seconds a measured latency is taken to be at least (a local endpoint answers in less)."""


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


def shard_count(
    requested: int | None, tasks: int, samples: int | None = None, in_flight: int | None = None
) -> int:
    """Shards of a run: as requested, else by the machine and the run's size.

    At most one per task. By default a run of fewer than ``DEFAULT_SHARD_MIN_SAMPLES``
    samples (tasks x epochs) is one process (a second costs more than it gains there),
    a larger one a shard per core, but no more than one per ``DEFAULT_SHARD_MIN_IN_FLIGHT``
    samples in flight (``in_flight``: each shard a process with its start and memory).
    ``shards_for_latency`` may lower it once the endpoints' latency is known.
    """
    size = samples if samples is not None else tasks
    if requested is None and size < DEFAULT_SHARD_MIN_SAMPLES:
        return 1
    count = requested or os.cpu_count() or 1
    if requested is None and in_flight is not None:
        count = min(count, math.ceil(in_flight / DEFAULT_SHARD_MIN_IN_FLIGHT))
    return max(1, min(count, tasks))


def shards_for_latency(most: int, in_flight: int, latency: float | None) -> int:
    """The shards a run needs at its endpoints' latency, at most ``most``.

    ``in_flight`` samples each wait on one call at a time, so the run makes about
    ``in_flight / latency`` calls a second; one shard takes ``DEFAULT_SHARD_CALLS_PER_SECOND``
    of them with a core mostly free for the rest (harness CPU per call, answers arriving
    together). A slow endpoint needs fewer processes than a fast one. Without a latency
    (no preflight) it is ``most``.
    """
    if latency is None or most <= 1:
        return most
    calls_per_second = in_flight / max(latency, MIN_LATENCY)
    return max(1, min(most, math.ceil(calls_per_second / DEFAULT_SHARD_CALLS_PER_SECOND)))


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


def merged_concurrency(results: Sequence[ShardResult]) -> list[ModelConcurrency]:
    """Each model's adaptive limits over the shards, as one run's (counts and bounds summed).

    Shards run at once, each with its share of ``--max-connections``: the run's ceiling,
    peak and final window of a model are the sums of its shards', its lowest window the
    smallest sum a shard's low could make (each shard's lowest, summed), pauses the
    longest shard's.
    """
    by_model: dict[str, list[ModelConcurrency]] = {}
    for result in results:
        for found in result.concurrency:
            by_model.setdefault(found.model, []).append(found)
    return [
        ModelConcurrency(
            model=model,
            ceiling=sum(s.ceiling for s in shards),
            peak_in_flight=sum(s.peak_in_flight for s in shards),
            window=sum(s.window for s in shards),
            lowest_window=sum(s.lowest_window for s in shards),
            answers=sum(s.answers for s in shards),
            rate_limited=sum(s.rate_limited for s in shards),
            paused_seconds=max(s.paused_seconds for s in shards),
        )
        for model, shards in sorted(by_model.items())
    ]
