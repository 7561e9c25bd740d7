"""The report as one self-contained HTML file.

Rendered with jinja2 and autoescape on: every string from a log (model text, names,
errors) is escaped, so an answer holding ``<script>`` shows as text. Charts are our
own SVG, embedded as base64 ``data:`` images; CSS is inline; there is no script and no
external URL, and a Content-Security-Policy forbids both anyway. Each sample's
trajectory is a section shown when the drill-down link targets it (CSS ``:target``).
"""

from __future__ import annotations

import base64
import math
from collections.abc import Sequence

from jinja2 import Environment, PackageLoader, StrictUndefined

from occubench.analysis._metrics import ALL, setup_of
from occubench.analysis._report import Report
from occubench.analysis._report_tables import interval, money, pct, ratio
from occubench.analysis._report_trajectory import Trajectory
from occubench.analysis._runs import SampleRow

TEMPLATE = "report.html.j2"
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
"""Content-Security-Policy of the page: inline styles and data: images, nothing else."""


def heat(rate: float) -> str:
    """Background colour for a rate: red (0) through yellow to green (1); grey if undefined."""
    if math.isnan(rate):
        return "#eeeeee"
    return f"hsl({120 * rate:.0f}, 70%, 80%)"


def data_uri(svg: bytes) -> str:
    """An SVG image as a ``data:`` URI."""
    return "data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii")


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("occubench.analysis", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(pct=pct, ratio=ratio, money=money, heat=heat)
    env.globals.update(interval=interval, isnan=math.isnan, ALL=ALL)
    return env


def _matrix(report: Report) -> dict[str, dict[tuple[str, str], str]]:
    """Agreement per mode as a symmetric simulator x simulator matrix of cell texts."""
    matrix: dict[str, dict[tuple[str, str], str]] = {}
    for a in report.agreement:
        text = f"{pct(a.share)}% ({a.agreeing_pairs}/{a.n_pairs}), tau {ratio(a.tau)}"
        cells = matrix.setdefault(a.env_mode, {})
        cells[(a.simulator_a, a.simulator_b)] = cells[(a.simulator_b, a.simulator_a)] = text
    return matrix


def render_html(
    report: Report,
    rows: Sequence[SampleRow],
    trajectories: Sequence[Trajectory],
    charts: dict[str, bytes],
) -> str:
    """The HTML report.

    Args:
        report: The metrics.
        rows: The samples, for the drill-down table.
        trajectories: One per row, in the same order (``read_trajectories``).
        charts: SVG bytes by chart name (``report_figures`` rendered as SVG).

    """
    if len(rows) != len(trajectories):
        raise ValueError("one trajectory per row is needed")
    industries = report.rates_for("industry")
    return (
        _environment()
        .get_template(TEMPLATE)
        .render(
            report=report,
            csp=CSP,
            setups=[(line.agent, line.simulator) for line in report.leaderboard],
            industry_names=sorted({g.group for g in industries}),
            industry_cells={(g.agent, g.simulator, g.group): g for g in industries},
            breakdowns={d: report.rates_for(d) for d in ("difficulty", "domain", "scenario")},
            mode_cells={
                (g.agent, g.simulator, g.env_mode): g
                for g in report.rates
                if g.dimension == "overall"
            },
            robustness={(r.agent, r.simulator): r for r in report.robustness},
            agreement=_matrix(report),
            charts={name: data_uri(svg) for name, svg in charts.items()},
            samples=[(i, row, setup_of(row), trajectories[i]) for i, row in enumerate(rows)],
        )
    )
