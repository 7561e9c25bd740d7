"""Tie groups: lines the run's noise cannot tell apart share a rank.

A line's rank is one more than the number of lines whose CR is higher by at least the
pair's minimum detectable difference (``analysis.mark_indistinguishable``): the lines
it is "not distinguishable from" do not push it down. Lines with the same rank form a
tie group. Without variance marks every line is its own group (rank = position, ties
of equal CR aside). A line without a rate comes after every line with one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from occubench.analysis import LeaderboardRow


def tie_ranks(lines: Sequence[LeaderboardRow]) -> dict[int, int]:
    """Each line's tie rank, by its leaderboard rank (module doc)."""
    out = {}
    rated = sum(not math.isnan(line.rate) for line in lines)
    for line in lines:
        if math.isnan(line.rate):  # no scored sample: after every rated line
            out[line.rank] = rated + 1
            continue
        close = set(line.not_distinguishable_from)
        better = sum(
            1
            for other in lines
            if other.rank != line.rank and other.rank not in close and other.rate > line.rate
        )
        out[line.rank] = better + 1
    return out
