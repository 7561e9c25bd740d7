"""Metrics on hand-built sample tables whose answers are known."""

import math

import pytest

from conftest import sample_row
from occubench.analysis import (
    compare_models,
    costs,
    fault_recovery,
    pass_k,
    priced,
    rates,
    robustness_scores,
    simulator_agreement,
)
from occubench.analysis._metrics import headline_mode
from occubench.costs import ModelPrice, PriceTable
from occubench.report import build_report
from occubench.text._sanitize import markdown_cell, terminal_text

SIM = "sim/x"


def row(
    agent="a/one",
    mode="E0",
    task=1,
    passed=True,
    *,
    epoch=1,
    simulator=SIM,
    industry="Health",
    difficulty=1,
    error=None,
    faults=(),
    tokens=None,
    tool_calls=3,
):
    return sample_row(
        run_id=f"{agent}-{mode}",
        agent_model=agent,
        simulator_model=simulator,
        env_mode=mode,
        epoch=epoch,
        task_id=task,
        scenario=f"S{task % 3}",
        industry=industry,
        difficulty=difficulty,
        passed=None if error else passed,
        error=error,
        tool_calls=tool_calls,
        faults=list(faults),
        tokens=tokens or {"agent": 100, "simulator": 50},
        input_tokens={"agent": 80, "simulator": 40},
        output_tokens={"agent": 20, "simulator": 10},
    )


def outcomes(agent, mode, passes, n, **kw):
    return [row(agent, mode, task=i, passed=i < passes, **kw) for i in range(n)]


def test_rate_matches_textbook_wilson_and_leaves_errors_out():
    # Newcombe (1998), Table II: 81/263 -> Wilson 95% interval 0.2553-0.3662.
    rows = outcomes("a/one", "E0", 81, 263)
    rows += [row("a/one", "E0", task=1000 + i, error="simulator down") for i in range(5)]
    [overall] = rates(rows)
    assert (overall.scored, overall.passed, overall.errors, overall.samples) == (263, 81, 5, 268)
    assert (round(overall.low, 4), round(overall.high, 4)) == (0.2553, 0.3662)
    assert overall.rate == pytest.approx(81 / 263)


def test_rates_by_dimension_split_setups_modes_and_groups():
    rows = [
        row(task=1, industry="Health", difficulty=1, passed=True),
        row(task=2, industry="Health", difficulty=3, passed=False),
        row(task=3, industry="Law", difficulty=3, passed=True),
        row("b/two", task=1, industry="Health", passed=False),
        row(mode="E1", task=1, industry="Health", passed=False),
    ]
    by_industry = {
        (g.agent, g.env_mode, g.group): (g.passed, g.scored) for g in rates(rows, "industry")
    }
    assert by_industry == {
        ("a/one", "E0", "Health"): (1, 2),
        ("a/one", "E0", "Law"): (1, 1),
        ("a/one", "E1", "Health"): (0, 1),
        ("b/two", "E0", "Health"): (0, 1),
    }
    by_difficulty = {(g.agent, g.env_mode, g.group): g.rate for g in rates(rows, "difficulty")}
    assert by_difficulty[("a/one", "E0", "3")] == 0.5
    with pytest.raises(ValueError, match="unknown dimension"):
        rates(rows, "colour")


def test_robustness_is_worst_perturbed_mode_over_clean():
    rows = (
        outcomes("a/one", "E0", 8, 10)
        + outcomes("a/one", "E1", 6, 10)
        + outcomes("a/one", "E2", 4, 10)
        + outcomes("a/one", "E3", 7, 10)
        + outcomes("b/two", "E0", 0, 10)
        + outcomes("b/two", "E1", 0, 10)
    )
    result = {r.agent: r for r in robustness_scores(rows, n_resamples=500)}
    one = result["a/one"]
    assert one.rates == {"E0": 0.8, "E1": 0.6, "E2": 0.4, "E3": 0.7}
    assert one.r == pytest.approx(0.5)
    assert one.low < 0.5 < one.high
    assert robustness_scores(rows, n_resamples=500)[0] == result["a/one"]  # seeded
    assert math.isnan(result["b/two"].r)  # CR_E0 = 0: undefined, not infinite


def test_mcnemar_comparison_on_shared_items_only():
    # 20 shared tasks: 8 only A passes, 1 only B passes, 5 both, 6 neither.
    a = [row("a/one", task=i, passed=i < 13) for i in range(20)]
    b = [row("b/two", task=i, passed=(8 <= i < 13) or i == 19) for i in range(20)]
    b.append(row("b/two", task=99, passed=True))  # not run by A: not paired
    a.append(row("a/one", task=98, error="timeout"))  # errored: not paired
    [c] = compare_models(a + b, n_resamples=500)
    assert (c.n, c.a_only, c.b_only) == (20, 8, 1)
    assert c.p_value == pytest.approx(2 * (1 + 9) / 2**9)  # exact binomial, 1 of 9
    assert c.verdict == "a/one better"
    assert c.difference == pytest.approx(0.35)
    assert c.low <= 0.35 <= c.high and c.low > 0


def test_close_models_are_not_distinguishable():
    a = [row("a/one", task=i, passed=i < 5) for i in range(10)]
    b = [row("b/two", task=i, passed=2 <= i < 6) for i in range(10)]
    [c] = compare_models(a + b, n_resamples=200)
    assert (c.a_only, c.b_only) == (2, 1)
    assert c.verdict == "not distinguishable" and c.p_value == 1.0


def test_pass_k_only_with_several_epochs():
    rows = [row(task=1, epoch=e, passed=e != 3) for e in (1, 2, 3)]
    rows += [row(task=2, epoch=e, passed=True) for e in (1, 2, 3)]
    by_k = {p.k: p for p in pass_k(rows)}
    assert sorted(by_k) == [1, 2, 3]
    assert by_k[1].pass_hat_k == pytest.approx(5 / 6)
    assert by_k[2].pass_hat_k == pytest.approx((1 / 3 + 1) / 2)  # C(2,2)/C(3,2) and 1
    assert by_k[2].pass_at_k == pytest.approx(1.0)
    assert by_k[3].pass_hat_k == pytest.approx(0.5)
    assert pass_k([row(task=1), row(task=2)]) == []


def test_simulator_agreement_share_and_tau():
    scores = {"sim/x": {"a": 9, "b": 5, "c": 2}, "sim/y": {"a": 8, "b": 1, "c": 3}}
    rows = [
        row(agent, task=i, passed=i < passes, simulator=sim)
        for sim, by_agent in scores.items()
        for agent, passes in by_agent.items()
        for i in range(10)
    ]
    [agreement] = simulator_agreement(rows)
    assert (agreement.n_pairs, agreement.agreeing_pairs) == (3, 2)
    assert agreement.share == pytest.approx(2 / 3)
    assert agreement.tau == pytest.approx(1 / 3)  # (concordant - discordant) / pairs
    assert agreement.flipped == [("b", "c")]


FAULT = {
    "call_index": 0,
    "tool": "t",
    "kind": "http_500",
    "explicit": True,
    "applied": True,
    "changes": [],
    "seen_by_agent": {"error": "internal server error"},
    "retried_later": True,
}


def test_fault_recovery_counts_applied_faults_and_hit_samples():
    rows = [
        row(mode="E1", task=1, passed=True, faults=[FAULT, {**FAULT, "retried_later": False}]),
        row(mode="E1", task=2, passed=False, faults=[{**FAULT, "kind": "timeout"}]),
        row(
            mode="E1",
            task=3,
            passed=True,
            faults=[{**FAULT, "kind": "truncated_list", "applied": False}],
        ),
        row(mode="E1", task=4, passed=True),
    ]
    result = {f.kind: f for f in fault_recovery(rows)}
    assert sorted(result) == ["all", "http_500", "timeout"]
    everything = result["all"]
    assert (everything.faults, everything.retried, everything.samples_hit) == (3, 2, 2)
    assert everything.hit_rate == 0.5 and everything.retry_rate == pytest.approx(2 / 3)
    assert (result["timeout"].hit_passed, result["http_500"].hit_passed) == (0, 1)
    assert rows[0].faults_applied == 2 and rows[0].faults_retried == 1
    assert rows[2].faults_applied == 0


def test_tokens_and_cost_per_task_and_per_solved_task():
    rows = [row(task=1, passed=True), row(task=2, passed=False), row(task=3, error="down")]
    [plain] = costs(rows)
    assert plain.tokens_per_task == 150 and plain.tokens_per_solved == 450
    assert plain.cost is None
    prices = PriceTable(
        models={
            "a/one": ModelPrice(input_per_mtok=1.0, output_per_mtok=10.0),
            SIM: ModelPrice(input_per_mtok=2.0, output_per_mtok=4.0),
        }
    )
    [paid] = costs(rows, prices)
    per_row = (80 * 1 + 20 * 10 + 40 * 2 + 10 * 4) / 1e6
    assert paid.cost == pytest.approx(3 * per_row)
    assert paid.cost_per_solved == pytest.approx(3 * per_row)
    assert [r.cost for r in priced(rows, prices)] == pytest.approx([per_row] * 3)
    [unpriced] = costs(rows, PriceTable(models={}))
    assert unpriced.cost is None and unpriced.unpriced_models == ["a/one", SIM]


def test_report_ranks_on_clean_mode_with_undefined_last():
    rows = (
        outcomes("a/one", "E0", 3, 10)
        + outcomes("b/two", "E0", 7, 10)
        + outcomes("c/three", "E1", 5, 10)
        + outcomes("a/one", "E1", 3, 10)
    )
    report = build_report(rows, n_resamples=200)
    assert [line.agent for line in report.leaderboard] == ["b/two", "a/one"]
    assert math.isnan(report.leaderboard[1].r)  # E0 and E1 only: R needs E0-E3
    assert report.leaderboard[1].r_note.startswith("no E2, E3 run")
    assert headline_mode(outcomes("c/three", "E2", 1, 2)) == "E2"
    with pytest.raises(ValueError, match="no samples"):
        build_report([])


def test_terminal_text_strips_controls_and_escapes_markup():
    hostile = "ok\x1b[31mred\x1b[0m\x1b]0;title\x07\x1b]8;;http://x\x1b\\link\x9b2J\x00\r[bold]b[/bold]\n\tend\u202e"
    assert terminal_text(hostile) == "okredlink\\[bold]b\\[/bold]\n\tend"
    assert markdown_cell("a|b\n<script>") == "a\\|b &lt;script&gt;"


def test_an_agents_reasoning_budget_tells_its_setups_apart():
    from conftest import sample_row
    from occubench.analysis._metrics import agent_name

    assert agent_name(sample_row(reasoning_tokens=4096)) == "a/one[reasoning_tokens=4096]"
    both = sample_row(reasoning_effort="high", reasoning_tokens=4096)
    assert agent_name(both) == "a/one[reasoning_effort=high,reasoning_tokens=4096]"
    labelled = sample_row(agent_model="a/one[reasoning_tokens=4096]", reasoning_tokens=4096)
    assert agent_name(labelled) == "a/one[reasoning_tokens=4096]"  # a sweep's label kept
