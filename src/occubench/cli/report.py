"""``occubench report``: leaderboard, breakdowns and statistics of a set of runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from occubench.analysis import (
    DIMENSIONS,
    ReportFormat,
    Review,
    build_report,
    load_prices,
    load_reviews,
    read_runs,
    report_tables,
    rich_table,
    write_report,
)
from occubench.cli._common import console, user_errors
from occubench.defaults import (
    DEFAULT_BOOTSTRAP_RESAMPLES,
    DEFAULT_BOOTSTRAP_SEED,
    DEFAULT_REPORT_DIR,
)

BREAKDOWNS = ", ".join(d for d in DIMENSIONS if d != "overall")


def _reviews(path: Path) -> list[Review]:
    """Reviews from a review database or an export (JSON or CSV)."""
    from occubench.review import is_database, read_reviews

    return read_reviews(path) if is_database(path) else load_reviews(path)


def report(
    logs: Annotated[list[str], typer.Argument(help="Inspect log files or folders (recursive).")],
    formats: Annotated[
        list[ReportFormat] | None,
        typer.Option(
            "--format",
            "-f",
            help="File format to write, repeatable: md, csv, json, html, parquet (default with "
            "--out: all).",
        ),
    ] = None,
    out: Annotated[
        Path | None, typer.Option(help=f"Folder for the files (default: {DEFAULT_REPORT_DIR}).")
    ] = None,
    prices: Annotated[
        Path | None,
        typer.Option(
            help="Price table, YAML or JSON: models: {NAME: {input_per_mtok, output_per_mtok}}."
        ),
    ] = None,
    by: Annotated[
        list[str] | None,
        typer.Option(
            help=f"Breakdown shown in the terminal, repeatable: {BREAKDOWNS} "
            "(default: industry and difficulty)."
        ),
    ] = None,
    reviews: Annotated[
        Path | None,
        typer.Option(
            help="Expert reviews: a review database (occubench review --db) or its JSON/CSV "
            "export. Adds human-judge agreement, realism ratings and CR with human verdicts."
        ),
    ] = None,
    resamples: Annotated[int, typer.Option(help="Bootstrap resamples.")] = (
        DEFAULT_BOOTSTRAP_RESAMPLES
    ),
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = DEFAULT_BOOTSTRAP_SEED,
    variance: Annotated[
        bool,
        typer.Option(
            "--variance",
            help="Add variance components (task, simulator, agent, judge) and the minimum "
            "detectable difference; mark leaderboard lines closer than it.",
        ),
    ] = False,
) -> None:
    """Report completion rates, robustness R, comparisons and cost of runs, with 95% CIs.

    Prints the tables; with --format or --out also writes Markdown, CSV, JSON, a
    self-contained HTML page (plus PNG/SVG charts) and the sample table as Parquet.
    Each log's rows are cached beside it (LOG.eval.rows.parquet) and read from there
    until the log changes.
    """
    by = by or ["industry", "difficulty"]
    with user_errors():
        unknown = [d for d in by if d not in DIMENSIONS]
        if unknown:
            raise ValueError(f"unknown breakdown {', '.join(unknown)}; use {', '.join(DIMENSIONS)}")
        table = load_prices(prices) if prices is not None else None
        judged = _reviews(reviews) if reviews is not None else None
        rows = read_runs(logs)
        result = build_report(
            rows, table, n_resamples=resamples, seed=seed, reviews=judged, variance=variance
        )
    for text_table in report_tables(result, dimensions=by):
        console.print(rich_table(text_table))
    if result.errors:
        console.print(f"{result.errors} sample(s) ended in an infrastructure error (not scored).")
    if not formats and out is None:
        return
    folder = out or DEFAULT_REPORT_DIR
    written = write_report(result, rows, formats or list(ReportFormat), folder)
    console.print(f"Wrote {len(written)} files to {folder}", markup=False, highlight=False)
    html = folder / "report.html"
    if html in written:
        console.print(f"HTML report: {html}", markup=False, highlight=False)
