"""``occubench diagnose``: why agents failed, each failed trajectory classified by a verifier."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Annotated

import typer

from occubench.cli._common import console, exit_with, user_errors
from occubench.cli._options import Display, LogFiles
from occubench.config import EvalOptions
from occubench.defaults import DEFAULT_VERIFIER_VOTES
from occubench.errors import ExitCode


def diagnose(
    logs: LogFiles,
    verifier_model: Annotated[
        str, typer.Option(help="Verifier that classifies (an Inspect model).")
    ],
    votes: Annotated[int, typer.Option(min=1, help="k votes per failed trajectory.")] = (
        DEFAULT_VERIFIER_VOTES
    ),
    log_dir: Annotated[
        str | None,
        typer.Option(help="Log folder of the diagnosis (default: logs/diagnose-<hash>)."),
    ] = None,
    cache: Annotated[bool, typer.Option(help="Cache the verifier's responses.")] = False,
    max_connections: Annotated[int, typer.Option(min=1, help="Concurrent verifier requests.")] = 32,
    out: Annotated[Path | None, typer.Option(help="Write the whole diagnosis (JSON).")] = None,
    display: Display = "none",
) -> None:
    """Classify every failed trajectory (taxonomy below) with k votes of the verifier.

    Classes: skipped_check, wrong_order, violated_constraint, degraded_value,
    abandoned_after_error, gave_up_early, tool_misuse, wrong_answer, and
    simulator_caused (listed apart: not the agent's failure). Running the same command
    again resumes.
    """
    from occubench.diagnosis import diagnosis_report, diagnosis_tables, run_diagnosis
    from occubench.results import log_files

    with user_errors():
        files = log_files(logs)
        digest = hashlib.sha256(json.dumps([files, verifier_model, votes]).encode()).hexdigest()[
            :10
        ]
        folder = log_dir or str(Path("logs") / f"diagnose-{digest}")
        console.print(f"Logs: {folder}", highlight=False)
        success, rows = run_diagnosis(
            files,
            verifier=verifier_model,
            log_dir=folder,
            votes=votes,
            options=EvalOptions(max_connections=max_connections),
            cache=cache,
            display=display,
        )
    report = diagnosis_report(rows)
    for table in diagnosis_tables(report):
        console.print(table)
    console.print(
        f"{len(rows)} failed trajectories classified, {votes} vote(s) each.", highlight=False
    )
    if out is not None:
        out.write_text(report.model_dump_json(indent=2))
        console.print(f"Full diagnosis: {out}", highlight=False)
    if not success:
        console.print("The diagnosis did not complete; run the same command again to resume.")
        exit_with(ExitCode.INCOMPLETE)
