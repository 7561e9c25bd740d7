"""The end-of-run summary as terminal tables: completion rates, cost, tokens by role."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from occubench.analysis import RateRow, rate_row, rates_by
from occubench.costs import (
    CostSummary,
    PriceTable,
    RoleSpend,
    RunEstimate,
    TokenComparison,
    costs_by,
    role_spend,
)
from occubench.results import SampleRow
from occubench.text import terminal_text


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
    tables.append(role_table(role_spend(rows, prices, _run_label)))
    checked = [r for r in rows if r.sim_checked is not None and r.error is None]
    if checked:
        tables.append(sim_check_table(checked))
    talked = [r for r in rows if r.user_turns is not None and r.error is None]
    if talked:
        tables.append(user_table(talked))
    return tables


def user_table(rows: Sequence[SampleRow]) -> Table:
    """The simulated user of a run's tasks with a user: its turns and its errors, kept apart.

    A user error (a reply that still failed a check after its re-ask) is the user model's,
    never the agent's: CR clean leaves those samples out.
    """
    table = Table(title="Simulated user (its errors are not the agent's)")
    table.add_column("run")
    for name in ("samples", "user turns", "user errors", "user ended", "CR %", "CR clean %"):
        table.add_column(name, justify="right")
    groups: dict[str, list[SampleRow]] = {}
    for row in rows:
        groups.setdefault(_run_label(row), []).append(row)
    for name, members in sorted(groups.items()):
        clean = [r for r in members if not r.user_errors]
        table.add_row(
            terminal_text(name),
            str(len(members)),
            str(sum(r.user_turns or 0 for r in members)),
            str(sum(r.user_errors or 0 for r in members)),
            str(sum(1 for r in members if r.user_ended)),
            _pct(rate_row(name, members).rate),
            _pct(rate_row(name, clean).rate),
        )
    return table


def role_table(spend: Sequence[RoleSpend]) -> Table:
    """Tokens and cost by role (agent, simulator, verifier) of each run."""
    table = Table(title="Tokens and cost by role")
    table.add_column("run")
    table.add_column("role")
    table.add_column("model")
    for name in ("input tokens", "cached tokens", "output tokens", "cost"):
        table.add_column(name, justify="right")
    for s in spend:
        table.add_row(
            terminal_text(s.group),
            s.role,
            terminal_text(s.model or "-"),
            f"{s.input_tokens:,}",
            f"{s.cached_tokens:,}",
            f"{s.output_tokens:,}",
            _usd(s.cost),
        )
    return table


def sim_check_table(rows: Sequence[SampleRow]) -> Table:
    """Online simulator checks of a run: suspect samples and CR with and without them."""
    table = Table(title="Online simulator checks")
    table.add_column("run")
    for name in (
        "samples",
        "observations",
        "failed first answers",
        "suspect",
        "CR %",
        "CR clean %",
    ):
        table.add_column(name, justify="right")
    groups: dict[str, list[SampleRow]] = {}
    for row in rows:
        groups.setdefault(_run_label(row), []).append(row)
    for name, members in sorted(groups.items()):
        clean = [r for r in members if not r.simulator_suspect]
        table.add_row(
            terminal_text(name),
            str(len(members)),
            str(sum(r.sim_checked or 0 for r in members)),
            str(sum(sum(r.sim_check_failures.values()) for r in members)),
            str(len(members) - len(clean)),
            _pct(rate_row(name, members).rate),
            _pct(rate_row(name, clean).rate),
        )
    return table


def _run_label(row: SampleRow) -> str:
    return f"{row.agent_model} {row.env_mode} (run {row.run_id[:8]})"


def estimate_table(estimate: RunEstimate) -> Table:
    """The cost estimate as a rich table: tokens and dollars per role, and the total."""
    table = Table(
        title=f"Estimate before the run: {estimate.tasks} tasks x {estimate.epochs} epoch(s) = "
        f"{estimate.samples} samples"
    )
    table.add_column("role")
    table.add_column("model")
    for name in ("calls", "input tokens", "of them cached", "output tokens", "total", "cost"):
        table.add_column(name, justify="right")
    checks = [r.model_copy(update={"role": f"preflight: {r.role}"}) for r in estimate.preflight]
    for r in [*estimate.roles, *checks]:
        played = f" (the {r.logged_as}'s model)" if r.logged_as else ""
        table.add_row(
            r.role,
            terminal_text((r.model or "-") + played),
            f"{r.tokens.calls:,}",
            f"{r.tokens.input_tokens:,}",
            f"{r.tokens.cached_input_tokens:,}",
            f"{r.tokens.output_tokens:,}",
            f"{r.tokens.total:,}",
            _usd(r.cost),
        )
    total = sum(r.tokens.total for r in [*estimate.roles, *estimate.preflight])
    table.add_row("every role", "", "", "", "", "", f"{total:,}", _usd(estimate.total_cost))
    return table


def comparison_table(comparisons: Sequence[TokenComparison]) -> Table:
    """Estimated against measured tokens per role."""
    table = Table(title="Estimate against the tokens the logs measured")
    table.add_column("role")
    for name in ("estimated", "measured", "estimate / measured"):
        table.add_column(name, justify="right")
    for c in comparisons:
        ratio = "-" if c.ratio != c.ratio else f"{c.ratio:.3f}"
        table.add_row(c.role, f"{c.estimated:,}", f"{c.measured:,}", ratio)
    return table
