"""The ``occubench`` command (also ``python -m occubench``), started with a tuned collector."""

from __future__ import annotations

from occubench.scale import tune_startup_gc


def main() -> None:
    """Console-script entry point: tune the collector, then load and run the commands."""
    tune_startup_gc()
    from occubench.cli import main as run_cli  # Inspect and every command: after the tuning

    run_cli()


if __name__ == "__main__":
    main()
