"""Statistics over per-sample pass/fail verdicts.

Confidence intervals for completion rates, the robustness ratio across
environment modes, paired model comparisons, ranking agreement and the
pass^k / pass@k estimators. Everything here is pure: no I/O, no global state.
Undefined quantities (no samples, zero baseline, too few items) are ``nan``.

SciPy is imported by the few functions that need it, and only ``scipy.special`` where
that is enough: the run summary only needs Wilson intervals (normal quantile from the
standard library), and importing ``scipy.stats`` costs about a second of CPU.

Intervals of completion rates, their differences and R are bootstraps of verdict
counts (``_count_bootstrap``): the same bootstrap as resampling the verdicts, drawn as
multinomial counts in time independent of the number of samples.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from statistics import NormalDist

import numpy as np
from numpy.typing import ArrayLike

from occubench.errors import UsageError

BASELINE_MODE = "E0"
PERTURBED_MODES = ("E1", "E2", "E3")

Outcomes = Sequence[bool | int]
_NAN = float("nan")


@dataclass(frozen=True)
class Interval:
    """A point estimate with a two-sided confidence interval (``nan`` when undefined)."""

    estimate: float
    low: float
    high: float


@dataclass(frozen=True)
class PairedTest:
    """Result of an exact McNemar test between two aligned verdict lists."""

    n: int
    a_only: int
    b_only: int
    p_value: float
    difference: float
    verdict: str


@dataclass(frozen=True)
class Agreement:
    """How far two scorings of the same models agree on their order.

    ``flipped`` holds pairs ``(x, y)`` that A ranks x above y while B ranks y above x.
    """

    n_models: int
    n_pairs: int
    agreeing_pairs: int
    share: float
    tau: float
    flipped: list[tuple[str, str]]


_NAN_INTERVAL = Interval(_NAN, _NAN, _NAN)


def _alpha(level: float) -> float:
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be strictly between 0 and 1, got {level}")
    return 1.0 - level


def _check_counts(successes: int, n: int) -> None:
    if n < 0 or successes < 0:
        raise ValueError(f"counts must be non-negative, got successes={successes}, n={n}")
    if successes > n:
        raise ValueError(f"successes ({successes}) cannot exceed n ({n})")


def _outcomes(values: Outcomes, name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a flat sequence of verdicts")
    if not np.isin(arr, (0.0, 1.0)).all():
        raise ValueError(f"{name} must contain only booleans or 0/1")
    return arr


def _rate(arr: np.ndarray) -> float:
    return float(arr.mean()) if arr.size else _NAN


def wilson_interval(successes: int, n: int, level: float = 0.95) -> Interval:
    """Wilson score interval for a binomial proportion.

    Args:
        successes: Number of passing samples.
        n: Number of samples.
        level: Confidence level in (0, 1).

    Returns:
        The observed rate with its Wilson bounds; all ``nan`` when ``n == 0``.

    """
    alpha = _alpha(level)
    _check_counts(successes, n)
    if n == 0:
        return _NAN_INTERVAL
    p = successes / n
    z = NormalDist().inv_cdf(1.0 - alpha / 2.0)
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2.0 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n)) / denom
    return Interval(p, max(0.0, centre - half), min(1.0, centre + half))


def clopper_pearson_interval(successes: int, n: int, level: float = 0.95) -> Interval:
    """Exact (Clopper-Pearson) interval for a binomial proportion, from beta quantiles.

    Takes the same arguments as `wilson_interval`; all ``nan`` when ``n == 0``.
    """
    from scipy.special import betaincinv  # the beta quantile, without scipy.stats' import

    alpha = _alpha(level)
    _check_counts(successes, n)
    if n == 0:
        return _NAN_INTERVAL
    failures = n - successes
    low = 0.0 if successes == 0 else betaincinv(successes, failures + 1, alpha / 2.0)
    high = 1.0 if failures == 0 else betaincinv(successes + 1, failures, 1.0 - alpha / 2.0)
    return Interval(successes / n, float(low), float(high))


def _bootstrap(
    statistic: Callable[[list[np.ndarray]], float],
    groups: list[np.ndarray],
    n_resamples: int,
    level: float,
    seed: int,
) -> Interval:
    """Percentile bootstrap that resamples each group independently along axis 0."""
    alpha = _alpha(level)
    _check_resamples(n_resamples)
    if any(len(g) == 0 for g in groups):
        return _NAN_INTERVAL
    estimate = float(statistic(groups))
    rng = np.random.default_rng(seed)
    draws = [[rng.integers(0, len(g), size=len(g)) for g in groups] for _ in range(n_resamples)]
    replicates = np.array(
        [statistic([g[i] for g, i in zip(groups, d, strict=True)]) for d in draws], dtype=float
    )
    return _percentiles(estimate, replicates, alpha)


def _check_resamples(n_resamples: int) -> None:
    if n_resamples < 1:
        raise UsageError(f"n_resamples must be positive, got {n_resamples}")


def _count_bootstrap(
    statistic: Callable[[list[np.ndarray]], np.ndarray],
    groups: list[tuple[int, list[int]]],
    n_resamples: int,
    level: float,
    seed: int,
) -> Interval:
    """Percentile bootstrap of a statistic of verdict counts, drawn without the verdicts.

    Resampling ``n`` verdicts with replacement and counting each kind (passed, failed;
    or for aligned pairs: only A passed, only B passed, the rest) gives multinomial
    counts with the observed shares as probabilities; drawing those counts directly is
    the same bootstrap in O(resamples) instead of O(resamples x n). Each group is
    ``(n, counts of its kinds but the last)``; ``statistic`` gets, per group, an array
    of shape ``(rows, kinds)`` of counts (the observed counts as one row for the
    estimate, the resampled ones as ``n_resamples`` rows) and returns one value per row.
    """
    alpha = _alpha(level)
    _check_resamples(n_resamples)
    if any(n == 0 for n, _ in groups):
        return _NAN_INTERVAL
    observed = [np.array([[*counts, n - sum(counts)]], dtype=float) for n, counts in groups]
    estimate = float(statistic(observed)[0])
    rng = np.random.default_rng(seed)
    drawn = [
        rng.multinomial(n, [*(c / n for c in counts), (n - sum(counts)) / n], size=n_resamples)
        for n, counts in groups
    ]
    replicates = np.asarray(statistic([d.astype(float) for d in drawn]), dtype=float)
    return _percentiles(estimate, replicates, alpha)


def _percentiles(estimate: float, replicates: np.ndarray, alpha: float) -> Interval:
    """The estimate with the percentile bounds of its bootstrap replicates (nan dropped)."""
    replicates = replicates[~np.isnan(replicates)]
    if replicates.size == 0:
        return Interval(estimate, _NAN, _NAN)
    low, high = np.quantile(replicates, [alpha / 2.0, 1.0 - alpha / 2.0])
    return Interval(estimate, float(low), float(high))


def bootstrap_interval(
    statistic: Callable[[np.ndarray], float],
    data: ArrayLike,
    n_resamples: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> Interval:
    """Seeded percentile bootstrap interval for any statistic of one sample.

    Rows (axis 0) of ``data`` are resampled with replacement. Resamples where the
    statistic is ``nan`` are dropped; if all are, the bounds are ``nan``.

    Args:
        statistic: Maps a resampled array to a number.
        data: The sample; a 2-D array is resampled row-wise.
        n_resamples: Number of bootstrap resamples.
        level: Confidence level in (0, 1).
        seed: Seed for ``numpy.random.default_rng``.

    Returns:
        ``statistic(data)`` with percentile bounds; all ``nan`` for empty data.

    """
    arr = np.asarray(data)
    if arr.ndim == 0:
        raise ValueError("data must be at least one-dimensional")
    return _bootstrap(lambda gs: statistic(gs[0]), [arr], n_resamples, level, seed)


def robustness(cr_by_mode: Mapping[str, float]) -> float:
    """Robustness ratio R = min(CR over E1..E3) / CR_E0.

    Only perturbed modes present (and not ``nan``) enter the minimum. Returns ``nan``
    when E0 is missing, ``nan`` or zero, or when no perturbed mode is available.
    """
    baseline = cr_by_mode.get(BASELINE_MODE, _NAN)
    perturbed = [
        cr_by_mode[m] for m in PERTURBED_MODES if m in cr_by_mode and not math.isnan(cr_by_mode[m])
    ]
    if not perturbed or math.isnan(baseline) or baseline == 0:
        return _NAN
    return min(perturbed) / baseline


def robustness_interval(
    outcomes_by_mode: Mapping[str, Outcomes],
    n_resamples: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> Interval:
    """Robustness ratio with a stratified bootstrap interval.

    ``outcomes_by_mode`` maps "E0".."E3" to verdict lists; other keys and empty lists
    are ignored. Each mode is resampled independently; the remaining arguments are
    as in `bootstrap_interval`. The estimate is R of the observed rates.
    """
    modes = [m for m in (BASELINE_MODE, *PERTURBED_MODES) if len(outcomes_by_mode.get(m, ())) > 0]
    groups = [_outcomes(outcomes_by_mode[m], f"outcomes for {m}") for m in modes]
    if BASELINE_MODE not in modes or len(modes) < 2:
        _check_resamples(n_resamples)
        return _NAN_INTERVAL

    def ratios(counts: list[np.ndarray]) -> np.ndarray:
        rates = {m: c[:, 0] / c.sum(axis=1) for m, c in zip(modes, counts, strict=True)}
        base = rates[BASELINE_MODE]
        perturbed = np.minimum.reduce([rates[m] for m in PERTURBED_MODES if m in rates])
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(base == 0, _NAN, perturbed / base)

    counted = [(g.size, [int(g.sum())]) for g in groups]
    return _count_bootstrap(ratios, counted, n_resamples, level, seed)


def difference_interval(
    a: Outcomes,
    b: Outcomes,
    paired: bool = True,
    n_resamples: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> Interval:
    """Bootstrap interval for the completion-rate difference CR(a) - CR(b).

    Args:
        a: Verdicts of the first system.
        b: Verdicts of the second system.
        paired: If true, ``a`` and ``b`` are aligned by task and tasks are resampled
            jointly; otherwise each list is resampled on its own.
        n_resamples: Number of bootstrap resamples.
        level: Confidence level in (0, 1).
        seed: Seed for ``numpy.random.default_rng``.

    Returns:
        The observed difference with percentile bounds; all ``nan`` if a list is empty.

    """
    arr_a, arr_b = _outcomes(a, "a"), _outcomes(b, "b")
    if not paired:

        def differences(counts: list[np.ndarray]) -> np.ndarray:
            first, second = (c[:, 0] / c.sum(axis=1) for c in counts)
            return np.asarray(first - second)

        counted = [(arr.size, [int(arr.sum())]) for arr in (arr_a, arr_b)]
        return _count_bootstrap(differences, counted, n_resamples, level, seed)
    if arr_a.size != arr_b.size:
        raise ValueError(f"paired lists must align: len(a)={arr_a.size}, len(b)={arr_b.size}")

    def paired_differences(counts: list[np.ndarray]) -> np.ndarray:
        (c,) = counts  # per row: only A passed, only B passed, the rest
        return np.asarray((c[:, 0] - c[:, 1]) / c.sum(axis=1))

    a_only = int(((arr_a == 1) & (arr_b == 0)).sum())
    b_only = int(((arr_a == 0) & (arr_b == 1)).sum())
    return _count_bootstrap(
        paired_differences, [(arr_a.size, [a_only, b_only])], n_resamples, level, seed
    )


def mcnemar_test(a: Outcomes, b: Outcomes, alpha: float = 0.05) -> PairedTest:
    """Exact McNemar test: two-sided binomial test on the discordant pairs.

    Args:
        a: Verdicts of system A, aligned by task with ``b``.
        b: Verdicts of system B.
        alpha: Significance level for the verdict.

    Returns:
        Discordant counts, p-value (1.0 with no discordant pairs), CR_a - CR_b and
        a verdict: "A better", "B better" or "not distinguishable".

    """
    from scipy.special import bdtr  # the binomial CDF, without scipy.stats' import

    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be strictly between 0 and 1, got {alpha}")
    arr_a, arr_b = _outcomes(a, "a"), _outcomes(b, "b")
    if arr_a.size != arr_b.size:
        raise ValueError(f"paired lists must align: len(a)={arr_a.size}, len(b)={arr_b.size}")
    a_only = int(((arr_a == 1) & (arr_b == 0)).sum())
    b_only = int(((arr_a == 0) & (arr_b == 1)).sum())
    discordant = a_only + b_only
    # two-sided exact binomial test at 1/2: twice the smaller tail, at most 1
    smaller = min(a_only, b_only)
    p_value = 1.0 if discordant == 0 else min(1.0, 2.0 * float(bdtr(smaller, discordant, 0.5)))
    if p_value >= alpha:
        verdict = "not distinguishable"
    else:
        verdict = "A better" if a_only > b_only else "B better"
    difference = _rate(arr_a) - _rate(arr_b)
    return PairedTest(arr_a.size, a_only, b_only, p_value, difference, verdict)


def kendall_tau(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's tau-b between two aligned score lists.

    Returns ``nan`` with fewer than two items or when either list is constant.
    """
    from scipy import stats

    if len(x) != len(y):
        raise ValueError(f"x and y must align: len(x)={len(x)}, len(y)={len(y)}")
    if len(x) < 2 or len(set(x)) < 2 or len(set(y)) < 2:
        return _NAN
    return float(stats.kendalltau(x, y).statistic)


def pairwise_agreement(scores_a: Mapping[str, float], scores_b: Mapping[str, float]) -> Agreement:
    """Compare the pairwise order of models under two scorings.

    Only models with a non-``nan`` score in both mappings count. A pair agrees when
    both scorings order it the same way, or both tie it; a pair tied in just one
    scoring disagrees without being flipped.
    """
    common = sorted(
        m
        for m in scores_a.keys() & scores_b.keys()
        if not (math.isnan(scores_a[m]) or math.isnan(scores_b[m]))
    )
    agreeing = 0
    flipped: list[tuple[str, str]] = []
    for x, y in combinations(common, 2):
        sign_a = np.sign(scores_a[x] - scores_a[y])
        sign_b = np.sign(scores_b[x] - scores_b[y])
        if sign_a == sign_b:
            agreeing += 1
        elif sign_a * sign_b < 0:
            flipped.append((x, y) if sign_a > 0 else (y, x))
    n_pairs = len(common) * (len(common) - 1) // 2
    return Agreement(
        n_models=len(common),
        n_pairs=n_pairs,
        agreeing_pairs=agreeing,
        share=agreeing / n_pairs if n_pairs else _NAN,
        tau=kendall_tau([scores_a[m] for m in common], [scores_b[m] for m in common]),
        flipped=flipped,
    )


def _check_k(n: int, c: int, k: int) -> None:
    _check_counts(c, n)
    if not 1 <= k <= n:
        raise ValueError(f"k must satisfy 1 <= k <= n, got k={k}, n={n}")


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k = C(c, k) / C(n, k) from n trials with c passes (1 <= k <= n).

    The chance that k trials drawn without replacement all pass.
    """
    _check_k(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k = 1 - C(n - c, k) / C(n, k) from n trials with c passes (1 <= k <= n).

    The chance that at least one of k trials drawn without replacement passes.
    """
    _check_k(n, c, k)
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def cohen_kappa(
    a: Sequence[str],
    b: Sequence[str],
    n_resamples: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> Interval:
    """Cohen's kappa between two raters' labels of the same items, with a bootstrap interval.

    kappa = (p_o - p_e) / (1 - p_e): observed agreement p_o, chance agreement p_e from
    each rater's own label shares. Items are resampled jointly (the pairs stay
    aligned). Undefined (``nan``) without items or when chance agreement is 1 (both
    raters gave one and the same label to everything).
    """
    if len(a) != len(b):
        raise ValueError(f"ratings must align: len(a)={len(a)}, len(b)={len(b)}")
    labels = sorted(set(a) | set(b))
    codes = {label: i for i, label in enumerate(labels)}
    pairs = np.array([[codes[x], codes[y]] for x, y in zip(a, b, strict=True)], dtype=int)
    if pairs.size == 0:
        return _NAN_INTERVAL

    def kappa(rows: np.ndarray) -> float:
        n = len(rows)
        observed = float(np.mean(rows[:, 0] == rows[:, 1]))
        share_a = np.bincount(rows[:, 0], minlength=len(labels)) / n
        share_b = np.bincount(rows[:, 1], minlength=len(labels)) / n
        chance = float(np.dot(share_a, share_b))
        return _NAN if chance > 1.0 - 1e-12 else (observed - chance) / (1.0 - chance)

    return bootstrap_interval(kappa, pairs, n_resamples=n_resamples, level=level, seed=seed)
