"""Completion rates of groups of samples: passed over counted, errors apart."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from occubench.analysis._stats import wilson_interval
from occubench.results import SampleRow

NAN_AS_STRING = ConfigDict(ser_json_inf_nan="strings")
"""Undefined numbers are ``nan``; in JSON they are written "NaN" (and read back)."""


class RateRow(BaseModel):
    """Completion rate of one group of samples (an undefined rate is written "NaN")."""

    model_config = NAN_AS_STRING

    group: str
    samples: int = Field(description="Samples in the group, errored ones included.")
    scored: int = Field(
        description="Samples counted: with a verdict, or errored under a protocol that "
        "counts errors as failed tasks."
    )
    passed: int
    errors: int = Field(description="Infrastructure errors, left out of the rate.")
    agent_errors: int = Field(
        default=0,
        exclude_if=lambda n: n == 0,
        description="Scored samples that ended on an agent API error and were graded as "
        "they stood (the paper protocol's rule); written only when there are some, so "
        "records made before it read the same.",
    )
    rate: float = Field(description="passed / scored (nan when nothing was counted).")
    low: float = Field(description="Wilson 95% interval, low end.")
    high: float = Field(description="Wilson 95% interval, high end.")


def rate_row(group: str, rows: Sequence[SampleRow]) -> RateRow:
    """The completion rate of ``rows``.

    Errors are counted apart (``errors``), and also as failed tasks in runs whose
    protocol counts them so (the paper: CR over all tasks).
    """
    scored = [r for r in rows if r.counted]
    passed = sum(bool(r.passed) for r in scored)
    interval = wilson_interval(passed, len(scored))
    return RateRow(
        group=group,
        samples=len(rows),
        scored=len(scored),
        passed=passed,
        errors=sum(r.error is not None for r in rows),
        agent_errors=sum(r.agent_error is not None for r in scored),
        rate=interval.estimate,
        low=interval.low,
        high=interval.high,
    )


def rates_by(rows: Sequence[SampleRow], key: Callable[[SampleRow], str]) -> list[RateRow]:
    """One rate row per value of ``key`` (sorted by name)."""
    groups: dict[str, list[SampleRow]] = {}
    for row in rows:
        groups.setdefault(key(row), []).append(row)
    return [rate_row(name, groups[name]) for name in sorted(groups)]
