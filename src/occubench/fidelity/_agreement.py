"""Cross-simulator agreement: do two simulators rank the same agents the same way?

Runs are grouped by env mode, simulator model and agent model; an agent's score under
a simulator is its completion rate (CR) over its scored samples in that mode. For
every two simulators, ``occubench.analysis`` gives the pairwise ranking agreement
(share of agent pairs ordered alike), Kendall's tau-b and the pairs that flip. Score
compression is the spread of the agents' CRs under each simulator: max - min and the
population standard deviation. A simulator that makes every task trivially easy or
impossible compresses the spread towards 0 and hides differences between agents.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from pydantic import BaseModel, Field
from rich.table import Table

from occubench.analysis import SimulatorAgreement, env_modes, group, rate_row, simulator_agreement
from occubench.errors import UsageError
from occubench.fidelity._gold import Estimate, estimate_cell
from occubench.results import SampleRow


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


def compare_simulators(rows: Sequence[SampleRow]) -> SimulatorComparison:
    """Agreement and compression between the simulators of ``rows`` (module doc).

    Raises:
        UsageError: when the rows hold runs under fewer than two simulators.
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


def comparison_tables(comparison: SimulatorComparison) -> list[Table]:
    """Per env mode: the CR table with spreads, the agreement matrix, the flipped pairs.

    With a gold audit (``against_gold``), the CR table's last row is each simulator's
    agreement with the gold world.

    Each mode shows only the simulators that ran in it.
    """
    tables = []
    for mode in comparison.env_modes:
        spreads = {s.simulator: s for s in comparison.spreads if s.env_mode == mode}
        tables += [
            _rate_table(mode, spreads, comparison.against_gold),
            _agreement_table(mode, list(spreads), comparison),
            _flip_table(mode, comparison),
        ]
    return tables
