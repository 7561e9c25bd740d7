"""The report: every metric of a set of runs, in one serialisable object.

``build_report`` computes it from the tidy sample table; the terminal, file, plot and
HTML renderers only lay it out.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from occubench.analysis import (
    DIMENSIONS,
    NAN_AS_STRING,
    Comparison,
    CostRow,
    EffortRate,
    FaultRate,
    FaultRecovery,
    FlipRow,
    GenerationPoint,
    GridRate,
    GroupRate,
    GuardQuality,
    InvalidRate,
    LeaderboardRow,
    PassK,
    Robustness,
    RowQuality,
    SharedPaths,
    SimulatorAgreement,
    SuspectImpact,
    UserErrors,
    VarianceReport,
    WireUse,
    WorldUse,
    compare_models,
    costs,
    effort_rates,
    env_modes,
    fault_rates,
    fault_recovery,
    fault_settings,
    generations,
    grid_rates,
    headline_mode,
    invalid_rates,
    leaderboard,
    mark_indistinguishable,
    pass_k,
    rates,
    robustness_scores,
    row_guard,
    row_quality,
    setup_of,
    shared_paths,
    simulator_agreement,
    suspect_impact,
    user_errors,
    variance_report,
    verdict_flips,
    wire_use,
    world_use,
)
from occubench.costs import PriceTable
from occubench.defaults import DEFAULT_BOOTSTRAP_RESAMPLES, DEFAULT_BOOTSTRAP_SEED
from occubench.errors import UsageError
from occubench.report._floor import LineFloor
from occubench.results import SampleRow
from occubench.review import Review, ReviewReport, review_report
from occubench.twins import FidelitySummary, TwinFidelity, summaries


class GoldAgreement(BaseModel):
    """A simulator's agreement with a gold world (``occubench audit --gold``; ``report --gold``)."""

    simulator: str = Field(description="Simulator model.")
    world: str = Field(description="The gold world.")
    entries: int = Field(description="Gold entries the simulator answered.")
    mean: float | None = Field(description="Mean over entries of their parts' mean (1: agrees).")
    low: float | None = Field(default=None, description="Bootstrap 95% interval, low end.")
    high: float | None = Field(default=None, description="Bootstrap 95% interval, high end.")


class Report(BaseModel):
    """All metrics of a set of runs (what ``occubench report`` shows and writes).

    Undefined numbers (a rate without samples, R without a clean baseline) are ``nan``,
    written "NaN" in JSON.
    """

    model_config = NAN_AS_STRING

    logs: list[str] = Field(description="Log files read.")
    samples: int = Field(description="Samples read, errored ones included.")
    errors: int = Field(description="Samples that ended in an infrastructure error.")
    agents: list[str] = Field(description="Agent models.")
    simulators: list[str] = Field(description="Simulator models.")
    verifiers: list[str] = Field(description="Verifier models (empty: the simulator judged).")
    env_modes: list[str] = Field(description="Env modes present.")
    fault_settings: list[str] = Field(description="Fault settings of the perturbed modes.")
    headline_mode: str = Field(description="Mode the leaderboard ranks on (E0 when present).")
    priced: bool = Field(description="Whether a price table was given.")
    bootstrap_resamples: int = Field(description="Resamples behind every bootstrap interval.")
    leaderboard: list[LeaderboardRow]
    rates: list[GroupRate] = Field(description="CR per setup, mode and group of each dimension.")
    robustness: list[Robustness]
    comparisons: list[Comparison]
    agreement: list[SimulatorAgreement]
    pass_k: list[PassK]
    costs: list[CostRow]
    fault_recovery: list[FaultRecovery]
    fault_rates: list[FaultRate] = Field(description="CR per fault count and duration (E1-E3).")
    effort_rates: list[EffortRate] = Field(description="CR per reasoning effort.")
    grid: list[GridRate] = Field(description="CR per industry and difficulty.")
    generations: list[GenerationPoint] = Field(
        description="CR of agent models with a release date in the price file."
    )
    review: ReviewReport | None = Field(
        default=None, description="Reviewer agreement, realism and human-verdict CR."
    )
    suspect_impact: list[SuspectImpact] = Field(
        default_factory=list,
        description="CR with and without simulator-suspect samples (online checks on).",
    )
    invalid_rates: list[InvalidRate] = Field(
        default_factory=list,
        description="Simulator-invalid rate per simulator, environment and scenario.",
    )
    variance: VarianceReport | None = Field(
        default=None, description="Variance components and MDDs (report --variance)."
    )
    against_gold: list[GoldAgreement] = Field(
        default_factory=list,
        description="Each simulator's agreement with a gold world (report --gold), if given.",
    )
    against_twin: list[FidelitySummary] = Field(
        default_factory=list,
        exclude_if=lambda lines: not lines,
        description="Each simulator's step fidelity against the executable twins (report "
        "--twin-fidelity, from audit --twin), if given; written only then.",
    )
    world_use: list[WorldUse] = Field(
        default_factory=list,
        description="Where observations came from per world: all, per run, agent and env.",
    )
    shared_paths: list[SharedPaths] = Field(
        default_factory=list,
        description="Per world with several agents: each agent's share of calls others made too.",
    )
    flips: list[FlipRow] = Field(
        default_factory=list,
        description="Verdict flips between epochs and runs of each setup and mode, split by "
        "cause (agent, simulator, verifier), and regraded samples against their original.",
    )
    quality: list[RowQuality] = Field(
        default_factory=list,
        description="Beside each leaderboard line (headline mode): samples flagged by the "
        "online checks, unanimous verifier votes, expert kappa and gold agreement.",
    )
    guard: list[GuardQuality] = Field(
        default_factory=list,
        description="Beside each leaderboard line (headline mode): the exploit guard's "
        "findings kept apart, passes suspected of an exploit (the agent) and samples whose "
        "simulator answered off its tools' contract unasked (the environment).",
    )
    agent_wires: list[WireUse] = Field(
        default_factory=list,
        exclude_if=lambda lines: not lines,
        description="Per setup whose agent program asked its model through the bridge: "
        "generations and tokens by wire; written only when there are some.",
    )
    user_errors: list[UserErrors] = Field(
        default_factory=list,
        exclude_if=lambda lines: not lines,
        description="Per setup and mode, the simulated user's errors, counted apart from the "
        "agent's failures, with CR with and without them ('not measured' where a setup had "
        "no user); written only when some task had a user.",
    )
    floor: list[LineFloor] = Field(
        default_factory=list,
        exclude_if=lambda lines: not lines,
        description="The verifier's floor beside each leaderboard line (report --floor); "
        "written only when given, so reports made without it read the same.",
    )

    def label(self, agent: str, simulator: str) -> str:
        """Name a setup: the agent, plus its simulator when several simulators are compared."""
        return agent if len(self.simulators) <= 1 else f"{agent} @ {simulator}"

    def add_gold(self, agreements: Sequence[GoldAgreement]) -> None:
        """Take the gold agreements of this report's simulators, also beside each line."""
        self.against_gold = [a for a in agreements if a.simulator in set(self.simulators)]
        means = {a.simulator: a.mean for a in self.against_gold}
        for q in self.quality:
            q.gold = means.get(q.simulator)

    def rates_for(self, dimension: str, mode: str | None = None) -> list[GroupRate]:
        """Rates of one dimension, in ``mode`` (default: the headline mode)."""
        chosen = mode or self.headline_mode
        return [g for g in self.rates if g.dimension == dimension and g.env_mode == chosen]


def build_report(
    rows: Sequence[SampleRow],
    prices: PriceTable | None = None,
    n_resamples: int = DEFAULT_BOOTSTRAP_RESAMPLES,
    seed: int = DEFAULT_BOOTSTRAP_SEED,
    reviews: Sequence[Review] | None = None,
    variance: bool = False,
    sources: Sequence[SampleRow] = (),
    twin: Sequence[TwinFidelity] = (),
) -> Report:
    """Compute every metric of the report from sample rows.

    Args:
        rows: The tidy sample table (``read_runs``).
        prices: Prices per model (and release dates); without them costs are left out.
        n_resamples: Bootstrap resamples for the intervals of R and of differences.
        seed: Bootstrap seed (the same rows give the same report).
        reviews: Expert reviews of the samples (``load_reviews``), if any.
        variance: Add the variance components and MDDs, and mark leaderboard lines whose
            difference is below the pair's MDD.
        sources: Samples of other groups that regraded ``rows`` may come from (each
            regraded sample is compared with its original grading, ``verdict_flips``).
        twin: Simulators measured against the executable twins (``audit --twin``): their
            summaries, and beside each line its simulator's figures on its environments.

    Raises:
        UsageError: when ``rows`` is empty.

    """
    if not rows:
        raise UsageError("no samples in the logs given")
    all_rates = [g for dim in DIMENSIONS for g in rates(rows, dim)]
    robust = robustness_scores(rows, n_resamples=n_resamples, seed=seed)
    cost_rows = costs(rows, prices)
    mode = headline_mode(rows)
    noise = variance_report(rows, seed=seed) if variance else None
    board = leaderboard(all_rates, robust, cost_rows if prices else (), mode)
    return Report(
        logs=sorted({r.log for r in rows}),
        samples=len(rows),
        errors=sum(r.error is not None for r in rows),
        agents=sorted({r.agent_model for r in rows}),
        simulators=sorted({r.simulator_model or "" for r in rows}),
        verifiers=sorted({r.verifier_model for r in rows if r.verifier_model}),
        env_modes=env_modes(rows),
        fault_settings=fault_settings(rows),
        headline_mode=mode,
        priced=prices is not None,
        bootstrap_resamples=n_resamples,
        leaderboard=board if noise is None else mark_indistinguishable(board, noise),
        rates=all_rates,
        robustness=robust,
        comparisons=compare_models(rows, n_resamples=n_resamples, seed=seed),
        agreement=simulator_agreement(rows),
        pass_k=pass_k(rows),
        costs=cost_rows,
        fault_recovery=fault_recovery(rows),
        fault_rates=fault_rates(rows),
        effort_rates=effort_rates(rows),
        grid=grid_rates(rows),
        generations=generations(rows, prices.release_dates() if prices else {}),
        review=None
        if reviews is None
        else review_report(rows, reviews, n_resamples=n_resamples, seed=seed),
        suspect_impact=suspect_impact(rows),
        user_errors=user_errors(rows),
        invalid_rates=invalid_rates(rows),
        variance=noise,
        world_use=world_use(rows),
        agent_wires=wire_use(rows),
        shared_paths=shared_paths(rows),
        flips=verdict_flips(rows, sources),
        quality=_quality(rows, mode, reviews, n_resamples, seed, twin),
        guard=row_guard(rows, mode),
        against_twin=[
            summary
            for name, summary in summaries(twin).items()
            if name in {r.simulator_model for r in rows}
        ],
    )


def _quality(
    rows: Sequence[SampleRow],
    mode: str,
    reviews: Sequence[Review] | None,
    n_resamples: int,
    seed: int,
    twin: Sequence[TwinFidelity],
) -> list[RowQuality]:
    """The quality figures of each line, with its expert kappa where reviews are given."""
    lines = row_quality(rows, mode, twin)
    if reviews is None:
        return lines
    for q in lines:
        mine = [r for r in rows if r.env_mode == mode and setup_of(r) == (q.agent, q.simulator)]
        agreement = review_report(mine, reviews, n_resamples=n_resamples, seed=seed).agreement
        q.reviewed = agreement.compared
        q.kappa = agreement.kappa if agreement.compared else None
    return lines
