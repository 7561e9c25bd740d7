"""The report's figures (matplotlib, Agg), written as PNG and SVG and embedded in the HTML.

Each figure of the paper is drawn from the `Report` when its data is there, and left
out otherwise, with one line saying which runs would produce it (never drawn empty):
see `CHARTS`. Figures are built with ``matplotlib.figure.Figure`` directly (no pyplot,
no global state), so they render headless and are safe in any thread. Text is drawn
as paths and the SVG ids are salted with a constant: the same report gives the same
bytes. Text on coloured cells takes its colour from ``text_colour`` (WCAG contrast).
"""

from __future__ import annotations

import io
import math
import textwrap
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from matplotlib import colormaps, rc_context
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from occubench.analysis import BASELINE_MODE, EffortRate, RateRow, effort_rank, setup_robustness
from occubench.report._contrast import text_colour
from occubench.report._report import Report

LINE_STYLES = ("-", (0, (5, 2)), (0, (2, 2)), (0, (6, 2, 1, 2)))
MODE_COLOURS = {"E0": "#4c72b0", "E1": "#dd8452", "E2": "#55a868", "E3": "#c44e52"}
RATE_MAP = "RdYlGn"
AGREEMENT_MAP = "Blues"
Setup = tuple[str, str]


def _style() -> AbstractContextManager[Any]:
    """Draw with SVG ids salted by a constant and text as paths (stable, no font files)."""
    return rc_context({"svg.hashsalt": "occubench", "svg.fonttype": "path", "font.size": 9})


def _setups(report: Report) -> list[Setup]:
    return [(line.agent, line.simulator) for line in report.leaderboard]


def _colour(report: Report, setup: Setup) -> str:
    """One colour per setup, the same in every figure (leaderboard order)."""
    setups = _setups(report)
    index = setups.index(setup) if setup in setups else len(setups)
    return f"C{index % 10}"


def _errors(rate: float, low: float, high: float) -> tuple[float, float]:
    if math.isnan(rate):
        return 0.0, 0.0
    return max(0.0, rate - low), max(0.0, high - rate)


def _nan0(value: float) -> float:
    return 0.0 if math.isnan(value) else value


def _wrap(text: str, width: int) -> str:
    """Wrap a label at spaces (a sweep's ``model[options]`` breaks before its options)."""
    return textwrap.fill(text.replace("[", " ["), width, break_long_words=False)


def _annotated_cells(ax: Axes, data: np.ndarray, cmap: str, vmin: float, vmax: float) -> None:
    """Write each defined value in its cell, in the text colour its background needs."""
    colours = colormaps[cmap]
    for (i, j), value in np.ndenumerate(data):
        if not math.isnan(value):
            background = colours((value - vmin) / (vmax - vmin))
            ax.text(
                j,
                i,
                f"{value:.0f}",
                ha="center",
                va="center",
                fontsize=7,
                color=text_colour(tuple(background[:3])),
            )


def leaderboard_figure(report: Report) -> Figure | None:
    """Horizontal bars of CR in the headline mode with Wilson 95% whiskers, best on top."""
    lines = report.leaderboard
    if len(lines) < 2:
        return None
    fig = Figure(figsize=(7, 0.45 * len(lines) + 1.4))
    ax = fig.add_subplot()
    y = np.arange(len(lines))[::-1]
    errs = np.array([_errors(line.rate, line.low, line.high) for line in lines]).T
    ax.barh(
        y,
        [100 * _nan0(line.rate) for line in lines],
        xerr=100 * errs,
        capsize=3,
        color=[_colour(report, (line.agent, line.simulator)) for line in lines],
    )
    ax.set_yticks(y, [_wrap(report.label(line.agent, line.simulator), 40) for line in lines])
    ax.set_xlim(0, 100)
    ax.set_xlabel(f"completion rate % in {report.headline_mode} (Wilson 95% CI)")
    ax.set_title("Leaderboard")
    fig.tight_layout()
    return fig


def _industries(report: Report) -> list[str]:
    return sorted({g.group for g in report.rates if g.dimension == "industry"})


def radar_figure(report: Report) -> Figure | None:
    """CR by industry: one radar per env mode, one polygon per setup, on shared axes."""
    industries = _industries(report)
    if len(industries) < 3:
        return None
    modes = report.env_modes
    cols = min(2, len(modes))
    rows = math.ceil(len(modes) / cols)
    setups = _setups(report)
    legend_rows = math.ceil(len(setups) / 2)
    fig = Figure(figsize=(5.2 * cols + 1, 4.6 * rows + 0.3 * legend_rows), layout="constrained")
    angles = np.linspace(0, 2 * np.pi, len(industries), endpoint=False)
    closed = np.append(angles, angles[:1])
    for k, mode in enumerate(modes):
        cells = {
            (g.agent, g.simulator, g.group): g.rate for g in report.rates_for("industry", mode)
        }
        ax = fig.add_subplot(rows, cols, k + 1, projection="polar")
        for i, (agent, simulator) in enumerate(setups):
            values = [
                100 * _nan0(cells.get((agent, simulator, name), math.nan)) for name in industries
            ]
            colour = _colour(report, (agent, simulator))
            label = _wrap(report.label(agent, simulator), 60)
            # earlier setups drawn wider and solid, later ones dashed on top: polygons that
            # coincide still show every colour
            width = 1.2 + 4.0 * (len(setups) - 1 - i) / max(1, len(setups) - 1)
            ax.plot(
                closed,
                [*values, values[0]],
                color=colour,
                linewidth=width,
                linestyle=LINE_STYLES[i % len(LINE_STYLES)],
                label=label,
            )
            ax.fill(closed, [*values, values[0]], color=colour, alpha=0.05)
        ax.set_xticks(angles, [_wrap(n, 14) for n in industries], fontsize=6)
        ax.tick_params(axis="x", pad=9)
        ax.set_ylim(0, 100)
        ax.set_yticks([25, 50, 75, 100], ["25", "50", "75", "100"], fontsize=6)
        ax.set_title(mode, fontsize=10, pad=18)
    handles, labels = fig.axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=min(2, len(labels)), fontsize=7)
    fig.suptitle("Completion rate % by industry, per env mode (one polygon per model)")
    return fig


def industry_heatmap_figure(report: Report) -> Figure | None:
    """Heat maps of CR by industry (rows) and setup (columns), one panel per env mode."""
    setups = _setups(report)
    industries = _industries(report)
    if len(industries) < 2:
        return None
    modes = report.env_modes
    fig = Figure(
        figsize=(2.6 + (0.9 * len(setups) + 0.4) * len(modes), 0.36 * len(industries) + 2.4),
        layout="constrained",
    )
    image = None
    for k, mode in enumerate(modes):
        cells = {
            (g.agent, g.simulator, g.group): g.rate for g in report.rates_for("industry", mode)
        }
        data = np.array(
            [[100 * cells.get((a, s, name), math.nan) for a, s in setups] for name in industries]
        )
        ax = fig.add_subplot(1, len(modes), k + 1)
        image = ax.imshow(
            np.ma.masked_invalid(data), cmap=RATE_MAP, vmin=0, vmax=100, aspect="auto"
        )
        _annotated_cells(ax, data, RATE_MAP, 0, 100)
        ax.set_xticks(
            range(len(setups)),
            [_wrap(report.label(a, s), 16) for a, s in setups],
            fontsize=6,
            rotation=90,
        )
        ax.set_yticks(range(len(industries)), industries if k == 0 else [], fontsize=7)
        ax.set_title(mode, fontsize=9)
    if image is not None:
        fig.colorbar(image, ax=fig.axes, fraction=0.04, label="CR %")
    fig.suptitle("Completion rate % by industry and model, per env mode")
    return fig


def industry_difficulty_figure(report: Report) -> Figure | None:
    """CR by industry (rows) and difficulty (columns), one panel per setup (headline mode)."""
    grid = [g for g in report.grid if g.env_mode == report.headline_mode]
    levels = sorted({g.difficulty for g in grid})
    if len(levels) < 2:
        return None
    industries = sorted({g.industry for g in grid})
    setups = _setups(report)
    cols = min(3, len(setups))
    rows = math.ceil(len(setups) / cols)
    fig = Figure(
        figsize=(3.4 * cols + 2.4, (0.3 * len(industries) + 1.1) * rows + 0.6), layout="constrained"
    )
    cells = {(g.agent, g.simulator, g.industry, g.difficulty): g.rate for g in grid}
    image = None
    for k, (agent, simulator) in enumerate(setups):
        ax = fig.add_subplot(rows, cols, k + 1)
        data = np.array(
            [
                [100 * cells.get((agent, simulator, name, level), math.nan) for level in levels]
                for name in industries
            ]
        )
        image = ax.imshow(
            np.ma.masked_invalid(data), cmap=RATE_MAP, vmin=0, vmax=100, aspect="auto"
        )
        _annotated_cells(ax, data, RATE_MAP, 0, 100)
        ax.set_xticks(range(len(levels)), [str(level) for level in levels], fontsize=7)
        ax.set_xlabel("difficulty", fontsize=7)
        ax.set_yticks(range(len(industries)), industries if k % cols == 0 else [], fontsize=6)
        ax.set_title(_wrap(report.label(agent, simulator), 36), fontsize=8)
    if image is not None:
        fig.colorbar(image, ax=fig.axes, fraction=0.03, label="CR %")
    fig.suptitle(
        f"Completion rate % by industry and difficulty ({report.headline_mode}; blank: no task)"
    )
    return fig


def modes_figure(report: Report) -> Figure | None:
    """CR per env mode for each setup as grouped bars (Wilson 95%), R with its CI above."""
    modes = report.env_modes
    if BASELINE_MODE not in modes or len(modes) < 2:
        return None
    setups = _setups(report)
    overall = {
        (g.agent, g.simulator, g.env_mode): g for g in report.rates if g.dimension == "overall"
    }
    robust = setup_robustness(report.robustness)
    width = 0.8 / len(modes)
    fig = Figure(figsize=(min(12.0, max(6.0, 1.5 * len(setups) + 2)), 4.4))
    ax = fig.add_subplot()
    x = np.arange(len(setups))
    for j, mode in enumerate(modes):
        found = [overall.get((a, s, mode)) for a, s in setups]
        heights = [100 * _nan0(g.rate) if g else 0.0 for g in found]
        errs = np.array([_errors(g.rate, g.low, g.high) if g else (0, 0) for g in found]).T
        ax.bar(
            x + (j - (len(modes) - 1) / 2) * width,
            heights,
            width,
            yerr=100 * errs,
            capsize=2,
            label=mode,
            color=MODE_COLOURS.get(mode, f"C{j + 4}"),
        )
    for i, setup in enumerate(setups):
        rob = robust.get(setup)
        if rob is None or math.isnan(rob.r):
            text = "R undefined:\n" + (rob.r_note.split(":")[0] if rob else "no scored sample")
        else:
            text = f"R={rob.r:.2f}"
        if rob is not None and not math.isnan(rob.low):
            text += f"\n[{rob.low:.2f}, {rob.high:.2f}]"
        ax.annotate(text, (x[i], 104), ha="center", fontsize=7)
    ax.set_xticks(x, [_wrap(report.label(a, s), 20) for a, s in setups], fontsize=7)
    ax.set_ylim(0, 122)
    ax.set_yticks(range(0, 101, 20))
    ax.set_ylabel("completion rate %")
    ax.set_title("CR by env mode (Wilson 95% CI); R = min(E1..E3) / E0 (bootstrap 95% CI)")
    ax.legend(ncols=len(modes), fontsize=7, loc="upper right", bbox_to_anchor=(1, -0.14))
    fig.tight_layout()
    return fig


def _band(
    ax: Axes, xs: Sequence[float], points: Sequence[RateRow], colour: str, label: str
) -> None:
    """A line of CRs with its Wilson 95% band."""
    ax.plot(xs, [100 * p.rate for p in points], marker="o", color=colour, label=label)
    ax.fill_between(
        xs,
        [100 * p.low for p in points],
        [100 * p.high for p in points],
        color=colour,
        alpha=0.12,
        linewidth=0,
    )


def _fault_figure(report: Report, varied: str, held: str, title: str) -> Figure | None:
    """CR over one fault setting (the other held), a panel per perturbed mode, E0 at 0."""
    panels: list[tuple[str, int]] = []
    for mode in sorted({f.env_mode for f in report.fault_rates}):
        in_mode = [f for f in report.fault_rates if f.env_mode == mode]
        spans = {
            value: len({getattr(f, varied) for f in in_mode if getattr(f, held) == value})
            for value in {getattr(f, held) for f in in_mode}
        }
        best = max(sorted(spans), key=lambda v: spans[v])
        if spans[best] >= 2:
            panels.append((mode, best))
    if not panels:
        return None
    baseline = {
        (g.agent, g.simulator): g
        for g in report.rates
        if g.dimension == "overall" and g.env_mode == BASELINE_MODE
    }
    legend_rows = math.ceil(len(_setups(report)) / 3)
    fig = Figure(figsize=(4.4 * len(panels) + 1.5, 4.0 + 0.25 * legend_rows), layout="constrained")
    short = {"fault_count": "fc", "fault_duration": "fd"}
    for k, (mode, kept) in enumerate(panels):
        ax = fig.add_subplot(1, len(panels), k + 1)
        for setup in _setups(report):
            points = sorted(
                (
                    f
                    for f in report.fault_rates
                    if (f.agent, f.simulator) == setup
                    and f.env_mode == mode
                    and getattr(f, held) == kept
                ),
                key=lambda f: getattr(f, varied),
            )
            if not points:
                continue
            xs: list[float] = [getattr(f, varied) for f in points]
            series: list[RateRow] = list(points)
            if setup in baseline:
                xs, series = [0, *xs], [baseline[setup], *series]
            _band(ax, xs, series, _colour(report, setup), _wrap(report.label(*setup), 40))
        ax.set_ylim(-2, 102)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel(f"{varied.replace('_', ' ')} (0: E0, no fault)")
        ax.set_title(f"{mode}, {short[held]}={kept}", fontsize=9)
        ax.grid(alpha=0.3)
        if k == 0:
            ax.set_ylabel("completion rate % (Wilson 95% band)")
    handles, labels = fig.axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=min(3, len(labels)), fontsize=7)
    fig.suptitle(title)
    return fig


def fault_count_figure(report: Report) -> Figure | None:
    """CR over the fault count (duration held), per perturbed mode and setup."""
    return _fault_figure(
        report, "fault_count", "fault_duration", "Fault-count ablation: CR by faults per task"
    )


def fault_duration_figure(report: Report) -> Figure | None:
    """CR over the fault duration (count held), per perturbed mode and setup."""
    return _fault_figure(
        report, "fault_duration", "fault_count", "Fault-duration ablation: CR by calls per fault"
    )


def reasoning_effort_figure(report: Report) -> Figure | None:
    """CR over reasoning effort, one line per agent model and simulator (headline mode)."""
    chosen = [e for e in report.effort_rates if e.env_mode == report.headline_mode]
    found: dict[Setup, list[EffortRate]] = {}
    for e in chosen:
        found.setdefault((e.agent, e.simulator), []).append(e)
    lines = {k: v for k, v in found.items() if len(v) >= 2}
    if not lines:
        return None
    efforts = sorted({e.reasoning_effort for v in lines.values() for e in v}, key=effort_rank)
    fig = Figure(figsize=(7.0, 4.4))
    ax = fig.add_subplot()
    for i, ((agent, simulator), points) in enumerate(sorted(lines.items())):
        xs = [efforts.index(p.reasoning_effort) for p in points]
        _band(ax, xs, points, f"C{i % 10}", _wrap(report.label(agent, simulator), 50))
    ax.set_xticks(range(len(efforts)), efforts)
    ax.set_xlabel("reasoning effort")
    ax.set_ylabel("completion rate % (Wilson 95% band)")
    ax.set_ylim(-2, 102)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title(f"Reasoning-effort ablation ({report.headline_mode})")
    fig.tight_layout()
    return fig


def simulator_agreement_figure(report: Report) -> Figure | None:
    """Share of agent pairs two simulators order alike: a simulator x simulator map per mode."""
    measured = [a for a in report.agreement if a.n_pairs > 0]
    modes = sorted({a.env_mode for a in measured})
    if not modes:
        return None
    simulators = report.simulators
    n = len(simulators)
    fig = Figure(figsize=(2.4 + (1.1 * n + 1.6) * len(modes), 1.1 * n + 2.2), layout="constrained")
    image = None
    for k, mode in enumerate(modes):
        data = np.full((n, n), math.nan)
        np.fill_diagonal(data, 100.0)
        for a in measured:
            if a.env_mode == mode:
                i, j = simulators.index(a.simulator_a), simulators.index(a.simulator_b)
                data[i, j] = data[j, i] = 100 * a.share
        ax = fig.add_subplot(1, len(modes), k + 1)
        image = ax.imshow(
            np.ma.masked_invalid(data), cmap=AGREEMENT_MAP, vmin=0, vmax=100, aspect="equal"
        )
        _annotated_cells(ax, data, AGREEMENT_MAP, 0, 100)
        names = [_wrap(s, 16) for s in simulators]
        ax.set_xticks(range(n), names, fontsize=7, rotation=30, ha="right")
        ax.set_yticks(range(n), names if k == 0 else [], fontsize=7)
        ax.set_title(mode, fontsize=9)
    if image is not None:
        fig.colorbar(image, ax=fig.axes, fraction=0.04, label="% of pairs")
    fig.suptitle("Cross-simulator agreement: % of agent pairs ordered alike by CR")
    return fig


def generations_figure(report: Report) -> Figure | None:
    """CR in the headline mode over the agents' release dates (from the price file)."""
    points = [p for p in report.generations if p.env_mode == report.headline_mode]
    if len({p.agent for p in points}) < 2:
        return None
    fig = Figure(figsize=(7.5, 4.4))
    ax = fig.add_subplot()
    simulators = sorted({p.simulator for p in points})
    for i, simulator in enumerate(simulators):
        mine = [p for p in points if p.simulator == simulator]
        families: dict[str, list[Any]] = {}
        for p in mine:
            families.setdefault(p.agent.split("/")[0], []).append(p)
        for j, (family, members) in enumerate(sorted(families.items())):
            colour = f"C{(i * 3 + j) % 10}"
            xs = [p.release_date for p in members]
            ys = [100 * p.rate for p in members]
            errs = np.array([_errors(p.rate, p.low, p.high) for p in members]).T * 100
            label = family if len(simulators) == 1 else f"{family} @ {simulator}"
            ax.errorbar(xs, ys, yerr=errs, marker="o", capsize=3, color=colour, label=label)
            for p, x, y in zip(members, xs, ys, strict=True):
                ax.annotate(
                    p.agent.split("/", 1)[-1],
                    (x, y),
                    textcoords="offset points",
                    xytext=(4, 6),
                    fontsize=7,
                )
    ax.set_ylim(-2, 105)
    ax.set_xlabel("release date")
    ax.set_ylabel(f"completion rate % in {report.headline_mode} (Wilson 95% CI)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, title="provider", title_fontsize=7)
    ax.set_title("Model generations: CR over release date")
    fig.autofmt_xdate()
    fig.tight_layout()
    return fig


@dataclass(frozen=True)
class Chart:
    """One figure of the report: how to draw it, and what it needs when it cannot be drawn."""

    name: str
    title: str
    needs: str
    draw: Callable[[Report], Figure | None]


CHARTS = (
    Chart(
        "leaderboard",
        "Leaderboard",
        "runs of two or more agents (or simulators)",
        leaderboard_figure,
    ),
    Chart(
        "env_modes",
        "E0-E3 per model with R",
        "runs under E0 and under E1, E2 or E3 (the paper-robustness sweep)",
        modes_figure,
    ),
    Chart(
        "industry_radar",
        "Radar: CR by industry, one polygon per model",
        "runs over tasks of three or more industries",
        radar_figure,
    ),
    Chart(
        "industry_heatmap",
        "CR by industry and model",
        "runs over tasks of two or more industries",
        industry_heatmap_figure,
    ),
    Chart(
        "industry_difficulty",
        "CR by industry and difficulty",
        "runs over tasks of two or more difficulty levels",
        industry_difficulty_figure,
    ),
    Chart(
        "fault_count",
        "Fault-count ablation",
        "runs under E1-E3 at two or more fault counts with one fault duration "
        "(the paper-fault-count sweep)",
        fault_count_figure,
    ),
    Chart(
        "fault_duration",
        "Fault-duration ablation",
        "runs under E1-E3 at two or more fault durations with one fault count "
        "(the paper-fault-duration sweep)",
        fault_duration_figure,
    ),
    Chart(
        "reasoning_effort",
        "Reasoning-effort ablation",
        "runs of one agent model at two or more reasoning efforts in the headline mode "
        "(the paper-reasoning-effort sweep)",
        reasoning_effort_figure,
    ),
    Chart(
        "simulator_agreement",
        "Cross-simulator agreement",
        "runs of two or more agents under two or more simulators (the paper-cross-simulator sweep)",
        simulator_agreement_figure,
    ),
    Chart(
        "model_generations",
        "Model generations",
        "a price file (--prices) giving a release_date for two or more of the agent models",
        generations_figure,
    ),
)
"""Every figure, in the order of the report."""


@dataclass
class ChartSet:
    """The figures drawn, by name, and a line for each one left out."""

    figures: dict[str, Figure] = field(default_factory=dict)
    left_out: dict[str, str] = field(default_factory=dict)


def left_out_line(chart: Chart) -> str:
    """The line shown in place of a figure without its data."""
    return f"{chart.title}: not drawn, these runs lack its data; {chart.needs} would produce it."


def report_figures(report: Report) -> ChartSet:
    """Every figure the report's data supports; a line for each of the others."""
    out = ChartSet()
    with _style():
        for chart in CHARTS:
            figure = chart.draw(report)
            if figure is None:
                out.left_out[chart.name] = left_out_line(chart)
            else:
                out.figures[chart.name] = figure
    return out


def figure_bytes(fig: Figure, fmt: str) -> bytes:
    """Render a figure as ``png`` or ``svg`` bytes, without timestamps."""
    buffer = io.BytesIO()
    metadata = {"Date": None} if fmt == "svg" else {"Software": None}
    with _style():
        fig.savefig(buffer, format=fmt, dpi=120, metadata=metadata, bbox_inches="tight")
    return buffer.getvalue()


def chart_files(figures: dict[str, Figure]) -> dict[str, bytes]:
    """Each figure as ``NAME.png`` and ``NAME.svg`` file contents."""
    return {
        f"{name}.{fmt}": figure_bytes(fig, fmt)
        for name, fig in figures.items()
        for fmt in ("png", "svg")
    }
