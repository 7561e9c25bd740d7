"""Cross-simulator agreement on a hand-built table whose answers are known."""

import math

import pytest

from conftest import sample_row
from occubench.fidelity import compare_simulators, comparison_tables


def row(agent, simulator, mode, task, passed, error=None):
    return sample_row(
        run_id=f"{agent}-{simulator}-{mode}",
        agent_model=agent,
        simulator_model=simulator,
        env_mode=mode,
        task_id=task,
        passed=None if error else passed,
        error=error,
    )


def runs(simulator, mode, passes):
    """Four tasks per agent; ``passes[agent]`` of them pass."""
    return [
        row(agent, simulator, mode, task, task < n)
        for agent, n in passes.items()
        for task in range(4)
    ]


ROWS = (
    # E3: sim/b reverses sim/a's order completely, and compresses the spread.
    runs("sim/a", "E3", {"a1": 4, "a2": 2, "a3": 0})
    + runs("sim/b", "E3", {"a1": 1, "a2": 2, "a3": 3})
    # E0: the same order under both; sim/c ties a2 and a3.
    + runs("sim/a", "E0", {"a1": 4, "a2": 3, "a3": 1})
    + runs("sim/b", "E0", {"a1": 3, "a2": 2, "a3": 0})
    + runs("sim/c", "E0", {"a1": 4, "a2": 2, "a3": 2})
    + [row("a3", "sim/c", "E0", 9, None, error="simulator down")]  # errors are left out
)


def test_agreement_tau_flips_and_matrix():
    result = compare_simulators(ROWS)
    assert result.simulators == ["sim/a", "sim/b", "sim/c"] and result.env_modes == ["E0", "E3"]
    pairs = {(a.env_mode, a.simulator_a, a.simulator_b): a for a in result.agreements}
    reversed_ = pairs[("E3", "sim/a", "sim/b")]
    assert (reversed_.n_pairs, reversed_.agreeing_pairs, reversed_.share) == (3, 0, 0.0)
    assert reversed_.tau == pytest.approx(-1.0)
    assert sorted(reversed_.flipped) == [("a1", "a2"), ("a1", "a3"), ("a2", "a3")]
    same = pairs[("E0", "sim/a", "sim/b")]
    assert same.share == 1.0 and same.tau == pytest.approx(1.0) and same.flipped == []
    tied = pairs[("E0", "sim/a", "sim/c")]  # a2 > a3 under a, tied under c: disagrees, no flip
    assert tied.agreeing_pairs == 2 and tied.flipped == []
    assert tied.tau == pytest.approx(2 / math.sqrt(3 * 2))  # tau-b with one tie in c
    matrix = result.matrix("E0")
    assert matrix["sim/a"]["sim/a"] == 1.0
    assert matrix["sim/a"]["sim/c"] == matrix["sim/c"]["sim/a"] == pytest.approx(2 / 3)
    assert math.isnan(result.matrix("E3")["sim/a"]["sim/c"])  # sim/c did not run E3


def test_score_compression():
    result = compare_simulators(ROWS)
    spreads = {(s.env_mode, s.simulator): s for s in result.spreads}
    wide, narrow = spreads[("E3", "sim/a")], spreads[("E3", "sim/b")]
    assert wide.rates == {"a1": 1.0, "a2": 0.5, "a3": 0.0}
    assert wide.spread == 1.0 and wide.std == pytest.approx(math.sqrt(1 / 6))
    assert narrow.spread == pytest.approx(0.5) and narrow.std == pytest.approx(math.sqrt(1 / 24))
    assert spreads[("E0", "sim/c")].scored["a3"] == 4  # the errored sample is not scored


def test_tables_render_and_one_simulator_is_an_error():
    titles = [t.title for t in comparison_tables(compare_simulators(ROWS))]
    assert len(titles) == 6 and "flip" in titles[-1]
    with pytest.raises(ValueError, match="two or more simulators"):
        compare_simulators(runs("sim/a", "E0", {"a1": 1, "a2": 2}))
