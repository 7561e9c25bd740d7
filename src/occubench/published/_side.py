"""Measured and published side by side: one table, two kinds of rows, one ranking only.

The measured rows keep their leaderboard rank; the published rows follow, marked as
published, unranked: a publication's numbers come from its own simulator and verifier
(and harness), so they are shown beside the user's, never ranked with them.
"""

from __future__ import annotations

import math

from occubench.published._table import MODES, PublishedRow, PublishedTable
from occubench.report import Report, TextTable, pct, ratio

NOT_PUBLISHED = "not published"
"""What a cell shows for a value the publication does not state."""
MEASURED = "measured"
PUBLISHED = "published"


def apart_line(table: PublishedTable) -> str:
    """Why published rows are not ranked with measured ones (the page and the terminal say it)."""
    return (
        f"Published rows ({table.source}) are shown beside the measured ones and never ranked "
        "with them: their simulator, verifier and harness are the publication's, not the run's."
    )


def _published_cells(row: PublishedRow) -> list[str]:
    rates = [row.rate(m) for m in MODES]
    return [
        *(NOT_PUBLISHED if math.isnan(r) else pct(r) for r in rates),
        NOT_PUBLISHED if math.isnan(row.robustness()) else ratio(row.robustness()),
    ]


def side_by_side(report: Report, table: PublishedTable) -> TextTable:
    """The report's leaderboard with the publication's rows after it (module doc)."""
    out = TextTable(
        title=f"Measured (ranked by CR in {report.headline_mode}) and published "
        f"({table.source}, not ranked): CR % per mode and R",
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
    for row in table.rows:
        sources = sorted({v.source for v in row.values if v.industry is None})
        out.rows.append(
            [
                "-",
                PUBLISHED,
                row.model + (f" [{row.reasoning_effort}]" if row.reasoning_effort else ""),
                row.simulator or "not stated",
                row.verifier or "not stated",
                *_published_cells(row),
                ", ".join(sources) or NOT_PUBLISHED,
            ]
        )
    return out


def published_lines(table: PublishedTable) -> list[str]:
    """Lines printed under the table: why apart, and what the table holds."""
    lines = [apart_line(table)]
    if not table.rows:
        lines.append(f"The {table.source} table holds no value: {table.note}")
    return lines
