"""``occubench report``: leaderboard, breakdowns and statistics of a set of runs."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from occubench.analysis import DIMENSIONS
from occubench.cli._common import console, from_options, user_errors
from occubench.cli._options import (
    BootstrapResamples,
    BootstrapSeed,
    GoldWorld,
    LogFiles,
    Prices,
    TwinFidelityFiles,
)
from occubench.cli._settings import with_settings
from occubench.config import ResolvedRun, RunConfig
from occubench.defaults import DEFAULT_BOOTSTRAP_RESAMPLES, DEFAULT_BOOTSTRAP_SEED
from occubench.report import ReportFormat
from occubench.text import terminal_plain

if TYPE_CHECKING:
    from occubench.published import PublishedTable
    from occubench.report import GoldAgreement, RunsReport

BREAKDOWNS = ", ".join(d for d in DIMENSIONS if d != "overall")


ReportFormats = Annotated[
    list[ReportFormat] | None,
    typer.Option(
        "--format",
        "-f",
        case_sensitive=False,
        help="File format to write, repeatable: md, csv, json, html, parquet (default with "
        "--out: all).",
    ),
]
ReportFolder = Annotated[
    Path | None,
    typer.Option(
        help="Folder for the files (default: beside the first log folder, named "
        "<folder>-report; the path is printed)."
    ),
]
Breakdowns = Annotated[
    list[str] | None,
    typer.Option(
        help=f"Breakdown shown in the terminal, repeatable: {BREAKDOWNS} "
        "(default: industry and difficulty)."
    ),
]
Reviews = Annotated[
    Path | None,
    typer.Option(
        help="Expert reviews: a review database (occubench review --db) or its JSON/CSV "
        "export. Adds reviewer agreement, realism ratings and CR with human verdicts."
    ),
]
Variance = Annotated[
    bool,
    typer.Option(
        "--variance",
        help="Add variance components (task, simulator, agent, verifier) and the minimum "
        "detectable difference; mark leaderboard lines closer than it.",
    ),
]
PublishedBeside = Annotated[
    str | None,
    typer.Option(
        help="Show a publication's stated results beside the measured ones, marked and "
        "never ranked with them: 'paper' (the OccuBench paper, shipped) or a JSON file "
        "in its format.",
    ),
]
FloorRecords = Annotated[
    list[Path] | None,
    typer.Option(
        help="A floor record (occubench floor --out), repeatable: each leaderboard line "
        "shows the highest null agent's pass rate under its simulator, verifier and "
        "protocol, or 'not measured'.",
    ),
]


@with_settings(RunConfig, only=("dataset", "protocol", "state_mode", "date"))
def report(
    logs: LogFiles,
    formats: ReportFormats = None,
    out: ReportFolder = None,
    prices: Prices = None,
    by: Breakdowns = None,
    reviews: Reviews = None,
    resamples: BootstrapResamples = DEFAULT_BOOTSTRAP_RESAMPLES,
    seed: BootstrapSeed = DEFAULT_BOOTSTRAP_SEED,
    variance: Variance = False,
    published: PublishedBeside = None,
    gold: GoldWorld = None,
    twin_fidelity: TwinFidelityFiles = None,
    floor: FloorRecords = None,
    **chosen: Any,
) -> None:
    """Report completion rates, robustness R, comparisons and cost of runs, with 95% CIs.

    Prints the tables; with --format or --out also writes Markdown, CSV, JSON, a
    self-contained HTML page (plus PNG/SVG charts) and the sample table as Parquet.
    Each log's rows are cached beside it (LOG.eval.rows.parquet) and read from there
    until the log changes. Runs on different task sets, under different protocols or
    graded by different verifiers (a regraded log apart from its source) are reported
    apart, never ranked together; R needs E0-E3 on the same tasks.
    """
    from occubench.costs import load_prices
    from occubench.published import load_published
    from occubench.report import (
        check_breakdowns,
        default_report_dir,
        load_floor,
        report_runs,
        reviews_at,
    )
    from occubench.twins import read_fidelity

    by = by or ["industry", "difficulty"]
    with user_errors():
        check_breakdowns(by)
        table = load_prices(prices) if prices is not None else None
        stated = load_published(published) if published is not None else None
        judged = reviews_at(reviews) if reviews is not None else None
        floors = [load_floor(path) for path in floor or []]
        twin = [record for path in twin_fidelity or [] for record in read_fidelity(path)]
        runs = report_runs(
            logs,
            table,
            resamples=resamples,
            seed=seed,
            reviews=judged,
            variance=variance,
            twin=twin,
            floors=floors,
            gold=None if gold is None else partial(_against_gold, gold, chosen),
        )
    _print_runs(runs, by, stated)
    if formats or out is not None:
        _write_files(runs, formats or list(ReportFormat), out or default_report_dir(logs), stated)


def _say(text: str) -> None:
    console.print(text, markup=False, highlight=False)


def _print_runs(runs: RunsReport, by: list[str], stated: PublishedTable | None) -> None:
    """The groups of runs, what was not read, and each group's tables in the terminal."""
    from occubench.published import published_lines, side_by_side
    from occubench.report import left_out, report_tables, rich_table
    from occubench.results import agent_error_lines, unread_lines

    groups = runs.groups
    if len(groups) > 1:
        _say(
            f"{len(groups)} groups of runs that are not compared with each other (they ran "
            "different task sets or protocols, different verifiers graded them, or their "
            "tasks talked to different user models); each is reported on its own:"
        )
        for i, g in enumerate(groups, 1):
            console.print(
                f"  {i}. {terminal_plain(g.group.label)}: {len(g.group.runs)} run(s)", markup=False
            )
    for line in [*unread_lines(runs.rows), *agent_error_lines(runs.rows)]:
        _say(terminal_plain(line))
    for i, g in enumerate(groups, 1):
        if len(groups) > 1:
            _say(f"\nGroup {i}: {terminal_plain(g.group.label)}")
        for text_table in report_tables(g.report, dimensions=by):
            console.print(rich_table(text_table))
        for line in left_out(g.report):
            _say(f"Left out: {terminal_plain(line)}")
        if stated is not None:
            console.print(rich_table(side_by_side(g.report, stated)))
            for line in published_lines(stated, g.report):
                _say(terminal_plain(line))
        if g.report.errors:
            console.print(
                f"{g.report.errors} sample(s) ended in an infrastructure error (not scored)."
            )


def _write_files(
    runs: RunsReport, formats: list[ReportFormat], folder: Path, stated: PublishedTable | None
) -> None:
    """Each group's files, in ``folder`` (one group) or ``folder/group-N``; where they went."""
    from occubench.published import write_published
    from occubench.report import group_folder, write_report

    for i, g in enumerate(runs.groups, 1):
        where = group_folder(folder, i, len(runs.groups))
        written = write_report(g.report, g.group.rows, formats, where)
        if stated is not None:
            written.append(write_published(g.report, stated, where))
        _say(f"Wrote the report's files to {where}")
        if where / "report.html" in written:
            _say(f"HTML report: {where / 'report.html'}")


def _against_gold(
    world: Path, chosen: dict[str, Any], simulators: list[str]
) -> list[GoldAgreement]:
    """Each simulator's agreement with the gold world, under the run settings given."""
    from occubench.fidelity import gold_agreements

    return gold_agreements(world, simulators, ResolvedRun.of(from_options(RunConfig, chosen)))
