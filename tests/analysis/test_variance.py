"""Variance components, the minimum detectable difference, and the planner."""

import math
from statistics import NormalDist

import numpy as np
import pytest
from typer.testing import CliRunner

from analysis.synthetic_variance import synthetic_rows, truth
from conftest import sample_row
from occubench.analysis import cr_variance, mdd, mdd_factor, plan_designs, variance_report
from occubench.report import build_report, report_tables


def by_level(components):
    return {c.level: c for c in components}


@pytest.fixture(scope="module")
def synthetic():
    rows = synthetic_rows(tasks=200, sims=2, epochs=5, k=3, seed=0)
    return variance_report(rows, n_resamples=500).rows[0]


def test_known_components_are_recovered_within_their_intervals(synthetic):
    votes, verdict = truth(3)
    shown = by_level(synthetic.components)
    assert synthetic.outcome == "judged outcome" and synthetic.design.votes == 3
    for level, value in votes.items():
        c = shown[level]
        assert c.low <= value <= c.high, (level, value, c)
        assert c.high - c.low < max(0.5 * value, 0.02), level  # informative, not just wide
    for level, value in verdict.items():
        c = by_level(synthetic.verdict_components)[level]
        assert c.low <= value <= c.high, (level, value, c)
    assert sum(c.share for c in synthetic.components) == pytest.approx(1.0)
    design = synthetic.design
    assert (design.tasks, design.simulators, design.epochs) == (200, 2, 5)


def test_checks_only_runs_have_no_judge_component():
    rows = synthetic_rows(tasks=200, sims=2, epochs=5, k=1, seed=0)
    rows = [r.model_copy(update={"votes_yes": None, "votes_total": None}) for r in rows]
    row = variance_report(rows, n_resamples=300).rows[0]
    shown = by_level(row.components)
    assert row.outcome == "verdict" and shown["verifier"].variance is None
    votes, _ = truth(1)  # one vote is the verdict: agent + judge form the epoch level
    assert shown["agent"].low <= votes["agent"] + votes["verifier"] <= shown["agent"].high
    assert shown["task"].low <= votes["task"] <= shown["task"].high


def test_a_level_with_one_child_is_not_identified():
    rows = synthetic_rows(tasks=60, sims=1, epochs=3, k=3, seed=2)
    row = variance_report(rows, n_resamples=100).rows[0]
    assert by_level(row.components)["simulator"].variance is None
    assert by_level(row.components)["agent"].variance is not None


def test_deterministic_agents_have_no_noise():
    rows = [
        sample_row(task_id=t, epoch=e, passed=t % 2 == 0, simulator_seed=s)
        for t in range(10)
        for s in range(2)
        for e in range(1, 4)
    ]
    row = variance_report(rows, n_resamples=100).rows[0]
    parts = by_level(row.verdict_components)
    assert parts["simulator"].variance == 0 and parts["agent"].variance == 0
    assert parts["task"].variance == pytest.approx(0.25 * 10 / 9)  # sample variance of 0/1 x 10
    assert row.mdd == pytest.approx(mdd_factor() * math.sqrt(2 * parts["task"].variance / 10))


@pytest.mark.parametrize("p, n", [(0.5, 100), (0.7, 382), (0.9, 50)])
def test_mdd_matches_the_binomial_closed_form(p, n):
    z = NormalDist().inv_cdf
    closed = (z(0.975) + z(0.8)) * math.sqrt(2 * p * (1 - p) / n)
    assert mdd_factor() == pytest.approx(2.801585, abs=1e-6)
    assert mdd(p * (1 - p) / n, p * (1 - p) / n) == pytest.approx(closed)
    for split in (0.0, 0.3, 1.0):  # one epoch, one replicate: any split of p(1-p) alike
        v = cr_variance(split * p * (1 - p), 0.0, (1 - split) * p * (1 - p), n, 1, 1)
        assert mdd(v, v) == pytest.approx(closed)


def test_a_difference_of_one_mdd_is_detected_with_80_percent_power():
    n, p, trials = 400, 0.5, 4000
    delta = mdd(p * (1 - p) / n, p * (1 - p) / n)
    rng = np.random.default_rng(0)
    a = rng.binomial(n, p, trials) / n
    b = rng.binomial(n, p + delta, trials) / n
    pooled = (a + b) / 2
    z = (b - a) / np.sqrt(2 * pooled * (1 - pooled) / n)
    assert abs(np.mean(np.abs(z) > 1.959964) - 0.80) < 0.03


def test_the_planner_finds_the_fewest_tasks():
    designs = plan_designs(0.02, 0.005, 0.15, 0.03, simulators=2, max_epochs=5)
    assert [d.epochs for d in designs] == [1, 2, 3, 4, 5]
    for d in designs:
        assert d.mdd <= 0.03
        fewer = cr_variance(0.02, 0.005, 0.15, d.tasks - 1, 2, d.epochs) if d.tasks > 1 else 0
        assert d.tasks == 1 or mdd(fewer, fewer) > 0.03
    assert designs[0].tasks > designs[-1].tasks  # epochs shrink the agent part
    with pytest.raises(ValueError):
        plan_designs(0.02, 0, 0.1, 0)


def test_the_leaderboard_marks_differences_below_the_mdd():
    strong = synthetic_rows(tasks=40, sims=1, epochs=2, k=3, seed=3, agent="a/strong")
    weak = synthetic_rows(tasks=40, sims=1, epochs=2, k=3, seed=4, agent="a/weak")
    report = build_report(strong + weak, n_resamples=50, variance=True)
    lines = {line.agent: line for line in report.leaderboard}
    # same population: their CRs differ by far less than the MDD of 40 tasks
    assert lines["a/strong"].not_distinguishable_from == [lines["a/weak"].rank]
    perfect = [r.model_copy(update={"agent_model": "a/perfect", "passed": True}) for r in weak]
    report = build_report(strong + perfect, n_resamples=50, variance=True)
    assert all(not line.not_distinguishable_from for line in report.leaderboard)
    titles = [t.title for t in report_tables(report)]
    assert any(t.startswith("Noise floor") for t in titles)
    board = report_tables(report)[0]
    assert board.columns[-1] == "below MDD of"
    assert build_report(strong, n_resamples=50).variance is None  # only when asked


def test_plan_command_prints_designs(tmp_path, monkeypatch):
    from conftest import run_task
    from occubench.cli import _common, app
    from occubench.dataset import reference_suite_dir

    monkeypatch.setattr(_common.console, "width", 300)  # one line per row and title

    log = run_task(
        tmp_path,
        agent="occubench/trusting",
        roles={"simulator": "occubench/canned"},
        dataset=str(reference_suite_dir()),
        with_plan=True,
        env_mode="E2",
        eval_args={"epochs": 2},
    )
    result = CliRunner().invoke(app, ["plan", log.location, "--mdd", "10"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "Designs detecting a CR difference of 10 points" in result.output
    assert "fewest samples" in result.output
    bad = CliRunner().invoke(app, ["plan", log.location, "--mdd", "0"])
    assert bad.exit_code == 2 and "Traceback" not in bad.output
    out = tmp_path / "report"
    shown = CliRunner().invoke(
        app,
        ["report", log.location, "--variance", "--out", str(out), "-f", "csv", "-f", "md"],
        terminal_width=250,
    )
    assert shown.exit_code == 0, shown.output
    assert "Noise floor" in shown.output and "below MDD of" in shown.output
    header = (out / "variance.csv").read_text().splitlines()[0]
    assert "task_variance" in header and "mdd" in header
    assert "Noise floor" in (out / "report.md").read_text()


def _pair_rows(verdicts, agent, **fields):
    """Rows of one agent from {task: [verdict of epoch 1, 2, ...]}."""
    return [
        sample_row(agent_model=agent, task_id=t, epoch=e, passed=bool(v), **fields)
        for t, epochs in verdicts.items()
        for e, v in enumerate(epochs, start=1)
    ]


# A - B per task and epoch: task 1 [1, 1, 0], task 2 [-1, -1, -1], task 3 [1, 0, -1]
PAIR_A = {1: [1, 1, 0], 2: [0, 0, 0], 3: [1, 1, 0]}
PAIR_B = {1: [0, 0, 0], 2: [1, 1, 1], 3: [0, 1, 1]}


def test_the_paired_difference_splits_into_task_and_within_task_variance():
    from occubench.analysis import paired_difference

    pair = paired_difference(_pair_rows(PAIR_A, "a/one"), _pair_rows(PAIR_B, "a/two"))
    parts = by_level(pair.components)
    # within: pooled epoch-to-epoch variance, (2 x 1/3 + 2 x 0 + 2 x 1) / 6 = 4/9;
    # task means 2/3, -1, 0 have sample variance 19/27, less within / 3 each: 15/27
    assert parts["within"].variance == pytest.approx(4 / 9)
    assert parts["task"].variance == pytest.approx(5 / 9)
    assert pair.difference == pytest.approx(-1 / 9)
    assert (pair.tasks, pair.epochs, pair.pairs) == (3, 3, 9)
    assert pair.variance == pytest.approx(5 / 27 + 4 / 81)  # = 19/81, the task means' s2 / 3
    assert pair.mdd == pytest.approx(mdd_factor() * math.sqrt(19) / 9)
    assert pair.mdd_low <= pair.mdd <= pair.mdd_high


def test_only_the_epochs_both_agents_ran_are_paired():
    from occubench.analysis import paired_difference

    b = [r for r in _pair_rows(PAIR_B, "a/two") if (r.task_id, r.epoch) != (1, 3)]
    pair = paired_difference(_pair_rows(PAIR_A, "a/one"), b)
    parts = by_level(pair.components)
    # task 1 keeps [1, 1]: within (0 + 0 + 2) / 5; task means 1, -1, 0 have s2 1, less
    # within x the mean of 1/2, 1/3, 1/3 (7/18)
    assert pair.pairs == 8
    assert parts["within"].variance == pytest.approx(2 / 5)
    assert parts["task"].variance == pytest.approx(1 - 7 / 45)
    assert pair.variance == pytest.approx(1 / 3)
    assert paired_difference(b, _pair_rows({9: [1]}, "a/one")) is None  # nothing shared


def test_a_simulator_both_agents_meet_alike_cancels_in_their_difference():
    rng = np.random.default_rng(5)
    draws = {t: list(rng.integers(0, 2, 4)) for t in range(1, 21)}  # the shared simulator
    rows = _pair_rows(draws, "a/one") + _pair_rows(draws, "a/two")
    report = variance_report(rows, n_resamples=100)
    (pair,) = report.pairs
    assert (pair.agent_a, pair.agent_b) == ("a/one", "a/two")
    assert pair.mdd == 0 and by_level(pair.components)["within"].variance == 0
    assert pair.unpaired_mdd > 0.2  # apart, each agent's simulator noise counts
    tables = {t.title.split(":")[0]: t for t in report_tables(build_report(rows, variance=True))}
    assert tables["Paired differences"].rows[0][:6] == ["a/one", "a/two", "E0", "20", "4", "+0.0"]


def test_agents_of_different_modes_are_not_paired():
    rows = _pair_rows(PAIR_A, "a/one") + _pair_rows(PAIR_B, "a/two", env_mode="E1")
    assert variance_report(rows, n_resamples=20).pairs == []
