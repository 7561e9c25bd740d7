"""Quality beside each score: how far the samples behind one leaderboard line can be trusted.

Per setup (agent, simulator) in one env mode, over its scored samples:

- **flagged by the online checks**: the samples whose trajectory kept an observation that
  failed an online simulator check (``SampleRow.simulator_suspect``), over the samples the
  checks looked at, with how many of them passed and failed: a passed flagged sample may
  owe its pass to a broken environment, a failed one its failure. Not measured when the
  checks were off.
- **verifier agreement**: the samples whose k verifier votes were unanimous, over the
  samples with two votes or more; a split vote is a verdict the same verifier could give
  the other way. Not measured with one vote or none (checks alone graded).
- **expert kappa** (Cohen's, automatic against human verdicts) and **gold agreement**
  (the simulator's mean agreement with a gold world, ``audit --gold``) come from outside
  the logs and are filled in by the report when reviews or a gold world are given; None
  reads "not measured".
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from occubench.analysis._metrics import MetricRow, group, setup_of
from occubench.analysis._stats import wilson_interval
from occubench.results import SampleRow


class RowQuality(MetricRow):
    """The quality figures of one setup in one env mode (module doc)."""

    agent: str
    simulator: str
    env_mode: str
    scored: int = Field(description="Samples with a verdict.")
    checked: int = Field(description="Of those, samples the online simulator checks looked at.")
    flagged: int = Field(description="Checked samples that kept an observation a check failed.")
    flagged_passed: int = Field(description="Flagged samples that passed.")
    flagged_failed: int = Field(description="Flagged samples that failed.")
    flagged_rate: float = Field(description="flagged / checked (nan: not measured).")
    flagged_low: float = Field(description="Wilson 95% interval, low end.")
    flagged_high: float = Field(description="Wilson 95% interval, high end.")
    voted: int = Field(description="Samples with two verifier votes or more.")
    unanimous: int = Field(description="Of those, samples whose votes were all alike.")
    unanimous_rate: float = Field(description="unanimous / voted (nan: not measured).")
    unanimous_low: float = Field(description="Wilson 95% interval, low end.")
    unanimous_high: float = Field(description="Wilson 95% interval, high end.")
    kappa: float | None = Field(
        default=None,
        description="Cohen's kappa of the automatic verdicts against the reviewers' (None: "
        "not measured; nan: undefined on the samples reviewed).",
    )
    reviewed: int | None = Field(
        default=None,
        description="Samples with an automatic and a human verdict (None: no reviews).",
    )
    gold: float | None = Field(
        default=None,
        description="The simulator's mean agreement with a gold world (audit --gold; None: "
        "not measured).",
    )


def row_quality(rows: Sequence[SampleRow], env_mode: str) -> list[RowQuality]:
    """The quality figures of each setup in ``env_mode`` (module doc), by setup."""
    out = []
    chosen = [r for r in rows if r.env_mode == env_mode and r.passed is not None]
    for (agent, simulator), members in group(chosen, setup_of).items():
        checked = [r for r in members if r.sim_checked is not None]
        flagged = [r for r in checked if r.simulator_suspect]
        voted = [r for r in members if (r.votes_total or 0) >= 2 and r.votes_yes is not None]
        unanimous = sum(r.votes_yes in (0, r.votes_total) for r in voted)
        flag_interval = wilson_interval(len(flagged), len(checked))
        vote_interval = wilson_interval(unanimous, len(voted))
        out.append(
            RowQuality(
                agent=agent,
                simulator=simulator,
                env_mode=env_mode,
                scored=len(members),
                checked=len(checked),
                flagged=len(flagged),
                flagged_passed=sum(bool(r.passed) for r in flagged),
                flagged_failed=sum(not r.passed for r in flagged),
                flagged_rate=flag_interval.estimate,
                flagged_low=flag_interval.low,
                flagged_high=flag_interval.high,
                voted=len(voted),
                unanimous=unanimous,
                unanimous_rate=vote_interval.estimate,
                unanimous_low=vote_interval.low,
                unanimous_high=vote_interval.high,
            )
        )
    return out
