"""Run planned shards on an executor, with the live view, and merge what they logged."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import nullcontext
from importlib.util import find_spec
from pathlib import Path

from rich.console import Console

from occubench.errors import UsageError
from occubench.scale._local import WorkerPool, run_local
from occubench.scale._progress import ProgressView
from occubench.scale._ray import run_ray
from occubench.scale._spec import Executor, ShardResult, ShardSpec


def absolute_location(location: str | Path) -> str:
    """A log location every worker resolves alike: URLs as they are, paths made absolute."""
    text = str(location)
    return text if "://" in text else str(Path(text).resolve())


def check_executor(executor: Executor | str) -> Executor:
    """The executor, if it can run here.

    Raises:
        UsageError: for an unknown name, or ``ray`` when Ray is not installed.

    """
    try:
        chosen = Executor(executor)
    except ValueError:
        known = ", ".join(e.value for e in Executor)
        raise UsageError(f"unknown executor {executor!r}; use {known}") from None
    if chosen is Executor.RAY and find_spec("ray") is None:
        raise UsageError("--executor ray needs Ray: pip install 'occubench[ray]'")
    return chosen


def execute(
    shards: Sequence[ShardSpec],
    executor: Executor | str = Executor.LOCAL,
    *,
    parallel: int | None = None,
    ray_address: str | None = None,
    console: Console | None = None,
    pool: WorkerPool | None = None,
    started: Callable[[], None] | None = None,
) -> list[ShardResult]:
    """Run the shards; one result per shard, in order.

    Args:
        shards: Shards of one or more runs (``plan_shards``).
        executor: ``local`` (worker processes) or ``ray`` (Ray tasks).
        parallel: Local executor: worker processes at once (default: one per shard).
            Ray decides by the shards' resources instead.
        ray_address: Ray cluster to connect to (default: start a local instance).
        console: Where to show the live progress view (none when not given).
        pool: Local executor: workers started before, which take the first shards
            (``start_workers``).
        started: Local executor: called once the shards that run at once were handed out.

    """
    view = ProgressView(shards, console) if console is not None else None
    with view or nullcontext():
        if Executor(executor) is Executor.RAY:
            return run_ray(shards, ray_address, view)
        return run_local(shards, parallel or len(shards), view, pool, started)
