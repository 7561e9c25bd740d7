"""Metrics over the tidy sample table: rates, robustness, pass^k, cost, fault recovery.

A *setup* is one agent model in one simulator (the pair every metric is computed for).
Rates count scored samples: infrastructure errors are counted apart, and also as failed
tasks in runs whose protocol says so (the paper's CR is over all tasks). Every rate
carries a Wilson 95% interval; R and rate differences carry seeded bootstrap intervals.
Paired comparisons align two setups on the same items: task, epoch and fault settings.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from itertools import combinations
from typing import TypeVar

from pydantic import BaseModel, Field

from occubench.analysis._dimensions import ALL, DIMENSIONS
from occubench.analysis._rates import NAN_AS_STRING, RateRow, rate_row
from occubench.analysis._stats import (
    BASELINE_MODE,
    PERTURBED_MODES,
    difference_interval,
    mcnemar_test,
    pairwise_agreement,
    pass_at_k,
    pass_hat_k,
    robustness_interval,
    wilson_interval,
)
from occubench.costs import PriceTable, cost_summary, row_cost
from occubench.defaults import DEFAULT_BOOTSTRAP_RESAMPLES, DEFAULT_BOOTSTRAP_SEED
from occubench.errors import UsageError
from occubench.faults import InjectedFault
from occubench.results import Harness, SampleRow
from occubench.roles import Role

Setup = tuple[str, str]
"""(agent model, simulator model)."""

K = TypeVar("K")
T = TypeVar("T")


class MetricRow(BaseModel):
    """Base of the metric records: JSON keeps undefined numbers as "NaN"."""

    model_config = NAN_AS_STRING


def agent_name(row: SampleRow) -> str:
    """The agent of a row's setup: the model, with its reasoning effort and budget if set.

    Written as a sweep labels such an agent (``model[reasoning_effort=high]``,
    ``model[reasoning_tokens=4096]``), and left alone when the name already says it
    (rows a sweep labelled).
    """
    settings = [
        f"{name}={value}"
        for name, value in (
            ("reasoning_effort", row.reasoning_effort),
            ("reasoning_tokens", row.reasoning_tokens),
        )
        if value is not None
    ]
    if not settings or all(s in row.agent_model for s in settings):
        return row.agent_model
    return f"{row.agent_model}[{','.join(settings)}]"


def _seed(row: SampleRow) -> str:
    """A row's seed as labels show it."""
    return "not recorded" if row.seed is None else str(row.seed)


def setup_of(row: SampleRow) -> Setup:
    """Return the setup a row belongs to."""
    return agent_name(row), row.simulator_model or ""


def group(rows: Iterable[T], key: Callable[[T], K]) -> dict[K, list[T]]:
    """Rows by ``key``, keys sorted."""
    groups: dict[K, list[T]] = {}
    for row in rows:
        groups.setdefault(key(row), []).append(row)
    return {k: groups[k] for k in sorted(groups)}  # type: ignore[type-var]


def _task(row: SampleRow) -> tuple[str, int, int, int, str]:
    """Identify the task a row ran, under its fault settings (the trials of pass^k)."""
    seed = -1 if row.seed is None else row.seed  # not recorded (a release run): its own key
    return str(row.task_id), seed, row.fault_count, row.fault_duration, row.fault_engine


def _item(row: SampleRow) -> tuple[tuple[str, int, int, int, str], int]:
    """Identify one trial of a task: the same for every setup (paired tests)."""
    return _task(row), row.epoch


def env_modes(rows: Iterable[SampleRow]) -> list[str]:
    """Env modes present, in order (E0, E1, ... then others by name)."""
    return sorted({r.env_mode for r in rows}, key=lambda m: (m[:1] != "E", m))


def headline_mode(rows: Sequence[SampleRow]) -> str:
    """Pick the mode the leaderboard ranks on: E0 when present, else the first mode."""
    modes = env_modes(rows)
    if not modes:
        raise ValueError("no samples")
    return BASELINE_MODE if BASELINE_MODE in modes else modes[0]


def fault_settings(rows: Iterable[SampleRow]) -> list[str]:
    """Fault settings seen per perturbed mode (more than one per mode are pooled)."""
    return sorted(
        {
            f"{r.env_mode} fc={r.fault_count} fd={r.fault_duration} {r.fault_engine} "
            f"seed={_seed(r)}"
            for r in rows
            if r.env_mode != BASELINE_MODE
        }
    )


def _scored(rows: Iterable[SampleRow]) -> list[SampleRow]:
    """Rows that count in rates (``SampleRow.counted``)."""
    return [r for r in rows if r.counted]


class GroupRate(RateRow):
    """Completion rate of one setup, in one env mode, for one group of a dimension."""

    model_config = NAN_AS_STRING

    agent: str = Field(description="Agent model.")
    simulator: str = Field(description="Simulator model.")
    env_mode: str = Field(description="E0..E3.")
    dimension: str = Field(description="overall, industry, domain, scenario or difficulty.")


def rates(rows: Sequence[SampleRow], dimension: str = "overall") -> list[GroupRate]:
    """Completion rates per setup, env mode and group of ``dimension`` (Wilson 95%)."""
    if dimension not in DIMENSIONS:
        raise UsageError(f"unknown dimension {dimension!r}; known: {', '.join(DIMENSIONS)}")
    key = DIMENSIONS[dimension]
    out: list[GroupRate] = []
    for (agent, simulator, mode, name), members in group(
        rows, lambda r: (*setup_of(r), r.env_mode, key(r))
    ).items():
        out.append(
            GroupRate(
                **rate_row(name, members).model_dump(),
                agent=agent,
                simulator=simulator,
                env_mode=mode,
                dimension=dimension,
            )
        )
    return out


class Robustness(MetricRow):
    """R = min(CR_E1, CR_E2, CR_E3) / CR_E0 of one setup at one fault setting.

    R is never pooled across fault settings (count, duration, seed, engine, protocol),
    and only defined when every mode ran over the same task set.
    """

    agent: str = Field(description="Agent model.")
    simulator: str = Field(description="Simulator model.")
    setting: str = Field(
        default="", description="The fault setting of the perturbed modes ('' without any)."
    )
    rates: dict[str, float] = Field(description="CR per env mode.")
    r: float = Field(description="Robustness ratio (nan without E0, a perturbed mode, or CR_E0).")
    low: float = Field(description="Stratified bootstrap 95% interval, low end.")
    high: float = Field(description="Stratified bootstrap 95% interval, high end.")
    r_note: str = Field(default="", description="Why R is undefined (empty when it is defined).")


def robustness_note(rates_by_mode: dict[str, float]) -> str:
    """Say why R is undefined for these rates per mode ("" when it is defined)."""
    missing = [m for m in (BASELINE_MODE, *PERTURBED_MODES) if m not in rates_by_mode]
    if missing:
        return f"no {', '.join(missing)} run: R = min(E1, E2, E3) / E0 needs all four modes"
    if rates_by_mode[BASELINE_MODE] == 0:
        return "CR in E0 is 0: R = min(E1..E3) / E0 is undefined"
    return ""


def fault_setting(row: SampleRow) -> str:
    """The fault setting a perturbed run was made under (what R must not pool over)."""
    return (
        f"fc={row.fault_count} fd={row.fault_duration} seed={_seed(row)} "
        f"{row.fault_engine} {row.protocol}"
    )


def task_set_note(rows: Sequence[SampleRow]) -> str:
    """Why the modes of ``rows`` are not comparable: their task sets differ ("" if alike)."""
    tasks = {mode: {_task(r) for r in ms} for mode, ms in group(rows, lambda r: r.env_mode).items()}
    if len({frozenset(t) for t in tasks.values()}) <= 1:
        return ""
    counts = ", ".join(f"{mode} {len(t)}" for mode, t in sorted(tasks.items()))
    return f"the modes ran different task sets ({counts} tasks): R compares like with like only"


def robustness_scores(
    rows: Sequence[SampleRow],
    n_resamples: int = DEFAULT_BOOTSTRAP_RESAMPLES,
    seed: int = DEFAULT_BOOTSTRAP_SEED,
) -> list[Robustness]:
    """R per setup and fault setting; each mode's samples are resampled on their own.

    The E0 runs of a setup (under the same protocol) are the baseline of every fault
    setting of its perturbed runs; R is left undefined, with a note, when the modes ran
    different task sets.
    """
    out = []
    for (agent, simulator), members in group(rows, setup_of).items():
        perturbed = group([r for r in members if r.env_mode != BASELINE_MODE], fault_setting)
        for setting, runs in (perturbed or {"": []}).items():
            protocols = {r.protocol for r in runs}
            baseline = [
                r
                for r in members
                if r.env_mode == BASELINE_MODE and (not protocols or r.protocol in protocols)
            ]
            chosen = baseline + runs
            outcomes = {
                mode: [bool(r.passed) for r in ms]
                for mode, ms in group(_scored(chosen), lambda r: r.env_mode.value).items()
            }
            mode_rates = {m: sum(o) / len(o) for m, o in outcomes.items()}
            note = robustness_note(mode_rates) or task_set_note(chosen)
            interval = robustness_interval(outcomes, n_resamples=n_resamples, seed=seed)
            out.append(
                Robustness(
                    agent=agent,
                    simulator=simulator,
                    setting=setting,
                    rates=mode_rates,
                    r=math.nan if note else interval.estimate,
                    low=math.nan if note else interval.low,
                    high=math.nan if note else interval.high,
                    r_note=note,
                )
            )
    return out


def setup_robustness(robustness: Sequence[Robustness]) -> dict[tuple[str, str], Robustness]:
    """One R per setup for summaries: its only fault setting's, or undefined with a note.

    A setup run at several fault settings has one R per setting (the robustness table);
    a single number for it would pool them, so its summary R is undefined.
    """
    by_setup: dict[tuple[str, str], list[Robustness]] = {}
    for rob in robustness:
        by_setup.setdefault((rob.agent, rob.simulator), []).append(rob)
    out = {}
    for setup, found in by_setup.items():
        if len(found) == 1:
            out[setup] = found[0]
            continue
        settings = ", ".join(r.setting for r in found)
        out[setup] = found[0].model_copy(
            update={
                "setting": "several",
                "rates": {},
                "r": math.nan,
                "low": math.nan,
                "high": math.nan,
                "r_note": f"{len(found)} fault settings ({settings}): one R per setting",
            }
        )
    return out


class Comparison(MetricRow):
    """Two setups on the same items: exact McNemar test and a paired bootstrap difference."""

    a: str = Field(description="Agent model A.")
    b: str = Field(description="Agent model B.")
    simulator: str = Field(description="Simulator both ran in.")
    env_mode: str = Field(description="E0..E3.")
    n: int = Field(description="Items scored for both.")
    a_only: int = Field(description="Items only A passed.")
    b_only: int = Field(description="Items only B passed.")
    difference: float = Field(description="CR_A - CR_B on the shared items.")
    low: float = Field(description="Paired bootstrap 95% interval of the difference, low end.")
    high: float = Field(description="Paired bootstrap 95% interval of the difference, high end.")
    p_value: float = Field(description="Exact McNemar p-value (two-sided).")
    verdict: str = Field(
        description="'<agent> better' or 'not distinguishable' (5%, not corrected for the "
        "number of pairs)."
    )


def compare_models(
    rows: Sequence[SampleRow],
    n_resamples: int = DEFAULT_BOOTSTRAP_RESAMPLES,
    seed: int = DEFAULT_BOOTSTRAP_SEED,
) -> list[Comparison]:
    """Every pair of agents in the same simulator and env mode, on their shared items."""
    out = []
    for (simulator, mode), members in group(
        _scored(rows), lambda r: (r.simulator_model or "", r.env_mode)
    ).items():
        by_agent = {
            agent: {_item(r): bool(r.passed) for r in ms}
            for agent, ms in group(members, agent_name).items()
        }
        for a, b in combinations(by_agent, 2):
            shared = sorted(by_agent[a].keys() & by_agent[b].keys())
            if not shared:
                continue
            va = [by_agent[a][i] for i in shared]
            vb = [by_agent[b][i] for i in shared]
            test = mcnemar_test(va, vb)
            diff = difference_interval(va, vb, paired=True, n_resamples=n_resamples, seed=seed)
            out.append(
                Comparison(
                    a=a,
                    b=b,
                    simulator=simulator,
                    env_mode=mode,
                    n=test.n,
                    a_only=test.a_only,
                    b_only=test.b_only,
                    difference=test.difference,
                    low=diff.low,
                    high=diff.high,
                    p_value=test.p_value,
                    verdict={"A better": f"{a} better", "B better": f"{b} better"}.get(
                        test.verdict, test.verdict
                    ),
                )
            )
    return out


class SimulatorAgreement(MetricRow):
    """How far two simulators order the same agent models alike (by CR in one mode)."""

    simulator_a: str
    simulator_b: str
    env_mode: str
    n_models: int = Field(description="Agents scored under both simulators.")
    n_pairs: int = Field(description="Pairs of those agents.")
    agreeing_pairs: int = Field(description="Pairs both simulators order the same way.")
    share: float = Field(description="agreeing_pairs / n_pairs.")
    tau: float = Field(description="Kendall tau-b of the two CR lists.")
    flipped: list[tuple[str, str]] = Field(description="Pairs (x, y): A ranks x above y, B not.")


def simulator_agreement(rows: Sequence[SampleRow]) -> list[SimulatorAgreement]:
    """Pairwise ranking agreement between every two simulators, per env mode."""
    out = []
    for mode, members in group(rows, lambda r: r.env_mode).items():
        scores = {
            simulator: {
                agent: rate_row(agent, ms).rate for agent, ms in group(sim_rows, agent_name).items()
            }
            for simulator, sim_rows in group(members, lambda r: r.simulator_model or "").items()
        }
        for sa, sb in combinations(scores, 2):
            agreement = pairwise_agreement(scores[sa], scores[sb])
            out.append(
                SimulatorAgreement(
                    simulator_a=sa,
                    simulator_b=sb,
                    env_mode=mode,
                    n_models=agreement.n_models,
                    n_pairs=agreement.n_pairs,
                    agreeing_pairs=agreement.agreeing_pairs,
                    share=agreement.share,
                    tau=agreement.tau,
                    flipped=agreement.flipped,
                )
            )
    return out


class PassK(MetricRow):
    """pass^k (all k trials pass) and pass@k (at least one passes), mean over tasks."""

    agent: str
    simulator: str
    env_mode: str
    k: int
    tasks: int = Field(description="Tasks averaged over.")
    pass_hat_k: float = Field(description="Mean unbiased pass^k.")
    pass_at_k: float = Field(description="Mean unbiased pass@k.")


def pass_k(rows: Sequence[SampleRow]) -> list[PassK]:
    """pass^k and pass@k for k = 1 .. the fewest scored epochs of a task (only if >= 2)."""
    out = []
    for (agent, simulator, mode), members in group(
        _scored(rows), lambda r: (*setup_of(r), r.env_mode)
    ).items():
        trials = [
            (len(ms), sum(bool(r.passed) for r in ms)) for ms in group(members, _task).values()
        ]
        most = min(n for n, _ in trials)
        for k in range(1, most + 1) if most >= 2 else ():
            out.append(
                PassK(
                    agent=agent,
                    simulator=simulator,
                    env_mode=mode,
                    k=k,
                    tasks=len(trials),
                    pass_hat_k=sum(pass_hat_k(n, c, k) for n, c in trials) / len(trials),
                    pass_at_k=sum(pass_at_k(n, c, k) for n, c in trials) / len(trials),
                )
            )
    return out


class CostRow(MetricRow):
    """Tokens and cost of one setup over all its samples (errored ones cost too)."""

    agent: str
    simulator: str
    samples: int = Field(description="Samples, errored ones included.")
    solved: int = Field(description="Samples that passed.")
    tokens_per_task: float | None = Field(
        description="Mean tokens of all roles per sample (None: not recorded, a release run)."
    )
    agent_tokens_per_task: float | None = Field(
        description="Mean tokens of the agent per sample (None: not recorded)."
    )
    tokens_per_solved: float | None = Field(
        description="All tokens / solved samples (nan if none; None: not recorded)."
    )
    cost: float | None = Field(description="Dollars; None without prices or with unpriced models.")
    cost_per_task: float | None = Field(description="cost / samples.")
    cost_per_solved: float | None = Field(description="cost / solved samples.")
    unpriced_models: list[str] = Field(description="Models that used tokens and have no price.")


def costs(rows: Sequence[SampleRow], prices: PriceTable | None = None) -> list[CostRow]:
    """Tokens (and cost, when ``prices`` are given) per task and per solved task, per setup."""
    out = []
    for (agent, simulator), members in group(rows, setup_of).items():
        total = sum(sum(r.tokens.values()) for r in members)
        solved = sum(r.passed is True for r in members)
        counted = all(r.harness is Harness.OCCUBENCH for r in members)  # release: no tokens
        summary = cost_summary(agent, members, prices) if prices is not None else None
        out.append(
            CostRow(
                agent=agent,
                simulator=simulator,
                samples=len(members),
                solved=solved,
                tokens_per_task=total / len(members) if counted else None,
                agent_tokens_per_task=sum(r.tokens.get(Role.AGENT.value, 0) for r in members)
                / len(members)
                if counted
                else None,
                tokens_per_solved=(total / solved if solved else math.nan) if counted else None,
                cost=summary.total if summary else None,
                cost_per_task=summary.per_task if summary else None,
                cost_per_solved=summary.per_solved_task if summary else None,
                unpriced_models=summary.unpriced_models if summary else [],
            )
        )
    return out


def priced(rows: Sequence[SampleRow], prices: PriceTable) -> list[SampleRow]:
    """Copy ``rows`` with their ``cost`` filled from ``prices``."""
    return [r.model_copy(update={"cost": row_cost(r, prices)}) for r in rows]


class FaultRecovery(MetricRow):
    """What the agent did after injected faults, in one setup and env mode."""

    agent: str
    simulator: str
    env_mode: str
    kind: str = Field(description="Fault kind, or 'all'.")
    faults: int = Field(description="Applied faults (they changed what the agent saw).")
    retried: int = Field(description="Faults after which the agent called the same tool again.")
    retry_rate: float = Field(description="retried / faults.")
    retry_low: float = Field(description="Wilson 95% interval of retry_rate, low end.")
    retry_high: float = Field(description="Wilson 95% interval of retry_rate, high end.")
    samples_hit: int = Field(description="Scored samples with at least one such fault.")
    hit_passed: int = Field(description="Of those, samples that passed anyway.")
    hit_rate: float = Field(description="hit_passed / samples_hit: CR despite the faults.")
    hit_low: float = Field(description="Wilson 95% interval of hit_rate, low end.")
    hit_high: float = Field(description="Wilson 95% interval of hit_rate, high end.")


def _applied(row: SampleRow, kind: str) -> list[InjectedFault]:
    return [f for f in row.faults if f.applied and kind in (ALL, f.kind)]


def fault_recovery(rows: Sequence[SampleRow]) -> list[FaultRecovery]:
    """Retry rate after faults and CR of hit samples, per setup, mode and fault kind."""
    out = []
    for (agent, simulator, mode), members in group(
        _scored(rows), lambda r: (*setup_of(r), r.env_mode)
    ).items():
        kinds = sorted({f.kind for r in members for f in _applied(r, ALL)})
        for kind in [ALL, *kinds] if kinds else ():
            faults = [f for r in members for f in _applied(r, kind)]
            hit = [r for r in members if _applied(r, kind)]
            retried = sum(f.retried_later for f in faults)
            passed = sum(bool(r.passed) for r in hit)
            retry, cr = wilson_interval(retried, len(faults)), wilson_interval(passed, len(hit))
            out.append(
                FaultRecovery(
                    agent=agent,
                    simulator=simulator,
                    env_mode=mode,
                    kind=kind,
                    faults=len(faults),
                    retried=retried,
                    retry_rate=retry.estimate,
                    retry_low=retry.low,
                    retry_high=retry.high,
                    samples_hit=len(hit),
                    hit_passed=passed,
                    hit_rate=cr.estimate,
                    hit_low=cr.low,
                    hit_high=cr.high,
                )
            )
    return out


class LeaderboardRow(MetricRow):
    """One setup's line of the leaderboard (ranked by CR in the headline mode, then R)."""

    rank: int
    agent: str
    simulator: str
    env_mode: str = Field(description="The headline mode the rate is for.")
    scored: int
    passed: int
    errors: int
    agent_errors: int = Field(
        default=0,
        exclude_if=lambda n: n == 0,
        description="Scored samples graded after an agent API error (written when some).",
    )
    rate: float
    low: float
    high: float
    mode_rates: dict[str, float] = Field(description="CR per env mode.")
    r: float = Field(description="Robustness ratio R.")
    r_low: float
    r_high: float
    r_note: str = Field(default="", description="Why R is undefined (empty when it is defined).")
    perturbed_rate: float = Field(
        default=math.nan, description="Mean CR over the perturbed modes present (E1-E3)."
    )
    cost_per_task: float | None = Field(default=None, description="Dollars per sample.")
    not_distinguishable_from: list[int] = Field(
        default_factory=list,
        description="Ranks whose CR differs from this one by less than the pair's minimum "
        "detectable difference (report --variance).",
    )


def perturbed_mean(rates_by_mode: dict[str, float]) -> float:
    """Mean CR over the perturbed modes present (nan when there is none)."""
    values = [rates_by_mode[m] for m in PERTURBED_MODES if m in rates_by_mode]
    return sum(values) / len(values) if values else math.nan


def _descending(value: float) -> float:
    """Sort key putting larger values first and undefined ones last."""
    return math.inf if math.isnan(value) else -value


def leaderboard(
    overall: Sequence[GroupRate],
    robustness: Sequence[Robustness],
    cost_rows: Sequence[CostRow] = (),
    mode: str = BASELINE_MODE,
) -> list[LeaderboardRow]:
    """Setups ranked by CR in ``mode``, best first; setups without a rate last.

    Ties on CR are broken by R, then by the mean CR over the perturbed modes (two
    agents with R = 0 differ in how much they still complete under faults), then by name.
    """
    r_of = setup_robustness(robustness)
    cost_of = {(c.agent, c.simulator): c.cost_per_task for c in cost_rows}

    def order(g: GroupRate) -> tuple[float, float, float, str, str]:
        rob = r_of.get((g.agent, g.simulator))
        r = rob.r if rob else math.nan
        under_faults = perturbed_mean(rob.rates) if rob else math.nan
        return _descending(g.rate), _descending(r), _descending(under_faults), g.agent, g.simulator

    chosen = [g for g in overall if g.env_mode == mode and g.dimension == "overall"]
    lines = sorted(chosen, key=order)
    out = []
    for rank, g in enumerate(lines, start=1):
        rob = r_of.get((g.agent, g.simulator))
        out.append(
            LeaderboardRow(
                rank=rank,
                agent=g.agent,
                simulator=g.simulator,
                env_mode=mode,
                scored=g.scored,
                passed=g.passed,
                errors=g.errors,
                agent_errors=g.agent_errors,
                rate=g.rate,
                low=g.low,
                high=g.high,
                mode_rates=rob.rates if rob else {},
                r=rob.r if rob else math.nan,
                r_low=rob.low if rob else math.nan,
                r_high=rob.high if rob else math.nan,
                r_note=rob.r_note if rob else "no scored sample",
                perturbed_rate=perturbed_mean(rob.rates) if rob else math.nan,
                cost_per_task=cost_of.get((g.agent, g.simulator)),
            )
        )
    return out
