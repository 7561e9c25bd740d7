"""Rates behind the paper's ablation figures.

Fault count and duration, reasoning effort, industry x difficulty, and model
generations (CR over release date).

Each is a completion rate with its Wilson 95% interval, like every rate of the report,
keyed by what the ablation varies. Errors are counted apart, as everywhere.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence

from pydantic import Field

from occubench.analysis._metrics import group, setup_of
from occubench.analysis._rates import NAN_AS_STRING, RateRow, rate_row
from occubench.analysis._stats import BASELINE_MODE
from occubench.results import SampleRow

EFFORT_ORDER = ("none", "minimal", "low", "medium", "high", "xhigh")
"""Reasoning efforts from least to most (Inspect's levels); others sort after, by name."""


def effort_rank(effort: str) -> tuple[int, str]:
    """Sort key of a reasoning effort: Inspect's order, unknown levels last."""
    return (EFFORT_ORDER.index(effort) if effort in EFFORT_ORDER else len(EFFORT_ORDER), effort)


def base_model(row: SampleRow) -> str:
    """The agent model without the options a sweep label appends (``model[k=v,...]``)."""
    name = row.agent_model
    if row.reasoning_effort is not None and name.endswith("]") and "[" in name:
        head, _, options = name[:-1].rpartition("[")
        if f"reasoning_effort={row.reasoning_effort}" in options.split(","):
            return head
    return name


class FaultRate(RateRow):
    """CR of one setup in one perturbed mode at one fault count and fault duration."""

    model_config = NAN_AS_STRING

    agent: str = Field(description="Agent (model, with its reasoning effort when set).")
    simulator: str = Field(description="Simulator model.")
    env_mode: str = Field(description="E1..E3 (or a mode beyond them).")
    fault_count: int = Field(description="Fault events per task (fc).")
    fault_duration: int = Field(description="Consecutive calls each fault lasts (fd).")


def fault_rates(rows: Sequence[SampleRow]) -> list[FaultRate]:
    """CR per setup, perturbed mode, fault count and fault duration (seeds pooled)."""
    perturbed = [r for r in rows if r.env_mode != BASELINE_MODE]
    return [
        FaultRate(
            **rate_row(f"fc={fc} fd={fd}", members).model_dump(),
            agent=agent,
            simulator=simulator,
            env_mode=mode,
            fault_count=fc,
            fault_duration=fd,
        )
        for (agent, simulator, mode, fc, fd), members in group(
            perturbed, lambda r: (*setup_of(r), r.env_mode, r.fault_count, r.fault_duration)
        ).items()
    ]


class EffortRate(RateRow):
    """CR of one agent model at one reasoning effort, in one simulator and mode."""

    model_config = NAN_AS_STRING

    agent: str = Field(description="Agent model (without its effort).")
    simulator: str = Field(description="Simulator model.")
    env_mode: str = Field(description="E0..E3.")
    reasoning_effort: str = Field(description="Inspect GenerateConfig.reasoning_effort.")


def effort_rates(rows: Sequence[SampleRow]) -> list[EffortRate]:
    """CR per agent model, simulator, mode and reasoning effort (runs with an effort set)."""
    with_effort = [r for r in rows if r.reasoning_effort is not None]
    out = [
        EffortRate(
            **rate_row(effort, members).model_dump(),
            agent=agent,
            simulator=simulator,
            env_mode=mode,
            reasoning_effort=effort,
        )
        for (agent, simulator, mode, effort), members in group(
            with_effort,
            lambda r: (
                base_model(r),
                r.simulator_model or "",
                r.env_mode,
                r.reasoning_effort or "",
            ),
        ).items()
    ]
    out.sort(key=lambda e: (e.agent, e.simulator, e.env_mode, effort_rank(e.reasoning_effort)))
    return out


class GridRate(RateRow):
    """CR of one setup in one mode for one industry at one difficulty level."""

    model_config = NAN_AS_STRING

    agent: str = Field(description="Agent (model, with its reasoning effort when set).")
    simulator: str = Field(description="Simulator model.")
    env_mode: str = Field(description="E0..E3.")
    industry: str = Field(description="Industry of the tasks.")
    difficulty: int = Field(description="Difficulty level of the tasks.")


def grid_rates(rows: Sequence[SampleRow]) -> list[GridRate]:
    """CR per setup, mode, industry and difficulty."""
    return [
        GridRate(
            **rate_row(f"{industry} / {level}", members).model_dump(),
            agent=agent,
            simulator=simulator,
            env_mode=mode,
            industry=industry,
            difficulty=level,
        )
        for (agent, simulator, mode, industry, level), members in group(
            rows, lambda r: (*setup_of(r), r.env_mode, r.industry, r.difficulty)
        ).items()
    ]


class GenerationPoint(RateRow):
    """CR of one agent model in one mode, placed at the model's release date."""

    model_config = NAN_AS_STRING

    agent: str = Field(description="Agent model (as named in the price file).")
    simulator: str = Field(description="Simulator model.")
    env_mode: str = Field(description="E0..E3.")
    release_date: dt.date = Field(description="Release date from the price/model file.")


def generations(
    rows: Sequence[SampleRow], release_dates: Mapping[str, dt.date]
) -> list[GenerationPoint]:
    """CR per agent model with a release date, per simulator and mode, oldest first."""
    dated = [r for r in rows if base_model(r) in release_dates]
    out = [
        GenerationPoint(
            **rate_row(agent, members).model_dump(),
            agent=agent,
            simulator=simulator,
            env_mode=mode,
            release_date=release_dates[agent],
        )
        for (agent, simulator, mode), members in group(
            dated, lambda r: (base_model(r), r.simulator_model or "", r.env_mode)
        ).items()
    ]
    out.sort(key=lambda p: (p.simulator, p.env_mode, p.release_date, p.agent))
    return out
