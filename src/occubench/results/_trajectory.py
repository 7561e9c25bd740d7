"""Trajectories read back from the logs (only the samples asked for), for reports and reviews.

The text is kept as the models wrote it (cut at a limit); whoever renders it escapes it.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from inspect_ai.log import EvalSample
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool
from inspect_ai.scorer import CORRECT
from pydantic import BaseModel, Field

from occubench.agent import episode_in
from occubench.defaults import DEFAULT_REPORT_TEXT_LIMIT
from occubench.grading import SCORER_NAME, Grade
from occubench.results._row import Harness, SampleRow
from occubench.results._store import log_samples, read_log_samples
from occubench.simulator import SimStep

TRAJECTORY_FIELDS = ("id", "epoch", "input", "target", "messages", "scores", "metadata", "store")
"""Sample fields a trajectory is made of (the rest of a logged sample is not validated)."""


class Turn(BaseModel):
    """One message of a trajectory."""

    role: str = Field(description="system, user, assistant or tool.")
    text: str = Field(description="The message text (cut at the limit).")
    calls: list[str] = Field(default_factory=list, description="Tool calls: name(arguments).")
    tool: str | None = Field(default=None, description="For a tool message: the tool called.")
    error: str | None = Field(default=None, description="For a tool message: the error shown.")
    source: str | None = Field(
        default=None,
        description="For a tool message: where its observation came from (world, simulator, "
        "live; None: a call that failed before the simulator, or not known).",
    )
    cut: bool = Field(default=False, description="Whether some text was cut off.")


class Trajectory(BaseModel):
    """What one sample did and how it was graded."""

    turns: list[Turn] = Field(default_factory=list)
    rubric: str = Field(default="", description="The task's verification plan (the target).")
    answer: str = Field(default="", description="The final answer the judge saw.")
    explanation: str = Field(default="", description="The scorer's summary.")
    votes: list[dict[str, Any]] = Field(default_factory=list, description="Judge votes.")
    checks: list[dict[str, Any]] = Field(default_factory=list, description="Check results.")
    read: bool = Field(
        default=False,
        description="Read from the log (False: a row the page does not embed, left empty).",
    )


def _cut(text: str, limit: int) -> tuple[str, bool]:
    return (text, False) if len(text) <= limit else (text[:limit], True)


def trajectory(sample: EvalSample, limit: int = DEFAULT_REPORT_TEXT_LIMIT) -> Trajectory:
    """The messages and grading of one logged sample."""
    turns = []
    for message in sample.messages:
        text, cut = _cut(message.text, limit)
        turn = Turn(role=message.role, text=text, cut=cut)
        if isinstance(message, ChatMessageAssistant):
            turn.calls = [
                _cut(f"{c.function}({json.dumps(c.arguments, ensure_ascii=False)})", limit)[0]
                for c in message.tool_calls or []
            ]
        elif isinstance(message, ChatMessageTool):
            turn.tool = message.function
            turn.error = message.error.message if message.error else None
        turns.append(turn)
    _mark_sources(turns, episode_in(sample.store).steps)
    score = (sample.scores or {}).get(SCORER_NAME)
    read = Grade.read(score.metadata, passed=score.value == CORRECT) if score is not None else None
    grade = read if isinstance(read, Grade) else None  # one that cannot be read: no votes
    target = sample.target if isinstance(sample.target, str) else "\n".join(sample.target)
    return Trajectory(
        read=True,
        turns=turns,
        rubric=_cut(target, limit)[0],
        answer=_cut(str(score.answer or ""), limit)[0] if score is not None else "",
        explanation=(score.explanation or "") if score is not None else "",
        votes=[
            {"is_correct": v.is_correct, "feedback": _cut(v.feedback, limit)[0]}
            for v in (grade.votes if grade is not None else None) or []
        ],
        checks=[c.model_dump() for c in (grade.checks if grade is not None else None) or []],
    )


def _mark_sources(turns: list[Turn], steps: list[SimStep]) -> None:
    """Give each answered tool turn its step's source (``SimStep.source``).

    The calls that reached the tool layer are the tool turns without an error, in order;
    when their count is not the steps' (an agent that made its own tool messages), the
    sources are left unknown rather than guessed.
    """
    answered = [t for t in turns if t.role == "tool" and t.error is None]
    if len(answered) != len(steps):
        return
    for turn, step in zip(answered, steps, strict=True):
        turn.source = step.source.value if step.source and not step.failed else None


def read_trajectories(
    rows: Sequence[SampleRow],
    limit: int = DEFAULT_REPORT_TEXT_LIMIT,
    only: Collection[int] | None = None,
) -> list[Trajectory]:
    """The trajectory of every row (or of the rows at positions ``only``), in row order.

    A row left out gets an empty trajectory, as does a row of the release's harness
    (its ``results.jsonl`` holds the trajectory as text, not as messages). Only the rows'
    samples are read: from a local ``.eval`` log, just their members of the zip, without
    their events (``results._store.read_log_samples``); from another log, Inspect's
    reader streams its samples once.
    """
    wanted: dict[str, dict[tuple[str, int], int]] = {}
    for i, row in enumerate(rows):
        if row.harness is Harness.RELEASE:  # its text is the release's, not a transcript
            continue
        if only is None or i in only:
            wanted.setdefault(row.log, {})[(str(row.task_id), row.epoch)] = i
    found: list[Trajectory] = [Trajectory() for _ in rows]
    for log, positions in wanted.items():
        keys = [(row.task_id, row.epoch) for row in (rows[i] for i in positions.values())]
        documents = read_log_samples(log, keys)
        if documents is not None:
            samples: Iterable[EvalSample] = (
                EvalSample.model_validate({k: doc[k] for k in TRAJECTORY_FIELDS if k in doc})
                for doc in documents.values()
            )
        else:
            samples = log_samples(log)
        for sample in samples:
            index = positions.get((str(sample.id), sample.epoch))
            if index is not None:
                found[index] = trajectory(sample, limit)
    return found
