"""Cross-simulator agreement: do two simulators rank the same agents the same way?

Runs are grouped by env mode, simulator model and agent model; an agent's score under
a simulator is its completion rate (CR) over its scored samples in that mode. For
every two simulators, ``occubench.analysis`` gives the pairwise ranking agreement
(share of agent pairs ordered alike), Kendall's tau-b and the pairs that flip. Score
compression is the spread of the agents' CRs under each simulator: max - min and the
population standard deviation. A simulator that makes every task trivially easy or
impossible compresses the spread towards 0 and hides differences between agents.

With a *reference* simulator (the twin, ``occubench/twin``, by default when the logs hold
runs under it; ``--reference``), each other simulator is also held against it: its ranking
agreement with the reference, and per agent its verdicts against the reference's
(``fidelity._verdicts``: CR under each, agreement, the sim-to-real gap with its interval,
the tasks that flip and the first step whose answer differed).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from pydantic import BaseModel, Field
from rich.table import Table

from occubench.analysis import SimulatorAgreement, env_modes, group, rate_row, simulator_agreement
from occubench.errors import UsageError
from occubench.fidelity._gold import Estimate, estimate_cell
from occubench.fidelity._verdicts import DifferenceKind, VerdictRow, against_reference
from occubench.results import SampleRow
from occubench.text import terminal_text


class SimulatorSpread(BaseModel):
    """Agents' completion rates under one simulator in one env mode, and their spread."""

    simulator: str = Field(description="Simulator model.")
    env_mode: str = Field(description="E0..E3 (or another mode name).")
    rates: dict[str, float] = Field(description="CR per agent model (scored samples only).")
    scored: dict[str, int] = Field(description="Scored samples per agent model.")
    spread: float = Field(description="max - min of the CRs (nan with no agent scored).")
    std: float = Field(description="Population standard deviation of the CRs.")


class SimulatorComparison(BaseModel):
    """Everything ``occubench compare-simulators`` reports."""

    simulators: list[str] = Field(description="Simulator models found in the logs.")
    agents: list[str] = Field(description="Agent models found in the logs.")
    env_modes: list[str] = Field(description="Env modes found, in order.")
    spreads: list[SimulatorSpread] = Field(description="Per mode and simulator: CRs and spread.")
    agreements: list[SimulatorAgreement] = Field(
        description="Per mode and simulator pair: ranking agreement, tau, flipped pairs."
    )
    against_gold: dict[str, Estimate] = Field(
        default_factory=dict,
        description="Per simulator: its agreement with a gold world (``audit --gold``), if given.",
    )
    reference: str | None = Field(
        default=None, description="The simulator taken as the real environment (None: no such)."
    )
    verdicts: list[VerdictRow] = Field(
        default_factory=list,
        description="Per mode, agent and other simulator: verdicts against the reference's.",
    )

    def matrix(self, env_mode: str) -> dict[str, dict[str, float]]:
        """Pairwise ranking agreement (share of agent pairs ordered alike) in one mode."""
        out = {
            a: {b: 1.0 if a == b else float("nan") for b in self.simulators}
            for a in self.simulators
        }
        for agreement in self.agreements:
            if agreement.env_mode == env_mode:
                out[agreement.simulator_a][agreement.simulator_b] = agreement.share
                out[agreement.simulator_b][agreement.simulator_a] = agreement.share
        return out


def simulator_spreads(rows: Sequence[SampleRow]) -> list[SimulatorSpread]:
    """Agents' CRs and their spread, per env mode and simulator."""
    out = []
    for (mode, simulator), members in group(
        rows, lambda r: (r.env_mode, r.simulator_model or "")
    ).items():
        by_agent = {
            agent: rate_row(agent, ms)
            for agent, ms in group(members, lambda r: r.agent_model).items()
        }
        rates = {agent: row.rate for agent, row in by_agent.items() if row.scored}
        values = list(rates.values())
        out.append(
            SimulatorSpread(
                simulator=simulator,
                env_mode=mode,
                rates=rates,
                scored={agent: row.scored for agent, row in by_agent.items()},
                spread=max(values) - min(values) if values else float("nan"),
                std=statistics.pstdev(values) if values else float("nan"),
            )
        )
    return out


def compare_simulators(
    rows: Sequence[SampleRow], reference: str | None = None
) -> SimulatorComparison:
    """Agreement and compression between the simulators of ``rows`` (module doc).

    Args:
        rows: Runs of the same agents under two or more simulators.
        reference: The simulator taken as the real environment (None: none).

    Raises:
        UsageError: when the rows hold runs under fewer than two simulators, or none
            under ``reference``.
    """
    simulators = sorted({r.simulator_model or "" for r in rows})
    if len(simulators) < 2:
        found = ", ".join(simulators) or "none"
        raise UsageError(
            f"compare-simulators needs runs of the same agents under two or more "
            f"simulators; the logs hold {len(simulators)} ({found})"
        )
    return SimulatorComparison(
        simulators=simulators,
        agents=sorted({r.agent_model for r in rows}),
        env_modes=env_modes(rows),
        spreads=simulator_spreads(rows),
        agreements=simulator_agreement(rows),
        reference=reference,
        verdicts=against_reference(rows, reference) if reference is not None else [],
    )


def _number(value: float, digits: int = 2) -> str:
    return "-" if value != value else f"{value:.{digits}f}"


def _rate_table(
    mode: str, spreads: dict[str, SimulatorSpread], gold: dict[str, Estimate] | None = None
) -> Table:
    table = Table(title=f"{mode}: completion rate % by simulator (score compression below)")
    table.add_column("agent")
    for sim in spreads:
        table.add_column(sim, justify="right")
    agents = sorted({a for spread in spreads.values() for a in spread.scored})
    for agent in agents:
        cells = [spread.rates.get(agent) for spread in spreads.values()]
        table.add_row(agent, *("-" if c is None else f"{100 * c:.0f}" for c in cells))
    table.add_section()
    table.add_row("spread (max-min)", *(_number(100 * s.spread, 1) for s in spreads.values()))
    table.add_row("std", *(_number(100 * s.std, 1) for s in spreads.values()))
    if gold:
        missing = Estimate(mean=None, n=0)
        table.add_row("against gold", *(estimate_cell(gold.get(s, missing)) for s in spreads))
    return table


def _agreement_table(mode: str, simulators: list[str], comparison: SimulatorComparison) -> Table:
    pairs = {(a.simulator_a, a.simulator_b): a for a in comparison.agreements if a.env_mode == mode}
    table = Table(
        title=f"{mode}: pairwise ranking agreement (share of agent pairs ordered alike; "
        "Kendall tau-b)"
    )
    table.add_column("simulator")
    for sim in simulators:
        table.add_column(sim, justify="right")
    for a in simulators:
        cells = []
        for b in simulators:
            pair = pairs.get((a, b)) or pairs.get((b, a))
            cells.append(
                "1.00" if pair is None else f"{_number(pair.share)} (tau {_number(pair.tau)})"
            )
        table.add_row(a, *cells)
    return table


def _flip_table(mode: str, comparison: SimulatorComparison) -> Table:
    table = Table(title=f"{mode}: agent pairs that flip between simulators")
    for column in ("simulator A", "simulator B", "under A", "under B"):
        table.add_column(column)
    for pair in comparison.agreements:
        if pair.env_mode == mode:
            for x, y in pair.flipped:
                table.add_row(pair.simulator_a, pair.simulator_b, f"{x} > {y}", f"{y} > {x}")
    if not table.row_count:
        table.add_row("-", "-", "no pair flips", "-")
    return table


def _ranking_table(mode: str, reference: str, comparison: SimulatorComparison) -> Table:
    table = Table(
        title=f"{mode}: ranking agreement with the reference {reference} (share of agent "
        "pairs ordered alike; Kendall tau-b)"
    )
    for column in ("simulator", "agreement", "tau", "agent pairs that flip"):
        table.add_column(column, justify="left" if column == "simulator" else "right")
    for pair in comparison.agreements:
        if pair.env_mode != mode or reference not in (pair.simulator_a, pair.simulator_b):
            continue
        other = pair.simulator_b if pair.simulator_a == reference else pair.simulator_a
        table.add_row(
            terminal_text(other),
            f"{_number(pair.share)} ({pair.agreeing_pairs}/{pair.n_pairs})",
            _number(pair.tau),
            str(len(pair.flipped)),
        )
    return table


def _points(value: float) -> str:
    return "-" if value != value else f"{100 * value:+.0f}"


def _gap_cell(row: VerdictRow) -> str:
    return f"{_points(row.gap)} [{_points(row.low)}, {_points(row.high)}]"


def _setting(row: VerdictRow) -> str:
    return terminal_text(f"{row.agent} ({row.faults})" if row.faults else row.agent)


def _verdict_table(mode: str, reference: str, rows: list[VerdictRow]) -> Table:
    table = Table(
        title=f"{mode}: verdicts against the reference {reference} (CR %; gap = CR sim - CR "
        "reference in points, 95% interval over tasks; agreement = pairs with the same verdict)"
    )
    for column in ("agent", "simulator", "CR reference", "CR sim", "gap [95% CI]", "agreement"):
        table.add_column(column, justify="left" if column in ("agent", "simulator") else "right")
    table.add_column("flips", justify="right")
    for row in rows:
        table.add_row(
            _setting(row),
            terminal_text(row.simulator),
            _number(100 * row.reference_rate, 0),
            _number(100 * row.simulator_rate, 0),
            _gap_cell(row),
            f"{_number(100 * row.agreement, 0)}% ({row.agreeing}/{row.pairs})",
            str(len(row.flips)),
        )
    return table


_VERDICT = {True: "pass", False: "fail"}


def _cause_cell(row: VerdictRow, index: int) -> tuple[str, str, str]:
    """What differed first, and the reference's and the simulator's side of it."""
    cause = row.flips[index].cause
    text = {
        DifferenceKind.OBSERVATION: f"step {cause.step} {cause.tool or '?'} (answer)",
        DifferenceKind.CALL: f"step {cause.step} (the calls differ)",
        DifferenceKind.ANSWER: "same steps, another final answer",
        DifferenceKind.NONE: "same trajectory, graded differently",
        DifferenceKind.UNKNOWN: "trajectory not recorded",
    }[cause.kind]
    return terminal_text(text), terminal_text(cause.reference), terminal_text(cause.simulator)


def _flipped_table(mode: str, reference: str, rows: list[VerdictRow]) -> Table:
    table = Table(
        title=f"{mode}: tasks that flip between the reference {reference} and a simulator, "
        "with the first difference of their trajectories"
    )
    for column in ("agent", "simulator", "task (epoch)", "ref -> sim", "first difference"):
        table.add_column(column)
    table.add_column("under the reference")
    table.add_column("under the simulator")
    for row in rows:
        for index, flip in enumerate(row.flips):
            table.add_row(
                _setting(row),
                terminal_text(row.simulator),
                terminal_text(f"{flip.task_id} ({flip.epoch})"),
                f"{_VERDICT[flip.reference_passed]}->{_VERDICT[flip.simulator_passed]}",
                *_cause_cell(row, index),
            )
    if not table.row_count:
        table.add_row("-", "-", "no task flips", "-", "-", "-", "-")
    return table


def reference_tables(comparison: SimulatorComparison, mode: str) -> list[Table]:
    """Against the reference in one mode: ranking agreement, verdicts, flipped tasks.

    Empty without a reference, or when nothing ran in ``mode`` under it and another.
    """
    reference = comparison.reference
    rows = [r for r in comparison.verdicts if r.env_mode == mode]
    if reference is None or not rows:
        return []
    return [
        _ranking_table(mode, reference, comparison),
        _verdict_table(mode, reference, rows),
        _flipped_table(mode, reference, rows),
    ]


def comparison_tables(comparison: SimulatorComparison) -> list[Table]:
    """Per env mode: the CR table with spreads, the agreement matrix, the flipped pairs.

    With a gold audit (``against_gold``), the CR table's last row is each simulator's
    agreement with the gold world. With a reference simulator, the tables against it
    follow (``reference_tables``).

    Each mode shows only the simulators that ran in it.
    """
    tables = []
    for mode in comparison.env_modes:
        spreads = {s.simulator: s for s in comparison.spreads if s.env_mode == mode}
        tables += [
            _rate_table(mode, spreads, comparison.against_gold),
            _agreement_table(mode, list(spreads), comparison),
            _flip_table(mode, comparison),
            *reference_tables(comparison, mode),
        ]
    return tables
