"""The report as one self-contained HTML file.

Rendered with jinja2 and autoescape on: every string from a log (model text, names,
errors) is escaped, so an answer holding ``<script>`` shows as text. Charts are our
own SVG, embedded as base64 ``data:`` images; CSS is inline; there is no external URL.
One script of ours (``templates/explore.js``: sorting, filtering, paging, drill-down
from a rate to its samples) is inlined, and the Content-Security-Policy allows exactly
that script by its SHA-256 hash: any other script, inline or injected, is refused.
Each sample's trajectory is a section shown when a link targets it (CSS ``:target``).
"""

from __future__ import annotations

import base64
import hashlib
import math
from collections.abc import Sequence
from importlib.resources import files

from jinja2 import ChoiceLoader, Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from occubench.analysis import ALL, perturbed_mean, setup_of, setup_robustness
from occubench.report._contrast import DARK_TEXT, MUTED_TEXT, heat
from occubench.report._report import Report
from occubench.report._tables import (
    LEFT,
    believe_table,
    flips_table,
    interval,
    money,
    pct,
    ratio,
    tokens,
    wire_table,
)
from occubench.results import SampleRow, Trajectory

TEMPLATE = "report.html.j2"
SCRIPT = "explore.js"
SAMPLES_PER_PAGE = 25
"""Rows per page of the samples table."""


def explore_script() -> str:
    """The report's script (sorting, filtering, paging), as inlined in the page."""
    return files("occubench.report").joinpath("templates", SCRIPT).read_text(encoding="utf-8")


def script_hash(script: str) -> str:
    """The CSP source allowing exactly ``script``: ``'sha256-<base64 digest>'``."""
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def content_security_policy(script: str) -> str:
    """The page's policy: its own script by hash, inline styles, data: images, nothing else."""
    return (
        f"default-src 'none'; script-src {script_hash(script)}; img-src data:; "
        "style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
    )


def data_uri(svg: bytes) -> str:
    """An SVG image as a ``data:`` URI."""
    return "data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii")


def sort_key(*values: float | int | None) -> list[float | int | None]:
    """A cell's sort key for the script: numbers, undefined ones as null (sorted last)."""
    return [None if v is None or (isinstance(v, float) and math.isnan(v)) else v for v in values]


def _environment() -> Environment:
    env = Environment(
        loader=ChoiceLoader(
            [
                PackageLoader("occubench.report", "templates"),
                # the trajectory view, which the review app shows too
                PackageLoader("occubench.review", "templates"),
            ]
        ),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(pct=pct, ratio=ratio, money=money, heat=heat, tokens=tokens)
    env.globals.update(
        interval=interval,
        isnan=math.isnan,
        nan=math.nan,
        ALL=ALL,
        sort_key=sort_key,
        perturbed_mean=perturbed_mean,
        colours={"dark": DARK_TEXT, "muted": MUTED_TEXT},
    )
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
        charts: SVG bytes by chart name (``report_figures`` rendered as SVG); each chart
            of ``CHARTS`` not given is left out with the line saying what it needs.

    """
    from occubench.report._plots import CHARTS, left_out_line  # matplotlib: slow import

    if len(rows) != len(trajectories):
        raise ValueError("one trajectory per row is needed")
    script = explore_script()
    industries = [g for g in report.rates if g.dimension == "industry"]
    left_out = {c.name: left_out_line(c) for c in CHARTS if c.name not in charts}
    return (
        _environment()
        .get_template(TEMPLATE)
        .render(
            report=report,
            csp=content_security_policy(script),
            script=Markup(script),  # our own file, allowed by its hash; no log text in it
            setups=[(line.agent, line.simulator) for line in report.leaderboard],
            industry_names=sorted({g.group for g in industries}),
            industry_cells={(g.agent, g.simulator, g.env_mode, g.group): g for g in industries},
            breakdowns={d: report.rates_for(d) for d in ("difficulty", "domain", "scenario")},
            mode_cells={
                (g.agent, g.simulator, g.env_mode): g
                for g in report.rates
                if g.dimension == "overall"
            },
            robustness=setup_robustness(report.robustness),
            agreement=_matrix(report),
            charts={name: data_uri(svg) for name, svg in charts.items()},
            titles={c.name: c.title for c in CHARTS},
            left_out=left_out,
            samples=[(i, row, setup_of(row), trajectories[i]) for i, row in enumerate(rows)],
            sample_index={row.sample_key: i for i, row in enumerate(rows)},
            page_size=SAMPLES_PER_PAGE,
            embedded=sum(t.read for t in trajectories),
            believe=[believe_table(report), *([flips_table(report)] if report.flips else [])],
            wires=wire_table(report) if report.agent_wires else None,
            left=LEFT,
        )
    )
