"""Noise floor: where the variance of a task's outcome comes from, and what it hides.

Model. The samples of one agent in one env mode (and fault setting) form a nested design:
tasks; within a task, environment replicates (the simulator model, its seed and the fault
plan's seed: ``simulator``); within a replicate, epochs (the agent's sampling: ``agent``);
within an epoch, the k verifier votes (``verifier``). A sample's outcome is modelled as nested
random effects, y = mu + task + simulator + agent + verifier, each effect with mean zero, its
own variance and independent of the others. On the outcome scale these variances are the
variances of the conditional means: ``task`` = Var(E[y | task]), ``simulator`` = the mean
over tasks of Var(E[y | task, replicate]), and so on.

Outcomes. With votes, the unit is one judged outcome: a vote counts as passing when it says
"correct" and the task's deterministic checks (if any) passed, so ``verifier`` is the variance
of one verifier call's verdict on a fixed trajectory. Without votes (checks only) the unit is
the verdict and ``verifier`` is not measured. The completion rate averages verdicts (the
majority of k votes), so the minimum detectable difference is computed from the same model
fitted to the verdicts (levels task, simulator, agent; the verifier's noise is then part of
``agent``, as each epoch gets its own verifier round).

Estimation. Method-of-moments (ANOVA) estimators from means of means, exact for unbalanced
designs: at each level, the sample variance of the child means within a parent has
expectation sigma2_level + sum over lower levels of sigma2_lower x H, where H is the
variance coefficient of a child mean (1/n for the level just below, averaged down the
tree), so each component is the df-weighted mean of those sample variances minus the lower
components' share, from the bottom up. A level with at most one child per parent is not
identified (reported as None; its variance stays in the level above). Estimates below zero
are reported as 0. Intervals are percentile intervals of a bootstrap that resamples tasks
(the independent units) with replacement, ``DEFAULT_VARIANCE_RESAMPLES`` times.

Minimum detectable difference. The CR of a design of T tasks, S replicates per task and E
epochs per replicate has variance V = task / T + simulator / (T S) + agent / (T S E) (tasks
drawn from the population the run's tasks stand for). Two agents with variances V_A and V_B
differ detectably at power 1 - beta in a two-sided test at level alpha when the difference
is at least (z_{1-alpha/2} + z_{1-beta}) sqrt(V_A + V_B). For a Bernoulli outcome without
structure (one epoch, one replicate) this is the two-proportion formula
(z_{1-alpha/2} + z_{1-beta}) sqrt(2 p (1 - p) / n). The run's own variance uses its actual
design (the H coefficients of the mean of means).

Paired differences. Two agents run on the same tasks and epochs are compared sample by
sample: d = A - B per task and epoch (the mean verdict of each agent's samples of that task
and epoch, over its simulator replicates). The differences follow the same model with two
levels, d = delta + task + within: ``task`` is the between-task variance of the mean
difference (agents whose strengths differ by task), ``within`` the epoch-to-epoch variance
of a task's difference (the simulator's sampling, the agents' and the verifier's noise).
What both agents met alike cancels in d: with one shared world (``--world-variant epoch``)
both see the same simulator sample in an epoch, and the simulator's part of ``within``
shrinks to what their diverging paths still draw apart. The mean difference (the mean of
task means) has variance V_d = task / T + within x mean(1 / E_t) / T, and its MDD is
(z_{1-alpha/2} + z_{1-beta}) sqrt(V_d).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, TypeAlias

import numpy as np
from pydantic import Field

from occubench.analysis._metrics import LeaderboardRow, MetricRow, group
from occubench.defaults import (
    DEFAULT_BOOTSTRAP_SEED,
    DEFAULT_MDD_ALPHA,
    DEFAULT_MDD_POWER,
    DEFAULT_VARIANCE_RESAMPLES,
)
from occubench.errors import UsageError
from occubench.results import SampleRow

LEVELS = ("task", "simulator", "agent", "verifier")
"""The variance components, outermost first."""

PAIR_LEVELS = ("task", "within")
"""The variance components of a paired difference, outermost first."""

_NAN = float("nan")

Tree: TypeAlias = list[Any]
"""A nested design: a list of children (lists), down to leaf outcomes (floats)."""


@dataclass(frozen=True)
class _TaskSums:
    """Per-task pieces of every estimator, so that resampling tasks is a weighted sum."""

    mean: np.ndarray  # (T,) mean of means of each task
    h: np.ndarray  # (T, L) variance coefficient of each task mean for levels 2..L (col 0 unused)
    a: np.ndarray  # (T, L) df-weighted sample variances of child means, for levels 2..L
    b: np.ndarray  # (T, L) degrees of freedom, for levels 2..L
    c: np.ndarray  # (T, L, L) df-weighted mean child coefficients: c[t, j, k] for k > j


def _summarise(
    node: Tree | float, level: int, depth: int, out: dict[str, np.ndarray]
) -> tuple[float, np.ndarray]:
    """Mean and H coefficients (indexed by level) of a node; accumulate a, b, c in ``out``."""
    if level == depth:
        return float(node), np.zeros(depth + 1)  # type: ignore[arg-type]
    children = [_summarise(child, level + 1, depth, out) for child in node]  # type: ignore[union-attr]
    n = len(children)
    means = np.array([m for m, _ in children])
    hs = np.array([h for _, h in children])
    h = hs.sum(axis=0) / n**2
    h[level + 1] += 1.0 / n
    if n >= 2:
        j = level + 1
        out["a"][j] += (n - 1) * means.var(ddof=1)
        out["b"][j] += n - 1
        out["c"][j] += (n - 1) * hs.mean(axis=0)
    return float(means.mean()), h


def _task_sums(tasks: Sequence[Tree], depth: int) -> _TaskSums:
    size = depth + 1
    means, hs, a, b, c = [], [], [], [], []
    for task in tasks:
        out = {"a": np.zeros(size), "b": np.zeros(size), "c": np.zeros((size, size))}
        mean, h = _summarise(task, 1, depth, out)
        means.append(mean)
        hs.append(h)
        a.append(out["a"])
        b.append(out["b"])
        c.append(out["c"])
    return _TaskSums(np.array(means), np.array(hs), np.array(a), np.array(b), np.array(c))


def _estimate(sums: _TaskSums, weights: np.ndarray, depth: int) -> np.ndarray:
    """Raw components (levels 1..depth at indexes 1..depth; nan: not identified) per resample.

    ``weights`` is (B, T): how often each task is drawn in each resample.
    """
    count = weights.shape[0]
    sigma = np.full((count, depth + 1), _NAN)
    for j in range(depth, 1, -1):
        den = weights @ sums.b[:, j]
        num = weights @ sums.a[:, j]
        for k in range(j + 1, depth + 1):
            num = num - np.nan_to_num(sigma[:, k]) * (weights @ sums.c[:, j, k])
        with np.errstate(invalid="ignore", divide="ignore"):
            sigma[:, j] = np.where(den > 0, num / np.where(den > 0, den, 1), _NAN)
    total = weights.sum(axis=1)
    mean = (weights @ sums.mean) / total
    spread = (weights * (sums.mean[None, :] - mean[:, None]) ** 2).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        v = np.where(total > 1, spread / np.maximum(total - 1, 1), _NAN)
    below = sum(
        np.nan_to_num(sigma[:, k]) * ((weights @ sums.h[:, k]) / total) for k in range(2, depth + 1)
    )
    sigma[:, 1] = v - below
    return sigma


class Component(MetricRow):
    """One variance component with its bootstrap interval."""

    level: str = Field(description="task, simulator, agent or verifier.")
    variance: float | None = Field(description="Estimate (>= 0); None when not identified.")
    low: float = Field(description="Bootstrap 95% interval, low end (nan if not identified).")
    high: float = Field(description="Bootstrap 95% interval, high end.")
    share: float = Field(description="Share of the identified components' sum (nan if 0).")


class Design(MetricRow):
    """The size of one group's design."""

    tasks: int = Field(description="Tasks with at least one scored sample.")
    simulators: int = Field(description="Most environment replicates of a task.")
    epochs: int = Field(description="Most epochs of a replicate.")
    votes: int | None = Field(description="Judge votes per sample (None: checks only).")
    samples: int = Field(description="Scored samples.")


class VarianceRow(MetricRow):
    """The variance components of one agent in one env mode, and its noise floor."""

    agent: str = Field(description="Agent model.")
    env_mode: str = Field(description="E0..E3.")
    faults: str = Field(description="Fault setting (count, duration, engine) of E1-E3.")
    design: Design
    outcome: str = Field(description="'judged outcome' (one vote) or 'verdict' (checks only).")
    components: list[Component] = Field(description="task, simulator, agent, judge.")
    verdict_components: list[Component] = Field(
        description="The model fitted to the verdicts (task, simulator, agent): the MDD's."
    )
    rate: float = Field(description="CR of the group (mean verdict).")
    cr_variance: float = Field(description="Variance of the CR estimate of this design.")
    mdd: float = Field(description="MDD against an agent of the same variance (rate scale).")
    mdd_low: float = Field(description="Bootstrap 95% interval of the MDD, low end.")
    mdd_high: float = Field(description="Bootstrap 95% interval of the MDD, high end.")


class PairRow(MetricRow):
    """The paired difference of two agents on the same tasks and epochs (module doc)."""

    agent_a: str = Field(description="First agent (the difference is A - B).")
    agent_b: str = Field(description="Second agent.")
    env_mode: str = Field(description="E0..E3.")
    faults: str = Field(description="Fault setting (count, duration, engine) of E1-E3.")
    tasks: int = Field(description="Tasks both agents have a scored sample of.")
    epochs: int = Field(description="Most epochs of a task that both agents ran.")
    pairs: int = Field(description="(task, epoch) pairs: the differences.")
    difference: float = Field(description="Mean of task means of A - B (rate scale).")
    components: list[Component] = Field(description="task, within (the difference's).")
    variance: float = Field(description="Variance of the mean difference of this design.")
    mdd: float = Field(description="MDD of the paired difference (rate scale).")
    mdd_low: float = Field(description="Bootstrap 95% interval of the MDD, low end.")
    mdd_high: float = Field(description="Bootstrap 95% interval of the MDD, high end.")
    unpaired_mdd: float | None = Field(
        default=None,
        description="The MDD of the two agents' CRs taken apart (their rows' variances): "
        "what pairing gains.",
    )


class VarianceReport(MetricRow):
    """Variance components and minimum detectable differences of a set of runs."""

    power: float = Field(description="Power of the MDD (1 - beta).")
    alpha: float = Field(description="Two-sided level of the MDD's test.")
    resamples: int = Field(description="Task bootstrap resamples behind every interval.")
    rows: list[VarianceRow]
    pairs: list[PairRow] = Field(
        default_factory=list,
        description="Paired differences of two agents on the same tasks and epochs.",
    )


def mdd_factor(power: float = DEFAULT_MDD_POWER, alpha: float = DEFAULT_MDD_ALPHA) -> float:
    """z_{1-alpha/2} + z_{power}: the MDD is this times the standard error of a difference."""
    if not 0 < power < 1 or not 0 < alpha < 1:
        raise UsageError(f"power and alpha must be in (0, 1), got {power}, {alpha}")
    normal = NormalDist()
    return normal.inv_cdf(1 - alpha / 2) + normal.inv_cdf(power)


def cr_variance(
    task: float, simulator: float, agent: float, tasks: int, sims: int, epochs: int
) -> float:
    """Variance of the CR of a balanced design (module doc)."""
    if min(tasks, sims, epochs) < 1:
        raise ValueError("tasks, simulators and epochs must be at least 1")
    return task / tasks + simulator / (tasks * sims) + agent / (tasks * sims * epochs)


def mdd(
    variance_a: float,
    variance_b: float,
    power: float = DEFAULT_MDD_POWER,
    alpha: float = DEFAULT_MDD_ALPHA,
) -> float:
    """The minimum detectable difference of two CRs with these estimate variances."""
    return mdd_factor(power, alpha) * math.sqrt(max(variance_a, 0.0) + max(variance_b, 0.0))


def _key(row: SampleRow) -> tuple[str, str, str]:
    faults = (
        ""
        if row.env_mode == "E0"
        else (f"fc={row.fault_count} fd={row.fault_duration} {row.fault_engine}")
    )
    return row.agent_model, row.env_mode, faults


def _replicate(row: SampleRow) -> tuple[str, str, str]:
    return (row.simulator_model or "", str(row.simulator_seed), str(row.seed))


def _votes(row: SampleRow) -> list[float]:
    """One judged outcome per vote: the vote, failed when the checks failed."""
    assert row.votes_total is not None
    checks_ok = row.checks_total is None or row.checks_passed == row.checks_total
    yes = (row.votes_yes or 0) if checks_ok else 0
    return [1.0] * yes + [0.0] * (row.votes_total - yes)


def _trees(rows: Sequence[SampleRow], by_vote: bool) -> list[Tree]:
    tasks = []
    for members in group(rows, lambda r: str(r.task_id)).values():
        replicates = []
        for reps in group(members, _replicate).values():
            epochs = sorted(reps, key=lambda r: r.epoch)
            replicates.append([_votes(r) if by_vote else float(bool(r.passed)) for r in epochs])
        tasks.append(replicates)
    return tasks


def _components(
    trees: Sequence[Tree], levels: Sequence[str], weights: np.ndarray
) -> tuple[list[Component], np.ndarray, np.ndarray]:
    """Components (point and intervals), and the raw point and resampled estimates."""
    depth = len(levels)
    sums = _task_sums(trees, depth)
    point = _estimate(sums, np.ones((1, len(trees))), depth)[0]
    boot = _estimate(sums, weights, depth)
    shown = np.clip(point[1:], 0, None)
    total = float(np.nansum(shown))
    out = []
    for index, level in enumerate(levels, start=1):
        value = point[index]
        draws = np.clip(boot[:, index], 0, None)
        draws = draws[~np.isnan(draws)]
        identified = not math.isnan(value)
        low, high = np.quantile(draws, [0.025, 0.975]) if identified and draws.size else (_NAN,) * 2
        out.append(
            Component(
                level=level,
                variance=max(float(value), 0.0) if identified else None,
                low=float(low),
                high=float(high),
                share=max(float(value), 0.0) / total if identified and total > 0 else _NAN,
            )
        )
    return out, point, boot


def _design_coefficients(trees: Sequence[Tree]) -> np.ndarray:
    """Coefficients of the raw verdict components (1..3) in the variance of the run's CR.

    The CR's estimate is the mean of task means: Var = task / T + the mean over tasks of
    each lower component times its H coefficient, over T.
    """
    h = _task_sums(trees, 3).h.mean(axis=0) / len(trees)
    return np.array([0.0, 1.0 / len(trees), h[2], h[3]])


def _design_variance(components: np.ndarray, coefficients: np.ndarray) -> np.ndarray:
    """The CR variance for raw components (one row per resample, or one vector)."""
    variance: np.ndarray = np.nan_to_num(np.clip(components, 0, None)) @ coefficients
    return variance


def variance_report(
    rows: Sequence[SampleRow],
    *,
    power: float = DEFAULT_MDD_POWER,
    alpha: float = DEFAULT_MDD_ALPHA,
    n_resamples: int = DEFAULT_VARIANCE_RESAMPLES,
    seed: int = DEFAULT_BOOTSTRAP_SEED,
) -> VarianceReport:
    """Variance components and MDD per agent, env mode and fault setting (module doc)."""
    factor = mdd_factor(power, alpha)
    out = []
    scored = [r for r in rows if r.passed is not None]
    for (agent, mode, faults), members in group(scored, _key).items():
        verdicts = _trees(members, by_vote=False)
        rng = np.random.default_rng(seed)
        weights = rng.multinomial(len(verdicts), [1 / len(verdicts)] * len(verdicts), n_resamples)
        voted = all(r.votes_total for r in members)
        levels = LEVELS if voted else LEVELS[:3]
        shown, _, _ = _components(
            _trees(members, by_vote=True) if voted else verdicts, levels, weights
        )
        if not voted:
            shown.append(
                Component(level="verifier", variance=None, low=_NAN, high=_NAN, share=_NAN)
            )
        verdict_parts, point, boot = _components(verdicts, LEVELS[:3], weights)
        coefficients = _design_coefficients(verdicts)
        variance = float(_design_variance(point, coefficients))
        low, high = np.quantile(
            factor * np.sqrt(2 * _design_variance(boot, coefficients)), [0.025, 0.975]
        )
        out.append(
            VarianceRow(
                agent=agent,
                env_mode=mode,
                faults=faults,
                design=Design(
                    tasks=len(verdicts),
                    simulators=max(len(t) for t in verdicts),
                    epochs=max(len(rep) for t in verdicts for rep in t),
                    votes=max(r.votes_total or 0 for r in members) if voted else None,
                    samples=len(members),
                ),
                outcome="judged outcome" if voted else "verdict",
                components=shown,
                verdict_components=verdict_parts,
                rate=sum(bool(r.passed) for r in members) / len(members),
                cr_variance=variance,
                mdd=factor * math.sqrt(2 * variance),
                mdd_low=float(low),
                mdd_high=float(high),
            )
        )
    pairs = paired_rows(rows, out, power=power, alpha=alpha, n_resamples=n_resamples, seed=seed)
    return VarianceReport(power=power, alpha=alpha, resamples=n_resamples, rows=out, pairs=pairs)


def _epoch_means(rows: Sequence[SampleRow]) -> dict[str, dict[int, float]]:
    """Mean verdict per task and epoch (over simulator replicates)."""
    out: dict[str, dict[int, float]] = {}
    for (task, epoch), members in group(rows, lambda r: (str(r.task_id), r.epoch)).items():
        out.setdefault(task, {})[epoch] = sum(bool(r.passed) for r in members) / len(members)
    return out


def paired_difference(
    rows_a: Sequence[SampleRow],
    rows_b: Sequence[SampleRow],
    *,
    power: float = DEFAULT_MDD_POWER,
    alpha: float = DEFAULT_MDD_ALPHA,
    n_resamples: int = DEFAULT_VARIANCE_RESAMPLES,
    seed: int = DEFAULT_BOOTSTRAP_SEED,
) -> PairRow | None:
    """The paired difference of two agents' scored samples of one env mode (module doc).

    Only the (task, epoch) pairs both have count. None when they share none.
    """
    a, b = _epoch_means(rows_a), _epoch_means(rows_b)
    trees: list[Tree] = []
    for task in sorted(set(a) & set(b)):
        shared = sorted(set(a[task]) & set(b[task]))
        if shared:
            trees.append([a[task][e] - b[task][e] for e in shared])
    if not trees:
        return None
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(len(trees), [1 / len(trees)] * len(trees), n_resamples)
    parts, point, boot = _components(trees, PAIR_LEVELS, weights)
    coefficients = _task_sums(trees, 2).h.mean(axis=0) / len(trees)
    coefficients[1] = 1.0 / len(trees)
    variance = float(_design_variance(point, coefficients))
    factor = mdd_factor(power, alpha)
    low, high = np.quantile(factor * np.sqrt(_design_variance(boot, coefficients)), [0.025, 0.975])
    return PairRow(
        agent_a=rows_a[0].agent_model,
        agent_b=rows_b[0].agent_model,
        env_mode=rows_a[0].env_mode,
        faults=_key(rows_a[0])[2],
        tasks=len(trees),
        epochs=max(len(t) for t in trees),
        pairs=sum(len(t) for t in trees),
        difference=float(np.mean([np.mean(t) for t in trees])),
        components=parts,
        variance=variance,
        mdd=factor * math.sqrt(variance),
        mdd_low=float(low),
        mdd_high=float(high),
    )


def paired_rows(
    rows: Sequence[SampleRow],
    singles: Sequence[VarianceRow] = (),
    *,
    power: float = DEFAULT_MDD_POWER,
    alpha: float = DEFAULT_MDD_ALPHA,
    n_resamples: int = DEFAULT_VARIANCE_RESAMPLES,
    seed: int = DEFAULT_BOOTSTRAP_SEED,
) -> list[PairRow]:
    """Every pair of agents of one env mode and fault setting that share (task, epoch)s.

    Agents are paired in name order (A before B); ``singles`` (the per-agent rows) give
    each pair's unpaired MDD.
    """
    scored = [r for r in rows if r.passed is not None]
    by_key = group(scored, _key)
    apart = {(r.agent, r.env_mode, r.faults): r.cr_variance for r in singles}
    out = []
    for (agent_a, mode, faults), rows_a in sorted(by_key.items()):
        for (agent_b, mode_b, faults_b), rows_b in sorted(by_key.items()):
            if (mode_b, faults_b) != (mode, faults) or agent_b <= agent_a:
                continue
            pair = paired_difference(
                rows_a, rows_b, power=power, alpha=alpha, n_resamples=n_resamples, seed=seed
            )
            if pair is None:
                continue
            va, vb = apart.get((agent_a, mode, faults)), apart.get((agent_b, mode, faults))
            if va is not None and vb is not None:
                pair = pair.model_copy(update={"unpaired_mdd": mdd(va, vb, power, alpha)})
            out.append(pair)
    return out


class PlanRow(MetricRow):
    """One design that reaches a target MDD."""

    epochs: int = Field(description="Epochs per task and simulator replicate.")
    simulators: int = Field(description="Simulator replicates per task.")
    tasks: int = Field(description="Tasks needed.")
    samples: int = Field(description="tasks x simulators x epochs.")
    mdd: float = Field(description="The MDD this design gives (rate scale).")


def plan_designs(
    task: float,
    simulator: float,
    agent: float,
    target: float,
    *,
    simulators: int = 1,
    max_epochs: int = 10,
    power: float = DEFAULT_MDD_POWER,
    alpha: float = DEFAULT_MDD_ALPHA,
) -> list[PlanRow]:
    """For 1..max_epochs epochs, the fewest tasks that give an MDD of at most ``target``.

    Two agents each with these verdict-scale components (module doc); ``target`` is on the
    rate scale (0.03 for 3 points).
    """
    if target <= 0:
        raise ValueError(f"the target difference must be positive, got {target}")
    factor = mdd_factor(power, alpha)
    out = []
    for epochs in range(1, max_epochs + 1):
        per_task = cr_variance(task, simulator, agent, 1, simulators, epochs)
        tasks = max(1, math.ceil(2 * per_task * (factor / target) ** 2))
        design = cr_variance(task, simulator, agent, tasks, simulators, epochs)
        out.append(
            PlanRow(
                epochs=epochs,
                simulators=simulators,
                tasks=tasks,
                samples=tasks * simulators * epochs,
                mdd=mdd(design, design, power, alpha),
            )
        )
    return out


def verdict_parts(row: VarianceRow) -> tuple[float, float, float]:
    """A row's verdict-scale (task, simulator, agent) components, unidentified ones as 0."""
    values = {c.level: c.variance or 0.0 for c in row.verdict_components}
    return values["task"], values["simulator"], values["agent"]


def mark_indistinguishable(
    lines: Sequence[LeaderboardRow], variance: VarianceReport
) -> list[LeaderboardRow]:
    """The leaderboard with each line's ranks within the pair's MDD (module doc).

    A line's CR variance is its agent's in the line's mode (the fault setting with the most
    samples, when there are several); lines whose agent has no variance row get no mark.
    """
    rows: dict[tuple[str, str], VarianceRow] = {}
    for row in variance.rows:
        best = rows.get((row.agent, row.env_mode))
        if best is None or row.design.samples > best.design.samples:
            rows[(row.agent, row.env_mode)] = row
    out = []
    for line in lines:
        mine = rows.get((line.agent, line.env_mode))
        close = []
        for other in lines:
            theirs = rows.get((other.agent, other.env_mode))
            if other.rank == line.rank or mine is None or theirs is None:
                continue
            floor = mdd(mine.cr_variance, theirs.cr_variance, variance.power, variance.alpha)
            if abs(line.rate - other.rate) < floor:
                close.append(other.rank)
        out.append(line.model_copy(update={"not_distinguishable_from": close}))
    return out
