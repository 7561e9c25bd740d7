"""Run the diagnosis of a set of logs through the runner."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from inspect_ai.model import Model

from occubench.config import EvalOptions
from occubench.diagnosis._report import DIAGNOSE_TASK, DiagnosisRow, read_diagnoses
from occubench.roles import Role
from occubench.scale import run_eval


class Diagnosed(NamedTuple):
    """What a diagnosis run gave."""

    success: bool
    """Whether its eval set completed (else: run it again to resume)."""
    rows: list[DiagnosisRow]
    """The classified trajectories."""


def run_diagnosis(
    logs: Sequence[str | Path],
    *,
    verifier: str | Model,
    log_dir: str,
    votes: int,
    options: EvalOptions | None = None,
    cache: bool = False,
    display: str = "none",
) -> Diagnosed:
    """Classify the failed trajectories of ``logs`` (``occubench/diagnose``), resumably."""
    paths = [str(Path(p).resolve()) if "://" not in str(p) else str(p) for p in logs]
    outcome = run_eval(
        DIAGNOSE_TASK,
        {"logs": paths, "votes": votes, "cache": cache},
        log_dir=log_dir,
        model=verifier,
        roles={Role.VERIFIER: verifier},
        options=options or EvalOptions(),
        display=display,
    )
    return Diagnosed(outcome.success, read_diagnoses(outcome.logs))
