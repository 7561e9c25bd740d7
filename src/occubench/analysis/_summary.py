"""The end-of-run summary: completion rate overall and per group, errors apart."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import BaseModel, Field
from rich.table import Table

from occubench.analysis._cost import CostSummary, PriceTable, costs_by
from occubench.analysis._runs import SampleRow
from occubench.analysis._sanitize import terminal_text
from occubench.analysis._stats import wilson_interval


class RateRow(BaseModel):
    """Completion rate of one group of samples."""

    group: str
    samples: int = Field(description="Samples in the group, errored ones included.")
    scored: int = Field(
        description="Samples counted: with a verdict, or errored under a protocol that "
        "counts errors as failed tasks."
    )
    passed: int
    errors: int = Field(description="Infrastructure errors, left out of the rate.")
    rate: float = Field(description="passed / scored (nan when nothing was counted).")
    low: float = Field(description="Wilson 95% interval, low end.")
    high: float = Field(description="Wilson 95% interval, high end.")


def rate_row(group: str, rows: Sequence[SampleRow]) -> RateRow:
    """The completion rate of ``rows``.

    Errors are counted apart (``errors``), and also as failed tasks in runs whose
    protocol counts them so (the paper: CR over all tasks).
    """
    scored = [r for r in rows if r.counted]
    passed = sum(bool(r.passed) for r in scored)
    interval = wilson_interval(passed, len(scored))
    return RateRow(
        group=group,
        samples=len(rows),
        scored=len(scored),
        passed=passed,
        errors=sum(r.error is not None for r in rows),
        rate=interval.estimate,
        low=interval.low,
        high=interval.high,
    )


def rates_by(rows: Sequence[SampleRow], key: Callable[[SampleRow], str]) -> list[RateRow]:
    """One rate row per value of ``key`` (sorted by name)."""
    groups: dict[str, list[SampleRow]] = {}
    for row in rows:
        groups.setdefault(key(row), []).append(row)
    return [rate_row(name, groups[name]) for name in sorted(groups)]


def _pct(value: float) -> str:
    return "-" if value != value else f"{100 * value:.1f}"


def rate_table(title: str, first: str, rates: Sequence[RateRow]) -> Table:
    """A rich table of rate rows."""
    table = Table(title=title)
    table.add_column(first)
    for name in ("scored", "passed", "CR %", "95% CI", "errors"):
        table.add_column(name, justify="right")
    for r in rates:
        table.add_row(
            r.group,
            str(r.scored),
            str(r.passed),
            _pct(r.rate),
            f"{_pct(r.low)}-{_pct(r.high)}",
            str(r.errors),
        )
    return table


def _usd(value: float | None) -> str:
    return "-" if value is None else f"${value:,.4f}"


def cost_table(costs: Sequence[CostSummary]) -> Table:
    """Render cost summaries as a rich table (per run, per task, per solved task)."""
    table = Table(title="Cost (USD)")
    table.add_column("run")
    for name in ("samples", "solved", "total", "per task", "per solved task"):
        table.add_column(name, justify="right")
    table.add_column("no price for")
    for c in costs:
        table.add_row(
            terminal_text(c.group),
            str(c.samples),
            str(c.solved),
            _usd(c.total),
            _usd(c.per_task),
            _usd(c.per_solved_task),
            terminal_text(", ".join(c.unpriced_models)),
        )
    return table


def summary_tables(rows: Sequence[SampleRow], prices: PriceTable | None = None) -> list[Table]:
    """Overall and per-industry completion rates of one run, and its cost when priced."""
    tables = [
        rate_table(
            "Completion rate by industry",
            "industry",
            [*rates_by(rows, lambda r: r.industry), rate_row("all", rows)],
        ),
    ]
    if prices is not None:
        tables.append(cost_table(costs_by(rows, prices, _run_label)))
    return tables


def _run_label(row: SampleRow) -> str:
    return f"{row.agent_model} {row.env_mode} (run {row.run_id[:8]})"
