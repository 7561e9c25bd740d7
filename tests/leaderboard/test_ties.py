"""Tie groups: a line is pushed down only by lines better than it by at least their MDD."""

from __future__ import annotations

import math

from occubench.analysis import LeaderboardRow
from occubench.leaderboard import tie_ranks


def line(rank: int, rate: float, close: list[int]) -> LeaderboardRow:
    nan = math.nan
    return LeaderboardRow(
        rank=rank,
        agent=f"a{rank}",
        simulator="s",
        env_mode="E0",
        scored=10,
        passed=0,
        errors=0,
        rate=rate,
        low=nan,
        high=nan,
        mode_rates={},
        r=nan,
        r_low=nan,
        r_high=nan,
        not_distinguishable_from=close,
    )


def test_lines_within_the_mdd_share_a_rank():
    lines = [line(1, 0.9, [2]), line(2, 0.8, [1, 3]), line(3, 0.7, [2]), line(4, 0.2, [])]
    assert tie_ranks(lines) == {1: 1, 2: 1, 3: 2, 4: 4}


def test_without_marks_each_line_is_its_own_group_and_equal_rates_tie():
    lines = [line(1, 0.9, []), line(2, 0.9, []), line(3, 0.5, [])]
    assert tie_ranks(lines) == {1: 1, 2: 1, 3: 3}


def test_a_line_without_a_rate_comes_last():
    lines = [line(1, 0.5, []), line(2, math.nan, [])]
    assert tie_ranks(lines) == {1: 1, 2: 2}
