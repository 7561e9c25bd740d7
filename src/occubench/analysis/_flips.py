"""Verdict flips: how often a task's verdict changes when the same setup runs it again.

A *unit* is one task run by one setup (agent, simulator) in one env mode at one fault
setting; its samples are the epochs (and the runs) of that unit, pooled over logs. A unit
with two verdicts or more *flips* when they are not all alike; the flip rate is flipped
units over units (Wilson 95% interval).

Each *discordant pair* (two samples of a unit with different verdicts) is put down to the
first place their trajectories (``SampleRow.trajectory``) differ:

- **agent**: at an action of the agent (another tool or arguments, an answer instead of a
  call, or another final answer), everything before it alike;
- **simulator**: at an observation, the action before it alike: the environment answered
  the same action differently (a simulator at a temperature or with another seed, or a
  live call where a world had no entry);
- **verifier**: nowhere: the same trajectory was graded differently (judge noise);
- **unknown**: a trajectory was not recorded (logs from before it was, a release run).

What differs later follows from the first difference and is not counted again, so the
shares of one pair sum to one. With a world replayed (``--world-mode replay``), the same
action is always answered the same, so no pair is the simulator's and what remains is the
agent's and the verifier's.

A regraded sample (``occubench regrade``) is also compared with its original grading when
the rows it came from are given (``sources``): the same trajectory graded twice, so each
change is the verifier's (judge noise with the same verifier, judge disagreement with
another).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import Enum
from itertools import combinations

from pydantic import Field

from occubench.analysis._metrics import MetricRow, fault_setting, group, setup_of
from occubench.analysis._stats import BASELINE_MODE, wilson_interval
from occubench.results import SampleRow


class FlipCause(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """Where two samples of one task with different verdicts first differ (module doc)."""

    AGENT = "agent"
    SIMULATOR = "simulator"
    VERIFIER = "verifier"
    UNKNOWN = "unknown"


class FlipRow(MetricRow):
    """Verdict flips of one setup in one env mode, split by cause (module doc)."""

    agent: str
    simulator: str
    env_mode: str
    tasks: int = Field(description="Units (task, fault setting) with two verdicts or more.")
    samples: int = Field(description="Verdicts in those units.")
    flipped: int = Field(description="Units whose verdicts are not all alike.")
    rate: float = Field(description="flipped / tasks (nan without a unit).")
    low: float = Field(description="Wilson 95% interval, low end.")
    high: float = Field(description="Wilson 95% interval, high end.")
    pairs: int = Field(description="Discordant pairs: two samples of a unit, verdicts unlike.")
    agent_pairs: int = Field(description="Pairs whose trajectories first differ at an action.")
    simulator_pairs: int = Field(
        description="Pairs whose trajectories first differ at an observation."
    )
    verifier_pairs: int = Field(description="Pairs with the same trajectory, graded unlike.")
    unknown_pairs: int = Field(description="Pairs with a trajectory not recorded.")
    replayed: int = Field(
        default=0,
        description="Of the samples counted, those whose every observation came from a world.",
    )
    regraded: int | None = Field(
        default=None,
        description="Regraded samples compared with their original grading (None: no regraded "
        "sample, or its original not given).",
    )
    regrade_flips: int = Field(
        default=0, description="Of those, samples whose verdict the regrading changed."
    )

    def share(self, cause: FlipCause) -> float:
        """The share of the discordant pairs put down to ``cause`` (nan without a pair)."""
        if not self.pairs:
            return math.nan
        counts = {
            FlipCause.AGENT: self.agent_pairs,
            FlipCause.SIMULATOR: self.simulator_pairs,
            FlipCause.VERIFIER: self.verifier_pairs,
            FlipCause.UNKNOWN: self.unknown_pairs,
        }
        return counts[cause] / self.pairs


def first_difference(a: Sequence[str], b: Sequence[str]) -> FlipCause:
    """Who made two trajectories differ: the kind of their first differing entry.

    Entries are ``a:`` actions, ``o:`` observations and ``f:`` final answers
    (``SampleRow.trajectory``); observations sit at the same places in both, after the
    action they answer, so a first difference there is the environment's.
    """
    if not a or not b:
        return FlipCause.UNKNOWN
    for x, y in zip(a, b, strict=False):
        if x != y:
            both_observed = x.startswith("o:") and y.startswith("o:")
            return FlipCause.SIMULATOR if both_observed else FlipCause.AGENT
    return FlipCause.VERIFIER if len(a) == len(b) else FlipCause.UNKNOWN


def _unit(row: SampleRow) -> tuple[str, str, str]:
    """One task under one fault setting: the samples that should agree."""
    setting = "" if row.env_mode == BASELINE_MODE else fault_setting(row)
    return str(row.task_id), row.env_name, setting


def _replayed(row: SampleRow) -> bool:
    return row.world_hits > 0 and not row.simulator_calls and not row.live_calls


def _regrades(rows: Sequence[SampleRow], sources: Sequence[SampleRow]) -> tuple[int, int] | None:
    """Regraded samples found among ``sources`` and how many changed (None: none found)."""
    original = {
        (r.run_id, str(r.task_id), r.epoch): r.passed for r in sources if r.passed is not None
    }
    compared = changed = 0
    for row in rows:
        if row.regraded_from_run is None or row.passed is None:
            continue
        before = original.get((row.regraded_from_run, str(row.task_id), row.epoch))
        if before is None:
            continue
        compared += 1
        changed += before != row.passed
    return (compared, changed) if compared else None


def verdict_flips(rows: Sequence[SampleRow], sources: Sequence[SampleRow] = ()) -> list[FlipRow]:
    """Flips per setup and env mode, split by cause (module doc).

    Args:
        rows: The samples (one comparable group).
        sources: Samples a regraded row of ``rows`` may have been graded from first (its
            original run's, matched by eval id, task and epoch).

    Returns:
        One row per setup and mode with a unit of two verdicts or a regraded sample
        compared; the rest have nothing to say.
    """
    out = []
    for (agent, simulator, mode), members in group(
        rows, lambda r: (*setup_of(r), r.env_mode)
    ).items():
        scored = [r for r in members if r.passed is not None]
        units = [u for u in group(scored, _unit).values() if len(u) > 1]
        counts = dict.fromkeys(FlipCause, 0)
        flipped = 0
        for unit in units:
            flipped += len({r.passed for r in unit}) > 1
            for a, b in combinations(unit, 2):
                if a.passed != b.passed:
                    counts[first_difference(a.trajectory, b.trajectory)] += 1
        regrades = _regrades(members, sources)
        if not units and regrades is None:
            continue
        interval = wilson_interval(flipped, len(units))
        out.append(
            FlipRow(
                agent=agent,
                simulator=simulator,
                env_mode=mode,
                tasks=len(units),
                samples=sum(len(u) for u in units),
                flipped=flipped,
                rate=interval.estimate,
                low=interval.low,
                high=interval.high,
                pairs=sum(counts.values()),
                agent_pairs=counts[FlipCause.AGENT],
                simulator_pairs=counts[FlipCause.SIMULATOR],
                verifier_pairs=counts[FlipCause.VERIFIER],
                unknown_pairs=counts[FlipCause.UNKNOWN],
                replayed=sum(_replayed(r) for unit in units for r in unit),
                regraded=None if regrades is None else regrades[0],
                regrade_flips=0 if regrades is None else regrades[1],
            )
        )
    return out
