"""The ``occubench run`` command line the agent-program tests share (reference suite, offline)."""

from __future__ import annotations

from pathlib import Path


def run_args(log_dir: Path, *extra: str) -> list[str]:
    """``run`` on the reference suite with its plan, the canned simulator, one worker."""
    return [
        "run",
        "--dataset",
        "reference",
        "--with-plan",
        "--protocol",
        "occubench",
        "--simulator-model",
        "occubench/canned",
        "--workers",
        "1",
        "--display",
        "none",
        "--log-dir",
        str(log_dir),
        *extra,
    ]
