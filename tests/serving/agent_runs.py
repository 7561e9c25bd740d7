"""What the agent-program tests share: the ``occubench run`` command line (reference suite,
offline) and the test program's command line."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

PROGRAM = Path(__file__).with_name("agent_program.py")
"""The test agent program (``agent_program.py``: a mode per wire, a scripted policy)."""


def command(mode: str, policy: str = "careful", *extra: str) -> str:
    """The test program's command line, its paths quoted (a clone's path may hold a space)."""
    return shlex.join([sys.executable, str(PROGRAM), mode, policy, *extra])


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
