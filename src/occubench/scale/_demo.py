"""The offline demo: the shipped ``demo`` sweep, each run carried out in this process.

The sweep (``sweeps/demo.yaml``) runs the reference agents on the reference suite
under E0-E3 with the canned simulator; the tasks' deterministic checks grade. Each run
is a whole run through the runner (``run_shard``), logging in its own folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from occubench.analysis import SampleRow
from occubench.scale._runner import run_shard
from occubench.scale._shards import merged_rows, whole_run
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


def run_demo(log_dir: str | Path, *, display: str = "none", **config: Any) -> list[SampleRow]:
    """Run every run of the demo sweep in this process; the rows of all its samples."""
    runs = expand_sweep(demo_sweep(log_dir, **config))
    return merged_rows([run_shard(whole_run(run), display=display) for run in runs])
