"""The simulated user's errors in a set of runs, counted apart from the agent's failures.

A user error is a user reply that still failed a check after its re-ask
(``SampleRow.user_errors``). It is the user model's mistake, never the agent's: the
completion rate is shown over every scored sample with a user and over those whose user
made no error, so that a gap between the two says how much the user, not the agent,
moved the number. A setup whose samples have no user reads "not measured" (None).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from occubench.analysis._metrics import MetricRow, group, setup_of
from occubench.analysis._stats import wilson_interval
from occubench.results import SampleRow


class UserErrors(MetricRow):
    """The simulated user's errors of one setup in one mode (None: no user there)."""

    agent: str = Field(description="Agent model.")
    simulator: str = Field(description="Simulator model.")
    user_model: str | None = Field(description="The user model(s) (None: no user).")
    env_mode: str = Field(description="E0..E3.")
    samples: int = Field(description="Samples that ended without an infrastructure error.")
    with_user: int = Field(description="Of those, samples whose task has a user.")
    user_turns: int | None = Field(description="The users' replies (None: no user).")
    user_errors: int | None = Field(
        description="Replies kept with a failed check: user errors (None: no user)."
    )
    samples_with_user_errors: int | None = Field(
        description="Samples with at least one user error (None: no user)."
    )
    user_ended: int | None = Field(
        description="Samples whose user ended the conversation (None: no user)."
    )
    rate: float | None = Field(description="CR over the scored samples with a user.")
    clean_rate: float | None = Field(
        description="CR over the scored samples with a user and no user error (nan: none left)."
    )


def user_errors(rows: Sequence[SampleRow]) -> list[UserErrors]:
    """The user errors per setup and env mode; empty when no sample has a user."""
    done = [r for r in rows if r.error is None]
    if not any(r.user_turns is not None for r in done):
        return []
    out = []
    for (agent, simulator, mode), members in group(
        done, lambda r: (*setup_of(r), r.env_mode)
    ).items():
        talked = [r for r in members if r.user_turns is not None]
        scored = [r for r in talked if r.passed is not None]
        clean = [r for r in scored if not r.user_errors]
        measured = bool(talked)
        models = sorted({r.user_model for r in talked if r.user_model})
        out.append(
            UserErrors(
                agent=agent,
                simulator=simulator,
                user_model=", ".join(models) or None,
                env_mode=mode,
                samples=len(members),
                with_user=len(talked),
                user_turns=sum(r.user_turns or 0 for r in talked) if measured else None,
                user_errors=sum(r.user_errors or 0 for r in talked) if measured else None,
                samples_with_user_errors=sum(1 for r in talked if r.user_errors)
                if measured
                else None,
                user_ended=sum(1 for r in talked if r.user_ended) if measured else None,
                rate=_rate(scored) if measured else None,
                clean_rate=_rate(clean) if measured else None,
            )
        )
    return out


def _rate(rows: Sequence[SampleRow]) -> float:
    return wilson_interval(sum(bool(r.passed) for r in rows), len(rows)).estimate
