"""The quality figures beside a leaderboard line, on rows made by hand."""

import math

import pytest

from conftest import sample_row
from occubench.analysis import row_guard, row_quality


def test_flagged_samples_and_unanimous_votes_are_counted():
    rows = [
        # checked, flagged, passed; votes 3/3
        sample_row(task_id=1, sim_checked=4, simulator_suspect=True, votes_yes=3, votes_total=3),
        # checked, flagged, failed; votes 1/3 (split)
        sample_row(
            task_id=2,
            passed=False,
            sim_checked=4,
            simulator_suspect=True,
            votes_yes=1,
            votes_total=3,
        ),
        # checked, clean; votes 0/3 (unanimous)
        sample_row(
            task_id=3,
            passed=False,
            sim_checked=2,
            simulator_suspect=False,
            votes_yes=0,
            votes_total=3,
        ),
        # not checked, one vote: counts in neither
        sample_row(task_id=4, votes_yes=1, votes_total=1),
        # errored: not scored
        sample_row(task_id=5, passed=None, error="boom", sim_checked=1, simulator_suspect=True),
        # another mode: not this line's
        sample_row(task_id=1, env_mode="E1", sim_checked=1, simulator_suspect=True),
    ]
    (q,) = row_quality(rows, "E0")
    assert (q.scored, q.checked, q.flagged, q.flagged_passed, q.flagged_failed) == (4, 3, 2, 1, 1)
    assert q.flagged_rate == pytest.approx(2 / 3)
    assert (q.voted, q.unanimous) == (3, 2)
    assert q.unanimous_rate == pytest.approx(2 / 3) and q.unanimous_low < q.unanimous_rate
    assert q.kappa is None and q.gold is None  # from outside the logs: filled by the report


def test_without_checks_or_votes_nothing_is_measured():
    (q,) = row_quality([sample_row(), sample_row(task_id=2, votes_yes=1, votes_total=1)], "E0")
    assert (q.checked, q.voted) == (0, 0)
    assert math.isnan(q.flagged_rate) and math.isnan(q.unanimous_rate)


def test_the_guard_findings_are_kept_apart():
    """Issue 48: a suspected exploit (the agent) and a simulator off contract (the env)."""
    rows = [
        # a pass suspected of an exploit; the simulator kept its contract
        sample_row(task_id=1, exploit_suspected=True, simulator_off_contract=False),
        # a pass whose simulator answered off contract: not the agent's
        sample_row(task_id=2, exploit_suspected=False, simulator_off_contract=True),
        # a failure whose simulator answered off contract
        sample_row(task_id=3, passed=False, exploit_suspected=False, simulator_off_contract=True),
        # a pass graded before the simulator's side was recorded
        sample_row(task_id=4, exploit_suspected=False),
        # the guard off: counts in neither
        sample_row(task_id=5),
    ]
    (g,) = row_guard(rows, "E0")
    assert (g.scored, g.guarded, g.passes, g.suspected) == (5, 4, 3, 1)
    assert g.suspected_rate == pytest.approx(1 / 3) and g.suspected_low < g.suspected_rate
    assert (g.recorded, g.off_contract, g.off_contract_passed, g.off_contract_failed) == (
        3,
        2,
        1,
        1,
    )
    assert g.off_contract_rate == pytest.approx(2 / 3)
    (off,) = row_guard([sample_row()], "E0")
    assert (off.guarded, off.recorded) == (0, 0) and math.isnan(off.suspected_rate)
