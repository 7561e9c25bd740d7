"""What the online simulator checks say about a set of runs.

Only samples of runs with the checks on count (``SampleRow.sim_checked`` is set), and only
samples that did not end in an infrastructure error. A sample is *simulator-suspect* when
its trajectory kept an observation that failed a check (after the re-ask): its verdict
may rest on an environment that contradicted its own configuration.

- ``suspect_impact``: per setup and env mode, the completion rate over all checked samples
  and over the samples that are not suspect (both with Wilson 95% intervals). A large gap
  says the simulator, not the agent, moved the number.
- ``invalid_rates``: the share of suspect samples (the simulator-invalid rate) per
  simulator model, and per simulator and environment, and per simulator and scenario, with
  the failed observations of each check kind (first answers, before the re-ask).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import Field

from occubench.analysis._dimensions import ALL
from occubench.analysis._metrics import MetricRow, group, setup_of
from occubench.analysis._stats import wilson_interval
from occubench.results import SampleRow

VALIDITY_DIMENSIONS: dict[str, Callable[[SampleRow], str]] = {
    "simulator": lambda r: ALL,
    "env": lambda r: r.env_name,
    "scenario": lambda r: r.scenario,
}
"""What the simulator-invalid rate is broken down by (within each simulator model)."""


def checked_rows(rows: Sequence[SampleRow]) -> list[SampleRow]:
    """Samples whose observations were checked online and that ended without an error."""
    return [r for r in rows if r.sim_checked is not None and r.error is None]


class SuspectImpact(MetricRow):
    """CR of one setup in one mode, with and without its simulator-suspect samples."""

    agent: str = Field(description="Agent model.")
    simulator: str = Field(description="Simulator model.")
    env_mode: str = Field(description="E0..E3.")
    scored: int = Field(description="Checked samples with a verdict.")
    suspect: int = Field(description="Of those, simulator-suspect samples.")
    rate: float = Field(description="CR over every checked sample.")
    low: float = Field(description="Wilson 95% interval of rate, low end.")
    high: float = Field(description="Wilson 95% interval of rate, high end.")
    clean_rate: float = Field(description="CR without the suspect samples (nan if none left).")
    clean_low: float = Field(description="Wilson 95% interval of clean_rate, low end.")
    clean_high: float = Field(description="Wilson 95% interval of clean_rate, high end.")


def suspect_impact(rows: Sequence[SampleRow]) -> list[SuspectImpact]:
    """CR with and without simulator-suspect samples, per setup and env mode."""
    out = []
    scored = [r for r in checked_rows(rows) if r.passed is not None]
    for (agent, simulator, mode), members in group(
        scored, lambda r: (*setup_of(r), r.env_mode)
    ).items():
        clean = [r for r in members if not r.simulator_suspect]
        every = wilson_interval(sum(bool(r.passed) for r in members), len(members))
        kept = wilson_interval(sum(bool(r.passed) for r in clean), len(clean))
        out.append(
            SuspectImpact(
                agent=agent,
                simulator=simulator,
                env_mode=mode,
                scored=len(members),
                suspect=len(members) - len(clean),
                rate=every.estimate,
                low=every.low,
                high=every.high,
                clean_rate=kept.estimate,
                clean_low=kept.low,
                clean_high=kept.high,
            )
        )
    return out


class InvalidRate(MetricRow):
    """The simulator-invalid rate of one simulator over one group of samples."""

    simulator: str = Field(description="Simulator model.")
    dimension: str = Field(description="simulator (all its samples), env or scenario.")
    group: str = Field(description="The environment or scenario ('all' for the simulator).")
    samples: int = Field(description="Checked samples.")
    observations: int = Field(description="Observations checked.")
    suspect: int = Field(description="Simulator-suspect samples.")
    rate: float = Field(description="suspect / samples.")
    low: float = Field(description="Wilson 95% interval, low end.")
    high: float = Field(description="Wilson 95% interval, high end.")
    failures: dict[str, int] = Field(
        description="Observations whose first answer failed each kind of check."
    )


def _by(key: Callable[[SampleRow], str]) -> Callable[[SampleRow], tuple[str, str]]:
    return lambda r: (r.simulator_model or "", key(r))


def invalid_rates(rows: Sequence[SampleRow]) -> list[InvalidRate]:
    """Simulator-invalid rates per simulator, and per environment and scenario within it."""
    out = []
    checked = checked_rows(rows)
    for dimension, key in VALIDITY_DIMENSIONS.items():
        for (simulator, name), members in group(checked, _by(key)).items():
            suspect = sum(bool(r.simulator_suspect) for r in members)
            interval = wilson_interval(suspect, len(members))
            failures: dict[str, int] = {}
            for row in members:
                for kind, count in row.sim_check_failures.items():
                    failures[kind] = failures.get(kind, 0) + count
            out.append(
                InvalidRate(
                    simulator=simulator,
                    dimension=dimension,
                    group=name,
                    samples=len(members),
                    observations=sum(r.sim_checked or 0 for r in members),
                    suspect=suspect,
                    rate=interval.estimate,
                    low=interval.low,
                    high=interval.high,
                    failures=dict(sorted(failures.items())),
                )
            )
    return out
