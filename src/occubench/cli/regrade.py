"""``occubench regrade``: grade recorded trajectories again, with no agent or simulator call."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from occubench.cli._common import check_models, console, dataset_dir, exit_with, user_errors
from occubench.cli._options import LogFiles
from occubench.errors import ExitCode
from occubench.protocols import Protocol
from occubench.roles import Role
from occubench.text import terminal_plain, terminal_text

if TYPE_CHECKING:
    from occubench.grading import RegradedLog


def regrade(
    logs: LogFiles,
    verifier_model: Annotated[
        str, typer.Option(help="The verifier that grades again (an Inspect model).")
    ],
    votes: Annotated[
        int | None, typer.Option(min=1, help="k, verifier votes per sample (default: each log's).")
    ] = None,
    protocol: Annotated[
        Protocol | None,
        typer.Option(
            case_sensitive=False,
            help="Ask the verifier in this protocol's verifier layout: paper or occubench "
            "(default: each log's own protocol's).",
        ),
    ] = None,
    dataset: Annotated[
        str | None,
        typer.Option(
            help="A newer copy of the dataset: each task's rubric (verification plan) and "
            "checks are taken from it, matched by task id; a log with a task it lacks is "
            "refused (default: the rubric each log ran with).",
        ),
    ] = None,
    log_dir: Annotated[
        str | None,
        typer.Option(
            help="Folder of the new logs, not inside a run's folder (default: beside the "
            "first log folder, named <folder>-regraded-<hash>; the path is printed)."
        ),
    ] = None,
) -> None:
    """Grade the trajectories recorded in logs again, without running them.

    Each log's samples are scored again by the verifier given (Inspect's re-scoring, the
    verifier role bound to it): the agent and the simulator are not called, their turns
    are read from the log. Each log gives a new .eval log in --log-dir, with the new
    verdicts, the new verifier and the log it came from; occubench report over both
    folders shows the two gradings as separate groups. A sample that errored before it
    was graded is kept as it is; a verifier that fails is an infrastructure error of the
    sample (exit 3), never a failed task. The same command again writes the same files.
    """
    from occubench.grading import default_regrade_dir, protocol_layout, regrade_logs
    from occubench.results import some_log_files

    with user_errors():
        files = some_log_files(logs)
        layout = protocol_layout(protocol) if protocol is not None else None
        rubric = dataset_dir(dataset) if dataset is not None else None
        settings = [files, verifier_model, votes, protocol, str(rubric)]
        folder = Path(log_dir) if log_dir else default_regrade_dir(logs[0], settings)
        check_models({Role.VERIFIER: verifier_model})
        done = regrade_logs(
            files, verifier_model, log_dir=folder, votes=votes, layout=layout, dataset=rubric
        )
    console.print(regrade_table(done))
    console.print(f"Regraded logs: {terminal_plain(folder)}", markup=False, highlight=False)
    console.print(
        f"  occubench report {terminal_text(' '.join(logs))} {terminal_text(folder)}   "
        "both gradings, reported apart",
        markup=False,
        highlight=False,
    )
    failed = sum(d.verifier_errors for d in done)
    if failed:
        console.print(
            f"{failed} sample(s) could not be graded: the verifier failed (infrastructure errors, "
            "not scored); the same command again grades them again.",
            highlight=False,
        )
        exit_with(ExitCode.SAMPLE_ERRORS)


def regrade_table(done: list[RegradedLog]) -> Table:
    """One row per regraded log: its samples and verdicts before and after."""
    verifiers = sorted({d.verifier for d in done})
    table = Table(title=terminal_text(f"Regraded by {', '.join(verifiers)}"))
    table.add_column("log")
    for name in ("samples", "graded", "passed before", "passed now", "verifier errors"):
        table.add_column(name, justify="right")
    table.add_column("kept errors", justify="right")
    for d in done:
        table.add_row(
            terminal_text(Path(d.source).name),
            *(str(n) for n in (d.samples, d.graded, d.passed_before, d.passed_after)),
            str(d.verifier_errors),
            str(d.kept_errors),
        )
    return table
