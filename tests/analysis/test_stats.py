import math

import numpy as np
import pytest
from scipy import optimize, stats

from occubench.analysis._stats import (
    Interval,
    bootstrap_interval,
    clopper_pearson_interval,
    difference_interval,
    kendall_tau,
    mcnemar_test,
    pairwise_agreement,
    pass_at_k,
    pass_hat_k,
    robustness,
    robustness_interval,
    wilson_interval,
)

Z95 = 1.959963984540054


def _is_nan_interval(iv: Interval) -> bool:
    return math.isnan(iv.estimate) and math.isnan(iv.low) and math.isnan(iv.high)


# --- binomial intervals -----------------------------------------------------------

# Newcombe RG (1998), "Two-sided confidence intervals for the single proportion:
# comparison of seven methods", Statistics in Medicine 17:857-872, Table II.
# Columns: successes, n, Wilson score (method 3), Clopper-Pearson exact (method 5).
NEWCOMBE = [
    (81, 263, (0.2553, 0.3662), (0.2527, 0.3676)),
    (15, 148, (0.0624, 0.1605), (0.0578, 0.1617)),
    (0, 20, (0.0, 0.1611), (0.0, 0.1684)),
    (1, 29, (0.0061, 0.1718), (0.0009, 0.1776)),
]


@pytest.mark.parametrize(("s", "n", "wilson", "exact"), NEWCOMBE)
def test_intervals_match_newcombe_table(s, n, wilson, exact):
    w = wilson_interval(s, n)
    c = clopper_pearson_interval(s, n)
    assert w.estimate == pytest.approx(s / n)
    assert (round(w.low, 4), round(w.high, 4)) == wilson
    assert (round(c.low, 4), round(c.high, 4)) == exact


@pytest.mark.parametrize(("s", "n"), [(81, 263), (15, 148), (1, 29), (7, 9)])
def test_wilson_equals_score_test_inversion(s, n):
    # Second method: the Wilson bounds are the p where the score statistic
    # |p_hat - p| / sqrt(p (1 - p) / n) equals z; find them by root finding.
    p_hat = s / n

    def score(p):
        return abs(p_hat - p) / math.sqrt(p * (1 - p) / n) - Z95

    low = optimize.brentq(score, 1e-12, p_hat)
    high = optimize.brentq(score, p_hat, 1 - 1e-12)
    w = wilson_interval(s, n)
    assert w.low == pytest.approx(low, abs=1e-9)
    assert w.high == pytest.approx(high, abs=1e-9)


@pytest.mark.parametrize(("s", "n"), [(81, 263), (3, 17), (1, 29)])
def test_clopper_pearson_equals_binomial_tail_inversion(s, n):
    # Second method: P(X >= s | low) = 0.025 and P(X <= s | high) = 0.025.
    low = optimize.brentq(lambda p: stats.binom.sf(s - 1, n, p) - 0.025, 1e-12, 1 - 1e-12)
    high = optimize.brentq(lambda p: stats.binom.cdf(s, n, p) - 0.025, 1e-12, 1 - 1e-12)
    c = clopper_pearson_interval(s, n)
    assert c.low == pytest.approx(low, abs=1e-9)
    assert c.high == pytest.approx(high, abs=1e-9)


def test_clopper_pearson_closed_forms_at_the_edges():
    assert clopper_pearson_interval(0, 10).low == 0.0
    assert clopper_pearson_interval(0, 10).high == pytest.approx(1 - 0.025 ** (1 / 10))
    assert clopper_pearson_interval(0, 10).high == pytest.approx(0.3085, abs=1e-4)
    assert clopper_pearson_interval(10, 10).low == pytest.approx(0.025 ** (1 / 10))
    assert clopper_pearson_interval(10, 10).high == 1.0


def test_level_changes_width():
    narrow = wilson_interval(30, 100, level=0.80)
    wide = wilson_interval(30, 100, level=0.99)
    assert wide.low < narrow.low < 0.3 < narrow.high < wide.high


@pytest.mark.parametrize("fn", [wilson_interval, clopper_pearson_interval])
def test_binomial_intervals_nan_for_empty_sample(fn):
    assert _is_nan_interval(fn(0, 0))


@pytest.mark.parametrize("fn", [wilson_interval, clopper_pearson_interval])
@pytest.mark.parametrize(
    ("s", "n", "kwargs", "match"),
    [
        (5, 4, {}, "cannot exceed"),
        (-1, 4, {}, "non-negative"),
        (0, -1, {}, "non-negative"),
        (1, 4, {"level": 1.0}, "level"),
        (1, 4, {"level": 0.0}, "level"),
    ],
)
def test_binomial_intervals_validate(fn, s, n, kwargs, match):
    with pytest.raises(ValueError, match=match):
        fn(s, n, **kwargs)


# --- bootstrap --------------------------------------------------------------------


def test_bootstrap_is_reproducible_and_seed_dependent():
    data = np.random.default_rng(1).normal(size=50)
    first = bootstrap_interval(np.mean, data, n_resamples=500, seed=7)
    assert first == bootstrap_interval(np.mean, data, n_resamples=500, seed=7)
    assert first != bootstrap_interval(np.mean, data, n_resamples=500, seed=8)
    assert first.estimate == pytest.approx(float(np.mean(data)))


def test_bootstrap_covers_true_mean_and_is_close_to_wilson():
    data = np.random.default_rng(3).random(400) < 0.3
    iv = bootstrap_interval(np.mean, data)
    assert iv.low < 0.3 < iv.high
    w = wilson_interval(int(data.sum()), data.size)
    assert iv.low == pytest.approx(w.low, abs=0.01)
    assert iv.high == pytest.approx(w.high, abs=0.01)


def test_bootstrap_drops_nan_resamples():
    # The statistic is undefined whenever a resample has no 1; those are dropped,
    # so every surviving replicate is at least 1/4.
    def mean_if_any(x):
        return float(x.mean()) if x.any() else float("nan")

    iv = bootstrap_interval(mean_if_any, [0, 0, 0, 1], n_resamples=400)
    assert iv.estimate == 0.25
    assert iv.low >= 0.25


def test_bootstrap_all_nan_and_empty():
    iv = bootstrap_interval(lambda x: float("nan"), [1.0, 2.0], n_resamples=50)
    assert math.isnan(iv.low) and math.isnan(iv.high)
    assert _is_nan_interval(bootstrap_interval(np.mean, []))


def test_bootstrap_resamples_rows_of_2d_data():
    data = np.column_stack([np.arange(20.0), np.arange(20.0)])
    iv = bootstrap_interval(lambda d: float((d[:, 0] - d[:, 1]).sum()), data, n_resamples=100)
    assert (iv.low, iv.high) == (0.0, 0.0)


# --- robustness -------------------------------------------------------------------


def test_robustness_known_values():
    assert robustness({"E0": 0.8, "E1": 0.6, "E2": 0.4, "E3": 0.5}) == pytest.approx(0.5)
    assert robustness({"E0": 0.8, "E3": 0.6}) == pytest.approx(0.75)
    assert robustness({"E0": 0.5, "E1": 0.6, "E9": 0.0}) == pytest.approx(1.2)


@pytest.mark.parametrize(
    "crs",
    [
        {"E0": 0.0, "E1": 0.3},
        {"E0": 0.8},
        {"E1": 0.5, "E2": 0.4},
        {"E0": 0.8, "E1": float("nan")},
    ],
)
def test_robustness_undefined(crs):
    assert math.isnan(robustness(crs))


def _verdicts(passes, n=10):
    return [True] * passes + [False] * (n - passes)


def test_robustness_interval_point_estimate_and_reproducibility():
    outcomes = {"E0": _verdicts(8), "E1": _verdicts(6), "E2": _verdicts(4), "E3": _verdicts(5)}
    iv = robustness_interval(outcomes, n_resamples=500)
    assert iv.estimate == pytest.approx(0.5)
    assert iv.low < 0.5 < iv.high
    assert iv == robustness_interval(outcomes, n_resamples=500)


def test_robustness_interval_resamples_each_mode_within_itself():
    # Each mode is uniform, so within-mode resamples keep CR_E0 = 1 and CR_E1 = 0
    # and the interval collapses to R = 0; pooling verdicts across modes would not.
    iv = robustness_interval({"E0": [1] * 10, "E1": [0] * 4, "E3": [1] * 6})
    assert (iv.estimate, iv.low, iv.high) == (0.0, 0.0, 0.0)


def test_robustness_interval_undefined_cases():
    assert _is_nan_interval(robustness_interval({"E0": [0, 0, 0], "E1": [1, 0]}, n_resamples=50))
    assert _is_nan_interval(robustness_interval({"E0": [1, 1], "E1": []}, n_resamples=50))
    with pytest.raises(ValueError, match="0/1"):
        robustness_interval({"E0": [1, 2], "E1": [1]})


# --- difference -------------------------------------------------------------------


def test_paired_difference_of_identical_lists_is_exactly_zero():
    a = _verdicts(6, 20)
    paired = difference_interval(a, a, paired=True)
    unpaired = difference_interval(a, a, paired=False)
    assert (paired.estimate, paired.low, paired.high) == (0.0, 0.0, 0.0)
    assert unpaired.estimate == 0.0
    assert unpaired.low < 0.0 < unpaired.high


def test_difference_estimate_and_coverage():
    a = _verdicts(15, 20)
    b = _verdicts(5, 20)
    iv = difference_interval(a, b)
    assert iv.estimate == pytest.approx(0.5)
    assert 0.0 < iv.low < 0.5 < iv.high
    assert difference_interval(a, _verdicts(2, 5), paired=False).estimate == pytest.approx(0.35)


def test_difference_validation():
    with pytest.raises(ValueError, match="align"):
        difference_interval([1, 0], [1])
    assert _is_nan_interval(difference_interval([], [1, 0], paired=False))


# --- McNemar ----------------------------------------------------------------------


def _pairs(both, a_only, b_only, neither):
    a = [1] * both + [1] * a_only + [0] * b_only + [0] * neither
    b = [1] * both + [0] * a_only + [1] * b_only + [0] * neither
    return a, b


def test_mcnemar_b_better():
    a, b = _pairs(both=4, a_only=0, b_only=6, neither=2)
    result = mcnemar_test(a, b)
    assert (result.n, result.a_only, result.b_only) == (12, 0, 6)
    assert result.p_value == pytest.approx(2 * 0.5**6)  # 0.03125
    assert result.difference == pytest.approx(-6 / 12)
    assert result.verdict == "B better"


def test_mcnemar_a_better_matches_hand_binomial():
    a, b = _pairs(both=0, a_only=9, b_only=1, neither=0)
    result = mcnemar_test(a, b)
    # Two-sided exact: 2 * P(X <= 1), X ~ Bin(10, 1/2) = 2 * 11 / 1024.
    assert result.p_value == pytest.approx(22 / 1024)
    assert result.verdict == "A better"
    assert mcnemar_test(a, b, alpha=0.01).verdict == "not distinguishable"


def test_mcnemar_not_distinguishable():
    a, b = _pairs(both=3, a_only=1, b_only=2, neither=3)
    result = mcnemar_test(a, b)
    assert result.p_value == pytest.approx(1.0)
    assert result.verdict == "not distinguishable"


def test_mcnemar_without_discordant_pairs():
    result = mcnemar_test([True, False, True], [True, False, True])
    assert result.p_value == 1.0
    assert result.difference == 0.0
    assert result.verdict == "not distinguishable"


def test_mcnemar_validation():
    with pytest.raises(ValueError, match="align"):
        mcnemar_test([True], [True, False])
    with pytest.raises(ValueError, match="alpha"):
        mcnemar_test([True], [False], alpha=1.5)


# --- rank agreement ---------------------------------------------------------------


def test_kendall_tau_known_values():
    assert kendall_tau([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(4 / 6)
    assert kendall_tau([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    # tau-b with a tie in x: 2 concordant, 0 discordant, n0=3, ties_x=1, ties_y=0.
    assert kendall_tau([1, 1, 2], [1, 2, 3]) == pytest.approx(2 / math.sqrt(2 * 3))


@pytest.mark.parametrize(("x", "y"), [([], []), ([1.0], [2.0]), ([1, 1, 1], [1, 2, 3])])
def test_kendall_tau_undefined(x, y):
    assert math.isnan(kendall_tau(x, y))


def test_kendall_tau_length_mismatch():
    with pytest.raises(ValueError, match="align"):
        kendall_tau([1, 2], [1, 2, 3])


def test_pairwise_agreement_one_flipped_pair():
    a = {"m1": 0.9, "m2": 0.5, "m3": 0.3, "only_a": 0.1}
    b = {"m1": 0.8, "m2": 0.2, "m3": 0.4, "only_b": 0.7}
    result = pairwise_agreement(a, b)
    assert (result.n_models, result.n_pairs, result.agreeing_pairs) == (3, 3, 2)
    assert result.share == pytest.approx(2 / 3)
    assert result.flipped == [("m2", "m3")]  # A ranks m2 above m3, B the reverse
    assert result.tau == pytest.approx(1 / 3)


def test_pairwise_agreement_ties():
    both_tied = pairwise_agreement({"x": 0.5, "y": 0.5}, {"x": 0.2, "y": 0.2})
    assert (both_tied.agreeing_pairs, both_tied.flipped) == (1, [])
    one_tied = pairwise_agreement({"x": 0.5, "y": 0.5}, {"x": 0.2, "y": 0.3})
    assert (one_tied.agreeing_pairs, one_tied.flipped) == (0, [])
    assert one_tied.share == 0.0


def test_pairwise_agreement_without_pairs():
    result = pairwise_agreement({"x": 0.5, "y": float("nan")}, {"x": 0.1, "y": 0.2})
    assert (result.n_models, result.n_pairs) == (1, 0)
    assert math.isnan(result.share) and math.isnan(result.tau)


# --- pass^k and pass@k ------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "c", "k", "hat", "at"),
    [
        (4, 2, 2, 1 / 6, 5 / 6),  # C(2,2)/C(4,2); 1 - C(2,2)/C(4,2)
        (5, 3, 2, 3 / 10, 9 / 10),  # C(3,2)/C(5,2); 1 - C(2,2)/C(5,2)
        (8, 3, 1, 3 / 8, 3 / 8),  # k = 1 is the plain rate for both
        (6, 6, 3, 1.0, 1.0),
        (6, 0, 3, 0.0, 0.0),
        (5, 4, 5, 0.0, 1.0),
    ],
)
def test_pass_k_hand_values(n, c, k, hat, at):
    assert pass_hat_k(n, c, k) == pytest.approx(hat)
    assert pass_at_k(n, c, k) == pytest.approx(at)


@pytest.mark.parametrize("fn", [pass_hat_k, pass_at_k])
@pytest.mark.parametrize(("n", "c", "k"), [(3, 1, 4), (3, 1, 0), (3, 4, 1), (3, -1, 1)])
def test_pass_k_validation(fn, n, c, k):
    with pytest.raises(ValueError):
        fn(n, c, k)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_batched_bootstraps_give_the_intervals_of_the_plain_ones(seed, monkeypatch):
    from occubench.analysis import _stats

    rng = np.random.default_rng(seed)
    a, b = rng.random(57) < 0.6, rng.random(57) < 0.4
    modes = {"E0": rng.random(40) < 0.8, "E1": rng.random(31) < 0.5, "E3": rng.random(9) < 0.2}
    sparse = {"E0": [0, 0, 0, 1], "E2": [1, 0]}  # resamples with a zero baseline: nan
    absent = {"X": [1, 0]}  # no mode of the ratio at all
    batched = [
        _stats.difference_interval(a, b, n_resamples=300, seed=seed),
        _stats.difference_interval(a, b[:50], paired=False, n_resamples=300, seed=seed),
        _stats.robustness_interval(modes, n_resamples=300, seed=seed),
        _stats.robustness_interval(sparse, n_resamples=300, seed=seed),
        _stats.robustness_interval(absent, n_resamples=30, seed=seed),
    ]
    monkeypatch.setattr(_stats, "BATCH_CELLS", 7)  # many small batches
    assert [
        _stats.difference_interval(a, b, n_resamples=300, seed=seed),
        _stats.difference_interval(a, b[:50], paired=False, n_resamples=300, seed=seed),
        _stats.robustness_interval(modes, n_resamples=300, seed=seed),
        _stats.robustness_interval(sparse, n_resamples=300, seed=seed),
        _stats.robustness_interval(absent, n_resamples=30, seed=seed),
    ] == batched
    real = _stats._bootstrap

    def plain(statistic, groups, n_resamples, level, seed, batch=None):
        return real(statistic, groups, n_resamples, level, seed)

    monkeypatch.setattr(_stats, "_bootstrap", plain)
    assert [
        _stats.difference_interval(a, b, n_resamples=300, seed=seed),
        _stats.difference_interval(a, b[:50], paired=False, n_resamples=300, seed=seed),
        _stats.robustness_interval(modes, n_resamples=300, seed=seed),
        _stats.robustness_interval(sparse, n_resamples=300, seed=seed),
        _stats.robustness_interval(absent, n_resamples=30, seed=seed),
    ] == batched
