"""Measured and published side by side: one table, two kinds of rows, one ranking only.

The measured rows keep their leaderboard rank; each is followed by the published rows of
the same agent, simulator and reasoning effort (``_match``), marked as published,
unranked: a publication's numbers come from its own simulator and verifier (and
harness), so they are shown beside the user's, never ranked with them. A run at a fault
count and duration the publication states a value for (an ablation) gets a measured line
at that setting with the stated values under it. The publication's other rows with a
value for the columns (CR per mode, R) follow; a row stating only a rank is data only.
"""

from __future__ import annotations

import math
from pathlib import Path

from occubench.published._match import agreements_for, rows_for, stands_for
from occubench.published._table import MODES, Metric, PublishedRow, PublishedTable
from occubench.report import Report, TextTable, markdown_table, pct, ratio
from occubench.text import markdown_cell

NOT_PUBLISHED = "not published"
"""What a cell shows for a value the publication does not state."""
NOT_STATED = "not stated"
"""What a cell shows for a simulator or verifier the publication does not name."""
MEASURED = "measured"
PUBLISHED = "published"
SHOWN = (Metric.CR, Metric.R)
"""The metrics the table's columns show."""


def apart_line(table: PublishedTable) -> str:
    """Why published rows are not ranked with measured ones (the page and the terminal say it)."""
    return (
        f"Published rows ({table.source}) are shown beside the measured ones and never ranked "
        "with them: their simulator, verifier and harness are the publication's, not the run's."
    )


def shown_sources(row: PublishedRow) -> list[str]:
    """The sources of the row's values the columns show (overall, default fault setting)."""
    return sorted(
        {
            v.source
            for v in row.values
            if v.metric in SHOWN and v.industry is None and v.fault_count is None
        }
    )


def _published_cells(row: PublishedRow) -> list[str]:
    rates = [row.rate(m) for m in MODES]
    return [
        *(NOT_PUBLISHED if math.isnan(r) else pct(r) for r in rates),
        NOT_PUBLISHED if math.isnan(row.robustness()) else ratio(row.robustness()),
    ]


def _published_line(row: PublishedRow, agent: str, cells: list[str], source: str) -> list[str]:
    return [
        "-",
        PUBLISHED,
        agent,
        row.simulator or NOT_STATED,
        row.verifier or NOT_STATED,
        *cells,
        source,
    ]


def _in_mode(mode: str, text: str) -> list[str]:
    """Cells for the mode columns and R with ``text`` in ``mode``'s column only."""
    return [text if m == mode else "" for m in MODES] + [""]


def _setting_lines(report: Report, table: PublishedTable, judges: str) -> list[list[str]]:
    """Measured CR at each fault setting the publication states a value for, values under it."""
    lines: list[list[str]] = []
    for found in report.fault_rates:
        faults = (found.fault_count, found.fault_duration)
        stated = [
            (row, value)
            for row in rows_for(table, found.agent, found.simulator)
            for value in row.values_at(Metric.CR, found.env_mode, faults=faults)
        ]
        if not stated:
            continue
        setting = f" (fc {found.fault_count}, fd {found.fault_duration})"
        lines.append(
            [
                "-",
                MEASURED,
                found.agent + setting,
                found.simulator,
                judges,
                *_in_mode(found.env_mode, pct(found.rate)),
                "these logs",
            ]
        )
        lines += [
            _published_line(
                row, row.label() + setting, _in_mode(found.env_mode, pct(v.value / 100)), v.source
            )
            for row, v in stated
        ]
    return lines


def side_by_side(report: Report, table: PublishedTable) -> TextTable:
    """The report's leaderboard with the publication's rows beside it (module doc)."""
    out = TextTable(
        title=f"Measured (ranked by CR in {report.headline_mode}) and published "
        f"({table.source}, not ranked; each after the measured run of its agent, simulator "
        "and effort): CR % per mode and R",
        columns=[
            "#",
            "kind",
            "agent",
            "simulator",
            "verifier",
            *(f"{m} %" for m in MODES),
            "R",
            "source",
        ],
    )
    judges = ", ".join(report.verifiers) or "(simulator)"
    shown = [row for row in table.rows if shown_sources(row)]
    placed: set[int] = set()
    for line in report.leaderboard:
        out.rows.append(
            [
                str(line.rank),
                MEASURED,
                line.agent,
                line.simulator,
                judges,
                *(pct(line.mode_rates.get(m, math.nan)) for m in MODES),
                ratio(line.r),
                "these logs",
            ]
        )
        for i, row in enumerate(shown):
            if stands_for(table, row, line.agent, line.simulator):
                placed.add(i)
                out.rows.append(
                    _published_line(
                        row, row.label(), _published_cells(row), ", ".join(shown_sources(row))
                    )
                )
    out.rows += _setting_lines(report, table, judges)
    out.rows += [
        _published_line(row, row.label(), _published_cells(row), ", ".join(shown_sources(row)))
        for i, row in enumerate(shown)
        if i not in placed
    ]
    return out


def _agreement_lines(report: Report, table: PublishedTable) -> list[str]:
    """The measured ranking agreement of each simulator pair the publication states one for."""
    lines = []
    for found in report.agreement:
        for stated in agreements_for(table, found.simulator_a, found.simulator_b, found.env_mode):
            pairs = (
                f" ({stated.agreeing_pairs} of {stated.pairs} pairs)"
                if stated.agreeing_pairs is not None and stated.pairs is not None
                else ""
            )
            lines.append(
                f"Ranking agreement of {found.simulator_a} and {found.simulator_b} in "
                f"{found.env_mode}: measured {pct(found.share)} % ({found.agreeing_pairs} of "
                f"{found.n_pairs} pairs); published {stated.value:.1f} %{pairs} ({stated.source})."
            )
    return lines


def published_lines(table: PublishedTable, report: Report | None = None) -> list[str]:
    """Lines under the table: why apart, what it holds, and the report's matched agreements.

    Given the report, a line for each simulator pair it measured whose ranking agreement
    the publication states, the measured share beside the stated one.
    """
    lines = [apart_line(table)]
    if not table.rows:
        lines.append(f"The {table.source} table holds no value: {table.note}")
    if report is not None:
        lines += _agreement_lines(report, table)
    return lines


def write_published(report: Report, table: PublishedTable, folder: Path) -> Path:
    """``published.md``: the measured and published rows side by side, and why apart."""
    path = folder / "published.md"
    lines = "\n".join(f"> {markdown_cell(line)}" for line in published_lines(table, report))
    path.write_text(markdown_table(side_by_side(report, table)) + "\n" + lines + "\n")
    return path
