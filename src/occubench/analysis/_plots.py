"""Static charts of a report (matplotlib, Agg): PNG and SVG files, the SVG also for the HTML.

Figures are built with ``matplotlib.figure.Figure`` directly (no pyplot, no global
state), so they render headless with the Agg canvas and are safe in any thread. Text is
drawn as paths and the SVG ids are salted with a constant: the same report gives the
same bytes.
"""

from __future__ import annotations

import io
import math
import textwrap
from contextlib import AbstractContextManager
from typing import Any

import numpy as np
from matplotlib import rc_context
from matplotlib.figure import Figure

from occubench.analysis._report import Report

MODE_COLOURS = {"E0": "#4c72b0", "E1": "#dd8452", "E2": "#55a868", "E3": "#c44e52"}


def _style() -> AbstractContextManager[Any]:
    """Draw with SVG ids salted by a constant and text as paths (stable, no font files)."""
    return rc_context({"svg.hashsalt": "occubench", "svg.fonttype": "path", "font.size": 9})


def _setups(report: Report) -> list[tuple[str, str]]:
    return [(line.agent, line.simulator) for line in report.leaderboard]


def _errors(rate: float, low: float, high: float) -> tuple[float, float]:
    if math.isnan(rate):
        return 0.0, 0.0
    return max(0.0, rate - low), max(0.0, high - rate)


def _nan0(value: float) -> float:
    return 0.0 if math.isnan(value) else value


def leaderboard_figure(report: Report) -> Figure:
    """Horizontal bars of CR in the headline mode with Wilson 95% whiskers, best on top."""
    lines = report.leaderboard
    fig = Figure(figsize=(7, 0.5 * len(lines) + 1.4))
    ax = fig.add_subplot()
    y = np.arange(len(lines))[::-1]
    errs = np.array([_errors(line.rate, line.low, line.high) for line in lines]).T
    ax.barh(
        y, [100 * _nan0(line.rate) for line in lines], xerr=100 * errs, capsize=3, color="#4c72b0"
    )
    ax.set_yticks(y, [report.label(line.agent, line.simulator) for line in lines])
    ax.set_xlim(0, 100)
    ax.set_xlabel(f"completion rate % in {report.headline_mode} (Wilson 95% CI)")
    ax.set_title("Leaderboard")
    fig.tight_layout()
    return fig


def radar_figure(report: Report) -> Figure:
    """One radar per setup: CR by industry in the headline mode."""
    setups = _setups(report)
    industries = sorted({g.group for g in report.rates_for("industry")})
    cells = {(g.agent, g.simulator, g.group): g.rate for g in report.rates_for("industry")}
    cols = min(3, len(setups))
    rows = math.ceil(len(setups) / cols)
    fig = Figure(figsize=(4.2 * cols, 4.2 * rows))
    angles = np.linspace(0, 2 * np.pi, len(industries), endpoint=False)
    closed = np.append(angles, angles[:1])
    for i, (agent, simulator) in enumerate(setups):
        ax = fig.add_subplot(rows, cols, i + 1, projection="polar")
        values = [100 * _nan0(cells.get((agent, simulator, name), math.nan)) for name in industries]
        ax.plot(closed, [*values, values[0]], color=f"C{i}")
        ax.fill(closed, [*values, values[0]], color=f"C{i}", alpha=0.25)
        ax.set_xticks(angles, [textwrap.fill(n, 14) for n in industries], fontsize=6)
        ax.tick_params(axis="x", pad=10)
        ax.set_ylim(0, 100)
        ax.set_yticks([25, 50, 75, 100], ["25", "50", "75", "100"], fontsize=6)
        ax.set_title(textwrap.fill(report.label(agent, simulator), 40), fontsize=9, pad=16)
    fig.suptitle(f"Completion rate % by industry ({report.headline_mode})")
    fig.tight_layout()
    return fig


def modes_figure(report: Report) -> Figure:
    """Draw CR per env mode for each setup as grouped bars (Wilson 95%), R above each group."""
    setups = _setups(report)
    overall = {
        (g.agent, g.simulator, g.env_mode): g for g in report.rates if g.dimension == "overall"
    }
    robust = {(r.agent, r.simulator): r for r in report.robustness}
    modes = report.env_modes
    width = 0.8 / len(modes)
    fig = Figure(figsize=(max(6.0, 1.6 * len(setups) + 2), 4))
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
        if rob is not None and not math.isnan(rob.r):
            ax.annotate(f"R={rob.r:.2f}", (x[i], 103), ha="center", fontsize=8)
    ax.set_xticks(x, [textwrap.fill(report.label(a, s), 24) for a, s in setups], fontsize=7)
    ax.set_ylim(0, 112)
    ax.set_ylabel("completion rate %")
    ax.set_title("Completion rate by env mode (Wilson 95% CI); R = min(E1..E3) / E0")
    ax.legend(ncols=len(modes), fontsize=7, loc="upper right", bbox_to_anchor=(1, -0.12))
    fig.tight_layout()
    return fig


def industry_heatmap_figure(report: Report) -> Figure:
    """Heat map of CR by industry (rows) and setup (columns) in the headline mode."""
    setups = _setups(report)
    industries = sorted({g.group for g in report.rates_for("industry")})
    cells = {(g.agent, g.simulator, g.group): g.rate for g in report.rates_for("industry")}
    data = np.array(
        [[100 * cells.get((a, s, name), math.nan) for a, s in setups] for name in industries]
    )
    fig = Figure(figsize=(2 + 1.3 * len(setups), 0.4 * len(industries) + 1.8))
    ax = fig.add_subplot()
    image = ax.imshow(np.ma.masked_invalid(data), cmap="RdYlGn", vmin=0, vmax=100, aspect="auto")
    for (i, j), value in np.ndenumerate(data):
        if not math.isnan(value):
            ax.text(j, i, f"{value:.0f}", ha="center", va="center", fontsize=7)
    ax.set_xticks(
        range(len(setups)), [textwrap.fill(report.label(a, s), 18) for a, s in setups], fontsize=7
    )
    ax.set_yticks(range(len(industries)), industries, fontsize=7)
    ax.set_title(f"Completion rate % by industry ({report.headline_mode})")
    fig.colorbar(image, ax=ax, fraction=0.05)
    fig.tight_layout()
    return fig


def report_figures(report: Report) -> dict[str, Figure]:
    """Every chart of the report, by file stem."""
    with _style():
        return {
            "leaderboard": leaderboard_figure(report),
            "industry_radar": radar_figure(report),
            "env_modes": modes_figure(report),
            "industry_heatmap": industry_heatmap_figure(report),
        }


def figure_bytes(fig: Figure, fmt: str) -> bytes:
    """Render a figure as ``png`` or ``svg`` bytes, without timestamps."""
    buffer = io.BytesIO()
    metadata = {"Date": None} if fmt == "svg" else {"Software": None}
    with _style():
        fig.savefig(buffer, format=fmt, dpi=120, metadata=metadata)
    return buffer.getvalue()


def chart_files(figures: dict[str, Figure]) -> dict[str, bytes]:
    """Each figure as ``NAME.png`` and ``NAME.svg`` file contents."""
    return {
        f"{name}.{fmt}": figure_bytes(fig, fmt)
        for name, fig in figures.items()
        for fmt in ("png", "svg")
    }
