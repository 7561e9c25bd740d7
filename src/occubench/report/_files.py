"""Write a report to a folder: Markdown, CSV, JSON and HTML, with static charts.

Whatever formats are asked for, the charts are written too, as PNG and SVG under
``plots/`` (a chart without its data is left out, and the Markdown and HTML say why).
Files:

- ``md``: ``report.md`` (every table, charts linked);
- ``csv``: one file per table (``leaderboard.csv``, ``rates.csv``, ..., ``flips.csv``,
  ``quality.csv`` and ``guard.csv`` with "not measured" where nothing measured a figure,
  ``variance.csv`` and ``variance_pairs.csv`` with ``--variance``), the tidy sample table
  ``samples.csv``,
  and with reviews ``human_rates.csv``, ``realism.csv`` and ``disagreements.csv``;
- ``json``: ``report.json`` (the `Report`) and ``samples.jsonl`` (one row per sample);
- ``html``: ``report.html``, one self-contained page (trajectories of at most
  ``DEFAULT_REPORT_TRAJECTORIES`` samples);
- ``parquet``: ``samples.parquet``, the tidy sample table in the results store's columns
  (``results._store``), to query with DuckDB or pandas.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, get_args

from pydantic import BaseModel

from occubench.analysis import PairRow, VarianceRow
from occubench.defaults import DEFAULT_REPORT_TRAJECTORIES
from occubench.redaction import redact, redact_model
from occubench.report._choices import ReportFormat
from occubench.report._html import render_html
from occubench.report._report import Report
from occubench.report._tables import NOT_MEASURED, markdown_table, report_tables
from occubench.results import EXPORT_FILE, SampleRow, read_trajectories, write_parquet
from occubench.review import Disagreement, HumanRate, RealismRow
from occubench.text import csv_text, markdown_cell

PLOTS_DIR = "plots"
CSV_TABLES = (
    "leaderboard",
    "rates",
    "robustness",
    "comparisons",
    "agreement",
    "pass_k",
    "costs",
    "fault_recovery",
    "fault_rates",
    "effort_rates",
    "grid",
    "generations",
    "suspect_impact",
    "invalid_rates",
    "against_gold",
    "against_twin",
    "world_use",
    "shared_paths",
    "agent_wires",
)
"""Report fields written as one CSV file each."""
MEASURED_CSV_TABLES = ("flips", "quality", "guard", "user_errors")
"""Report fields written as one CSV file each, where an empty or undefined figure reads
"not measured" (``measured_record``)."""
REVIEW_CSV_TABLES: dict[str, tuple[str, type[BaseModel]]] = {
    "human_rates": ("rates", HumanRate),
    "realism": ("realism", RealismRow),
}
"""CSV files of the review part (file stem: field of ``ReviewReport``)."""


def flat(record: dict[str, Any]) -> dict[str, Any]:
    """One CSV row: nested mappings become ``key_sub`` columns, lists are joined by "; "."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        if isinstance(value, dict):
            out.update({f"{key}_{k}": v for k, v in flat(value).items()})
        elif isinstance(value, list | tuple):
            out[key] = "; ".join(
                " > ".join(map(str, v)) if isinstance(v, list | tuple) else str(v) for v in value
            )
        else:
            out[key] = value
    return out


def measured_record(record: dict[str, Any]) -> dict[str, Any]:
    """A flat CSV row whose missing (None) or undefined (nan) figures read "not measured"."""
    return {
        key: NOT_MEASURED
        if value is None or (isinstance(value, float) and math.isnan(value))
        else value
        for key, value in flat(record).items()
    }


def sample_record(row: SampleRow) -> dict[str, Any]:
    """A sample as a flat CSV row (the fault log is summarised by its counts)."""
    record = row.model_dump(exclude={"faults"})
    record["faults_injected"] = len(row.faults)
    return flat(record)


def variance_record(row: VarianceRow | PairRow) -> dict[str, Any]:
    """A variance or pair row as a flat CSV row: one set of columns per component."""
    record = flat(row.model_dump(exclude={"components", "verdict_components"}))
    groups = [("", row.components)]
    if isinstance(row, VarianceRow):
        groups.append(("verdict_", row.verdict_components))
    for prefix, parts in groups:
        for c in parts:
            for name in ("variance", "low", "high", "share"):
                record[f"{prefix}{c.level}_{name}"] = getattr(c, name)
    return record


def write_text(path: Path, text: str) -> Path:
    """Write a report file's text, secrets redacted (``occubench.redaction``).

    Every report file goes through here: a provider error quoting a key, or a key in a
    base URL, never reaches a report.
    """
    path.write_text(redact(text), encoding="utf-8")
    return path


def write_csv(path: Path, records: Sequence[dict[str, Any]], columns: Sequence[str] = ()) -> Path:
    """Write flat records as CSV; the header is ``columns`` plus any other keys of the records.

    Text cells a spreadsheet would run as formulas are quoted (``csv_text``).
    """
    columns = list(dict.fromkeys([*columns, *(key for record in records for key in record)]))
    with path.open("w", newline="", encoding="utf-8") as f:
        f.write(redact(csv_text(records, columns)))
    return path


def write_markdown(
    report: Report, path: Path, plots: Sequence[Path], left_out: Sequence[str] = ()
) -> Path:
    """Write every table of the report (fault kinds and all breakdowns) and link the PNGs."""
    parts = [
        "# occubench report",
        "",
        f"{report.samples} samples from {len(report.logs)} log(s); {report.errors} "
        "infrastructure error(s), left out of every rate.",
        "",
        f"Agents: {markdown_cell(', '.join(report.agents))}. "
        f"Simulators: {markdown_cell(', '.join(report.simulators))}. "
        f"Modes: {markdown_cell(', '.join(report.env_modes))}.",
        "",
    ]
    parts += [
        markdown_table(t)
        for t in report_tables(
            report, dimensions=("industry", "domain", "scenario", "difficulty"), fault_kinds=True
        )
    ]
    parts += [f"![{p.stem}]({PLOTS_DIR}/{p.name})\n" for p in plots if p.suffix == ".png"]
    parts += [f"- {markdown_cell(line)}" for line in left_out]
    return write_text(path, "\n".join(parts))


def write_review_csv(report: Report, out: Path) -> list[Path]:
    """The review part's tables as CSV files (none without reviews)."""
    if report.review is None:
        return []
    written = []
    for stem, (name, item_type) in REVIEW_CSV_TABLES.items():
        items: list[BaseModel] = getattr(report.review, name)
        records = [flat(i.model_dump()) for i in items]
        written.append(write_csv(out / f"{stem}.csv", records, list(item_type.model_fields)))
    disagreements = [flat(d.model_dump()) for d in report.review.agreement.disagreements]
    written.append(
        write_csv(out / "disagreements.csv", disagreements, list(Disagreement.model_fields))
    )
    return written


def drill_down(rows: Sequence[SampleRow], count: int) -> list[int]:
    """Positions of the ``count`` rows whose trajectories a report shows.

    Errored samples first, then failed ones, then passed ones, each in the order of
    ``rows``.
    """

    def rank(position: int) -> int:
        row = rows[position]
        return 0 if row.error is not None else 1 if not row.passed else 2

    return sorted(range(len(rows)), key=rank)[: max(count, 0)]


def write_report(
    report: Report,
    rows: Sequence[SampleRow],
    formats: Sequence[ReportFormat | str],
    out: Path,
    trajectories: int = DEFAULT_REPORT_TRAJECTORIES,
) -> list[Path]:
    """Write the report in ``formats`` into ``out`` (created), charts included.

    The HTML page embeds the trajectories of ``trajectories`` samples (``drill_down``:
    errors, then failures, then passes); only those are read from the logs.

    The report is redacted first (``occubench.redaction``), so charts, which draw model
    names, hold no secret either; every text file is redacted as written, and the rows
    before they go into the one binary table (Parquet).

    Returns:
        Every file written.

    """
    from occubench.report._plots import chart_files, report_figures  # matplotlib: slow import

    chosen = [ReportFormat(f) for f in dict.fromkeys(formats)]
    if not chosen:
        return []
    report = redact_model(report)  # charts too
    (out / PLOTS_DIR).mkdir(parents=True, exist_ok=True)
    figures = report_figures(report)
    charts = chart_files(figures.figures)
    written = []
    for name, content in charts.items():
        (out / PLOTS_DIR / name).write_bytes(content)
        written.append(out / PLOTS_DIR / name)
    plots = list(written)
    for fmt in chosen:
        if fmt is ReportFormat.MD:
            written.append(
                write_markdown(report, out / "report.md", plots, list(figures.left_out.values()))
            )
        elif fmt is ReportFormat.CSV:
            for name in (*CSV_TABLES, *MEASURED_CSV_TABLES):
                items: list[BaseModel] = getattr(report, name)
                item_type = get_args(Report.model_fields[name].annotation)[0]
                columns = list(item_type.model_fields)
                records = (
                    [measured_record(dict.fromkeys(columns) | i.model_dump()) for i in items]
                    if name in MEASURED_CSV_TABLES
                    else [flat(i.model_dump()) for i in items]
                )
                written.append(write_csv(out / f"{name}.csv", records, columns=columns))
            written.append(write_csv(out / "samples.csv", [sample_record(r) for r in rows]))
            written += write_review_csv(report, out)
            if report.variance is not None:
                records = [variance_record(r) for r in report.variance.rows]
                written.append(write_csv(out / "variance.csv", records))
                if report.variance.pairs:
                    pairs = [variance_record(r) for r in report.variance.pairs]
                    written.append(write_csv(out / "variance_pairs.csv", pairs))
        elif fmt is ReportFormat.JSON:
            path = write_text(out / "report.json", report.model_dump_json(indent=2))
            samples = write_text(
                out / "samples.jsonl",
                "".join(json.dumps(r.model_dump(mode="json")) + "\n" for r in rows),
            )
            written += [path, samples]
        elif fmt is ReportFormat.PARQUET:
            written.append(write_parquet([redact_model(r) for r in rows], out / EXPORT_FILE))
        else:
            page = render_html(
                report,
                rows,
                read_trajectories(rows, only=set(drill_down(rows, trajectories))),
                {n.removesuffix(".svg"): c for n, c in charts.items() if n.endswith(".svg")},
            )
            written.append(write_text(out / "report.html", page))
    return written
