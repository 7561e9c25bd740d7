"""``occubench report``: leaderboard, breakdowns and statistics of a set of runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from occubench.analysis import DIMENSIONS
from occubench.cli._common import TwinFidelityFiles, console, from_options, user_errors
from occubench.cli._settings import with_settings
from occubench.config import ResolvedRun, RunConfig
from occubench.defaults import DEFAULT_BOOTSTRAP_RESAMPLES, DEFAULT_BOOTSTRAP_SEED
from occubench.errors import UsageError
from occubench.report import ReportFormat
from occubench.text import markdown_cell, terminal_plain

if TYPE_CHECKING:
    from occubench.published import PublishedTable
    from occubench.report import GoldAgreement, Report
    from occubench.review import Review

BREAKDOWNS = ", ".join(d for d in DIMENSIONS if d != "overall")


def _reviews(path: Path) -> list[Review]:
    """Reviews from a review database or an export (JSON or CSV)."""
    from occubench.review import is_database, load_reviews, read_reviews

    return read_reviews(path) if is_database(path) else load_reviews(path)


@with_settings(RunConfig, only=("dataset", "protocol", "state_mode", "date"))
def report(
    logs: Annotated[list[str], typer.Argument(help="Inspect log files or folders (recursive).")],
    formats: Annotated[
        list[ReportFormat] | None,
        typer.Option(
            "--format",
            "-f",
            case_sensitive=False,
            help="File format to write, repeatable: md, csv, json, html, parquet (default with "
            "--out: all).",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            help="Folder for the files (default: beside the first log folder, named "
            "<folder>-report; the path is printed)."
        ),
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
            "export. Adds reviewer agreement, realism ratings and CR with human verdicts."
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
            help="Add variance components (task, simulator, agent, verifier) and the minimum "
            "detectable difference; mark leaderboard lines closer than it.",
        ),
    ] = False,
    published: Annotated[
        str | None,
        typer.Option(
            help="Show a publication's stated results beside the measured ones, marked and "
            "never ranked with them: 'paper' (the OccuBench paper, shipped) or a JSON file "
            "in its format.",
        ),
    ] = None,
    gold: Annotated[
        Path | None,
        typer.Option(
            help="A gold world: each simulator's agreement with it (`audit --gold`) as a table "
            "of the report (--dataset, --protocol, --state-mode, --date as the gold was "
            "written; people, human/NAME, are not audited)."
        ),
    ] = None,
    twin_fidelity: TwinFidelityFiles = None,
    floor: Annotated[
        list[Path] | None,
        typer.Option(
            help="A floor record (occubench floor --out), repeatable: each leaderboard line "
            "shows the highest null agent's pass rate under its simulator, verifier and "
            "protocol, or 'not measured'.",
        ),
    ] = None,
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
    from occubench.analysis import comparable_groups
    from occubench.costs import load_prices
    from occubench.published import load_published, published_lines, side_by_side
    from occubench.report import (
        build_report,
        floors_beside,
        load_floor,
        report_tables,
        rich_table,
        write_report,
    )
    from occubench.results import agent_error_lines, read_runs, unread_lines
    from occubench.twins import read_fidelity

    by = by or ["industry", "difficulty"]
    with user_errors():
        unknown = [d for d in by if d not in DIMENSIONS]
        if unknown:
            raise UsageError(f"unknown breakdown {', '.join(unknown)}; use {', '.join(DIMENSIONS)}")
        table = load_prices(prices) if prices is not None else None
        stated = load_published(published) if published is not None else None
        judged = _reviews(reviews) if reviews is not None else None
        floors = [load_floor(path) for path in floor or []]
        twin = [record for path in twin_fidelity or [] for record in read_fidelity(path)]
        rows = read_runs(logs)
        if not rows:
            raise UsageError(f"no samples in {', '.join(logs)}")
        groups = comparable_groups(rows)
        results = [
            build_report(
                g.rows,
                table,
                n_resamples=resamples,
                seed=seed,
                reviews=judged,
                variance=variance,
                sources=rows,
                twin=twin,
            )
            for g in groups
        ]
        if gold is not None:
            agreements = _against_gold(
                gold, chosen, sorted({r.simulator_model or "" for r in rows})
            )
            for result in results:
                result.add_gold(agreements)
        if floors:
            for g, result in zip(groups, results, strict=True):
                lines = [(line.agent, line.simulator) for line in result.leaderboard]
                tasks = {str(r.task_id) for r in g.rows}
                result.floor = floors_beside(lines, g.verifier, g.protocol, floors, tasks)
    if len(groups) > 1:
        console.print(
            f"{len(groups)} groups of runs that are not compared with each other (they ran "
            "different task sets or protocols, different verifiers graded them, or their "
            "tasks talked to different user models); each is reported on its own:",
            markup=False,
            highlight=False,
        )
        for i, g in enumerate(groups, 1):
            console.print(f"  {i}. {terminal_plain(g.label)}: {len(g.runs)} run(s)", markup=False)
    for line in [*unread_lines(rows), *agent_error_lines(rows)]:
        console.print(terminal_plain(line), markup=False, highlight=False)
    folder = out or default_report_dir(logs)
    written: list[Path] = []
    for i, (g, result) in enumerate(zip(groups, results, strict=True), 1):
        if len(groups) > 1:
            console.print(f"\nGroup {i}: {terminal_plain(g.label)}", markup=False, highlight=False)
        for text_table in report_tables(result, dimensions=by):
            console.print(rich_table(text_table))
        for line in left_out(result):
            console.print(f"Left out: {terminal_plain(line)}", markup=False, highlight=False)
        if stated is not None:
            console.print(rich_table(side_by_side(result, stated)))
            for line in published_lines(stated, result):
                console.print(terminal_plain(line), markup=False, highlight=False)
        if result.errors:
            console.print(
                f"{result.errors} sample(s) ended in an infrastructure error (not scored)."
            )
        if formats or out is not None:
            where = folder if len(groups) == 1 else folder / f"group-{i}"
            written += write_report(result, g.rows, formats or list(ReportFormat), where)
            if stated is not None:
                written.append(write_published(result, stated, where))
            console.print(f"Wrote the report's files to {where}", markup=False, highlight=False)
            if where / "report.html" in written:
                html = where / "report.html"
                console.print(f"HTML report: {html}", markup=False, highlight=False)


def write_published(result: Report, stated: PublishedTable, folder: Path) -> Path:
    """``published.md``: the measured and published rows side by side, and why apart."""
    from occubench.published import published_lines, side_by_side
    from occubench.report import markdown_table

    path = folder / "published.md"
    lines = "\n".join(f"> {markdown_cell(line)}" for line in published_lines(stated, result))
    path.write_text(markdown_table(side_by_side(result, stated)) + "\n" + lines + "\n")
    return path


def default_report_dir(logs: list[str]) -> Path:
    """Where the report's files go without --out: ``<first log folder>-report`` beside it."""
    first = Path(logs[0].rstrip("/"))
    folder = first.parent if first.suffix in (".eval", ".json") else first
    return folder.with_name(f"{folder.resolve().name}-report")


def left_out(result: Report) -> list[str]:
    """What the report does not compute, and why (R per setup and fault setting)."""
    lines = []
    for rob in result.robustness:
        if rob.r_note:
            where = f" at {rob.setting}" if rob.setting else ""
            lines.append(f"R of {rob.agent} @ {rob.simulator}{where}: {rob.r_note}")
    return lines


def _against_gold(
    world: Path, chosen: dict[str, Any], simulators: list[str]
) -> list[GoldAgreement]:
    """Each simulator's agreement with the gold world (people are not audited).

    Raises:
        UsageError: not a world, or no entry of a person that the dataset given matches.
    """
    from inspect_ai.model import get_model

    from occubench.calls import resilient
    from occubench.fidelity import gold_audit
    from occubench.play import HUMAN_PROVIDER
    from occubench.report import GoldAgreement

    machines = [s for s in simulators if s and not s.startswith(f"{HUMAN_PROVIDER}/")]
    if not machines:
        return []
    run = ResolvedRun.of(from_options(RunConfig, chosen))
    audited = gold_audit(world, [resilient(get_model(name)) for name in machines], run)
    return [
        GoldAgreement(
            simulator=g.simulator,
            world=str(world),
            entries=g.entries,
            mean=g.agreement.mean,
            low=g.agreement.low,
            high=g.agreement.high,
        )
        for g in audited.groups
        if g.env_name is None
    ]
