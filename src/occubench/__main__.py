"""The ``occubench`` command (also ``python -m occubench``), started with a tuned collector."""

from __future__ import annotations

import gc

from occubench.defaults import DEFAULT_GC_THRESHOLDS


def main() -> None:
    """Console-script entry point: tune the collector, then load and run the commands."""
    # the rule of tune_startup_gc (scale/_interpreter.py), applied here: occubench.scale
    # imports Inspect, and the collector is tuned before any room is imported
    gc.set_threshold(*DEFAULT_GC_THRESHOLDS)
    from occubench.cli import main as run_cli  # Inspect and every command: after the tuning

    run_cli()


if __name__ == "__main__":
    main()
