"""The quality figures beside a leaderboard line, on rows made by hand."""

import math

import pytest

from conftest import sample_row
from occubench.analysis import row_quality


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
