"""The paper's figures from sweep-shaped offline logs; each left out with its line when
its data is missing.

The logs (``sweep_logs``): the three reference agents on three tasks of the reference
suite in E0 and in E3 at fault counts 1-2 and durations 1-2, the careful agent at two
reasoning efforts, and the agents under a second simulator in E0.
"""

from __future__ import annotations

import math

import pytest

from occubench.costs import load_prices
from occubench.report import build_report, render_html, write_report
from occubench.report._plots import CHARTS, chart_files, figure_bytes, left_out_line, report_figures
from occubench.results import Trajectory, read_runs
from occubench.text._sanitize import markdown_cell
from report.sweep_logs import AGENTS, OTHER_SIMULATOR, make_sweep_logs, write_price_file

TASKS = "1001,1004,1008"  # three industries, difficulties 2, 1 and 3
NAMES = [c.name for c in CHARTS]


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    logs = make_sweep_logs(
        tmp_path_factory.mktemp("sweep"),
        task_ids=TASKS,
        counts=(1, 2),
        durations=(1, 2),
        efforts=("low", "high"),
        modes=("E0",),
        other_modes=("E0",),
    )
    return read_runs([logs])


@pytest.fixture(scope="module")
def prices(tmp_path_factory):
    return load_prices(write_price_file(tmp_path_factory.mktemp("prices") / "prices.yaml"))


@pytest.fixture(scope="module")
def report(rows, prices):
    return build_report(rows, prices, n_resamples=100)


def test_the_sweep_has_the_shape_of_the_paper_sweeps(rows):
    runs = {
        (
            r.agent_model,
            r.reasoning_effort,
            r.simulator_model,
            r.env_mode,
            r.fault_count,
            r.fault_duration,
        )
        for r in rows
    }
    assert len(runs) == 3 * 4 + 2 + 3  # 4 grid points x agents, efforts, second simulator
    assert all(r.error is None for r in rows)
    assert {r.reasoning_effort for r in rows} == {None, "low", "high"}


def test_every_figure_is_drawn_from_the_sweep(report, rows):
    charts = report_figures(report)
    assert list(charts.figures) == NAMES and charts.left_out == {}
    files = chart_files({"fault_count": charts.figures["fault_count"]})
    assert files["fault_count.png"][:8] == b"\x89PNG\r\n\x1a\n"
    assert files["fault_count.svg"].lstrip().startswith(b"<?xml")
    svgs = {name: figure_bytes(figure, "svg") for name, figure in charts.figures.items()}
    page = render_html(report, rows, [Trajectory()] * len(rows), svgs)
    assert page.count('<img class="chart"') == len(NAMES) and 'class="left-out"' not in page


def _line(ax, label_start):
    return next(line for line in ax.get_lines() if line.get_label().startswith(label_start))


def test_fault_count_lines_plot_the_rates_with_e0_at_zero(report):
    figure = report_figures(report).figures["fault_count"]
    ax = figure.axes[0]
    assert ax.get_title() == "E3, fd=2"
    for agent in AGENTS:
        e0 = next(
            g
            for g in report.rates
            if g.agent == agent
            and g.env_mode == "E0"
            and g.dimension == "overall"
            and g.simulator == "occubench/canned"
        )
        points = sorted(
            (f.fault_count, f.rate)
            for f in report.fault_rates
            if f.agent == agent
            and f.simulator == "occubench/canned"
            and f.env_mode == "E3"
            and f.fault_duration == 2
        )
        line = _line(ax, f"{agent} @ occubench/canned")
        assert list(line.get_xdata()) == [0, 1, 2]
        assert list(line.get_ydata()) == pytest.approx(
            [100 * e0.rate] + [100 * r for _, r in points]
        )
    careful = _line(ax, "occubench/careful @ occubench/canned").get_ydata()
    no_retry = _line(ax, "occubench/no-retry @ occubench/canned").get_ydata()
    assert careful[1] > no_retry[1]  # the agents differ under faults


def test_radar_has_one_polygon_per_model_on_shared_axes(report):
    figure = report_figures(report).figures["industry_radar"]
    polar = [ax for ax in figure.axes if ax.name == "polar"]
    assert [ax.get_title() for ax in polar] == report.env_modes  # every mode, not E0 only
    ticks = {tuple(t.get_text() for t in ax.get_xticklabels()) for ax in polar}
    assert len(ticks) == 1 and len(next(iter(ticks))) == 3  # the same three industries
    assert all(len(ax.get_lines()) == len(report.leaderboard) for ax in polar)
    assert all(ax.get_ylim() == (0, 100) for ax in polar)


def test_reasoning_effort_and_generations_follow_their_data(report):
    efforts = [e for e in report.effort_rates if e.env_mode == "E0"]
    assert [e.reasoning_effort for e in efforts] == ["low", "high"]
    assert {e.agent for e in efforts} == {AGENTS[0]}
    generations = [p for p in report.generations if p.env_mode == "E0"]
    assert [p.agent for p in generations if p.simulator == "occubench/canned"] == [
        "occubench/no-retry",
        "occubench/trusting",
        "occubench/careful",  # by release date
    ]
    agreement = [a for a in report.agreement if a.env_mode == "E0"]
    assert agreement and agreement[0].simulator_b == OTHER_SIMULATOR


MISSING = {
    "leaderboard": lambda r: (
        r.agent_model == AGENTS[0]
        and r.reasoning_effort is None
        and r.simulator_model == "occubench/canned"
    ),
    "env_modes": lambda r: r.env_mode == "E0",  # E0 alone: no R
    "industry_radar": lambda r: r.task_id != 1008,
    "industry_heatmap": lambda r: r.task_id == 1001,
    "industry_difficulty": lambda r: r.task_id == 1004,
    "fault_count": lambda r: r.env_mode != "E3" or r.fault_count == 2,
    "fault_duration": lambda r: r.env_mode != "E3" or r.fault_duration == 2,
    "reasoning_effort": lambda r: r.reasoning_effort is None,
    "simulator_agreement": lambda r: r.simulator_model != OTHER_SIMULATOR,
    "model_generations": lambda r: True,  # and no price file
}


@pytest.mark.parametrize("name", NAMES)
def test_a_figure_without_its_data_is_left_out_with_its_line(name, rows, prices):
    kept = [r for r in rows if MISSING[name](r)]
    report = build_report(kept, None if name == "model_generations" else prices, n_resamples=20)
    chart = next(c for c in CHARTS if c.name == name)
    assert chart.draw(report) is None
    line = left_out_line(chart)
    assert line.startswith(f"{chart.title}: not drawn") and "would produce it" in line
    assert chart.needs in line


def test_left_out_lines_are_in_the_html_report(rows, tmp_path):
    e0 = [
        r
        for r in rows
        if r.env_mode == "E0"
        and r.simulator_model == "occubench/canned"
        and r.reasoning_effort is None
        and r.agent_model == AGENTS[0]
    ]
    report = build_report(e0, n_resamples=20)
    charts = report_figures(report)
    assert set(charts.figures) == {"industry_radar", "industry_heatmap", "industry_difficulty"}
    write_report(report, e0, ["html", "md"], tmp_path)
    page = (tmp_path / "report.html").read_text()
    for name, line in charts.left_out.items():
        assert f'id="left-out-{name.replace("_", "-")}">{line}</p>' in page
    assert page.count('<img class="chart"') == 3
    markdown = (tmp_path / "report.md").read_text()
    assert all(markdown_cell(line) in markdown for line in charts.left_out.values())
    assert math.isnan(report.leaderboard[0].r) and report.leaderboard[0].r_note.startswith("no E1")
