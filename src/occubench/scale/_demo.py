"""The offline demo: the shipped ``demo`` sweep, each run carried out in this process.

The sweep (``sweeps/demo.yaml``) runs the reference agents on the reference suite
under E0-E3 with the canned simulator; the tasks' deterministic checks grade. Each run
is a whole run through the runner (``run_shard``), logging in its own folder.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from occubench.results import SampleRow
from occubench.scale._runner import run_shard
from occubench.scale._shards import merged_rows, whole_run
from occubench.scale._spec import RunSpec, ShardResult
from occubench.scale._sweep import Sweep, expand_sweep, load_sweep

DEMO_SWEEP = "demo"
"""Name of the shipped sweep the demo runs."""


def demo_sweep(log_dir: str | Path, **config: Any) -> Sweep:
    """The shipped demo sweep logging under ``log_dir``, with configuration fields changed.

    Args:
        log_dir: Folder of the demo's runs.
        **config: ``RunConfig`` fields to set on every run (``fault_count``, ``seed``, ...).
    """
    sweep = load_sweep(DEMO_SWEEP)
    return Sweep.model_validate(
        {**sweep.model_dump(mode="json"), **config, "log_dir": str(log_dir)}
    )


RunDone = Callable[[int, int, RunSpec, ShardResult], None]
"""Called after each run of the demo: (its number, the number of runs, the run, its result)."""


def run_demo(
    log_dir: str | Path,
    *,
    display: str = "none",
    on_run: RunDone | None = None,
    **config: Any,
) -> list[SampleRow]:
    """Run every run of the demo sweep in this process; the rows of all its samples.

    ``on_run`` is told of each finished run (the command's progress line). Stops at an
    interrupted run (Ctrl-C, SIGTERM): the rows so far are returned.
    """
    runs = expand_sweep(demo_sweep(log_dir, **config))
    results = []
    for i, run in enumerate(runs, 1):
        result = run_shard(whole_run(run), display=display)
        results.append(result)
        if on_run is not None:
            on_run(i, len(runs), run, result)
        if result.interrupted:
            break
    return merged_rows(results)
