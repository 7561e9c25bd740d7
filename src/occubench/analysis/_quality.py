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
- **exploit suspected** and **simulator off contract** (``GuardQuality``, the exploit
  guard's findings kept apart): the passes with evidence that the agent steered the
  simulator or the judge (``SampleRow.exploit_suspected``), over the passes the guard
  read; and the samples whose simulator answered a success out of its tool's contract
  that the agent did not ask for (``SampleRow.simulator_off_contract``), over the samples
  that record it, with how many passed and failed. The first blames the agent, the
  second the environment. Not measured when the guard was off (or, for the second, on
  logs graded before it was recorded).
- **expert kappa** (Cohen's, automatic against human verdicts) and **gold agreement**
  (the simulator's mean agreement with a gold world, ``audit --gold``) come from outside
  the logs and are filled in by the report when reviews or a gold world are given; None
  reads "not measured".
- **against the twin** (``twin_fidelity``): the simulator's step fidelity against the
  executable twins (``audit --twin``, fed the twin's history), on the environments of the
  line's samples: shown only when the measurement covers every one of them, from its
  steps in those environments; not measured otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from occubench.analysis._metrics import MetricRow, group, setup_of
from occubench.analysis._stats import wilson_interval
from occubench.results import SampleRow
from occubench.twins import Feeding, FidelitySummary, TwinFidelity, summarise


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
    twin_steps: int | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="Steps of this line's environments measured against the twins (audit "
        "--twin, fed the twin's history; absent: not measured).",
    )
    twin_outcome: float | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="Of those, the share whose success or error was the twin's.",
    )
    twin_determined: float | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="The share of the twin's determined fields the simulator gave alike.",
    )
    twin_state: float | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="The share of state fields the simulator kept as the twin (explicit "
        "state mode only).",
    )


def twin_fidelity(
    simulator: str, environments: set[str], records: Sequence[TwinFidelity]
) -> FidelitySummary | None:
    """A simulator's fidelity against the twins on ``environments`` (module doc).

    None when no record of that simulator, fed the twin's history, covers every one of
    the environments.
    """
    mine = [
        r
        for r in records
        if r.simulator == simulator and r.feeding is Feeding.TWIN and environments
    ]
    covered = set().union(*(r.environments for r in mine)) if mine else set()
    if not mine or not environments <= covered:
        return None
    steps = [s for r in mine for s in r.steps if s.environment in environments]
    return summarise(
        mine[0].model_copy(update={"environments": sorted(environments), "steps": steps})
    )


def row_quality(
    rows: Sequence[SampleRow], env_mode: str, twin: Sequence[TwinFidelity] = ()
) -> list[RowQuality]:
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
        measured = twin_fidelity(simulator, {r.env_name for r in members}, twin)
        if measured is not None:
            out[-1].twin_steps = measured.steps
            out[-1].twin_outcome = measured.outcome
            out[-1].twin_determined = measured.determined
            out[-1].twin_state = measured.state
    return out


class GuardQuality(MetricRow):
    """The exploit guard's findings on one setup in one env mode, agent and simulator apart."""

    agent: str
    simulator: str
    env_mode: str
    scored: int = Field(description="Samples with a verdict.")
    guarded: int = Field(description="Of those, samples the exploit guard read (it was on).")
    passes: int = Field(description="Guarded samples that passed.")
    suspected: int = Field(description="Passes with evidence against the agent.")
    suspected_rate: float = Field(description="suspected / passes (nan: not measured).")
    suspected_low: float = Field(description="Wilson 95% interval, low end.")
    suspected_high: float = Field(description="Wilson 95% interval, high end.")
    recorded: int = Field(
        description="Guarded samples that record the simulator's side (graded since it was)."
    )
    off_contract: int = Field(
        description="Recorded samples whose simulator answered a success out of its tool's "
        "contract that the agent did not ask for."
    )
    off_contract_passed: int = Field(description="Of those, samples that passed.")
    off_contract_failed: int = Field(description="Of those, samples that failed.")
    off_contract_rate: float = Field(description="off_contract / recorded (nan: not measured).")
    off_contract_low: float = Field(description="Wilson 95% interval, low end.")
    off_contract_high: float = Field(description="Wilson 95% interval, high end.")


def row_guard(rows: Sequence[SampleRow], env_mode: str) -> list[GuardQuality]:
    """The exploit guard's findings of each setup in ``env_mode`` (module doc), by setup."""
    out = []
    chosen = [r for r in rows if r.env_mode == env_mode and r.passed is not None]
    for (agent, simulator), members in group(chosen, setup_of).items():
        guarded = [r for r in members if r.exploit_suspected is not None]
        passes = [r for r in guarded if r.passed]
        suspected = sum(bool(r.exploit_suspected) for r in passes)
        recorded = [r for r in guarded if r.simulator_off_contract is not None]
        off = [r for r in recorded if r.simulator_off_contract]
        suspect_interval = wilson_interval(suspected, len(passes))
        off_interval = wilson_interval(len(off), len(recorded))
        out.append(
            GuardQuality(
                agent=agent,
                simulator=simulator,
                env_mode=env_mode,
                scored=len(members),
                guarded=len(guarded),
                passes=len(passes),
                suspected=suspected,
                suspected_rate=suspect_interval.estimate,
                suspected_low=suspect_interval.low,
                suspected_high=suspect_interval.high,
                recorded=len(recorded),
                off_contract=len(off),
                off_contract_passed=sum(bool(r.passed) for r in off),
                off_contract_failed=sum(not r.passed for r in off),
                off_contract_rate=off_interval.estimate,
                off_contract_low=off_interval.low,
                off_contract_high=off_interval.high,
            )
        )
    return out
