"""Verdicts against a reference simulator: does a simulator pass and fail what the real one does?

The *reference* is the environment taken as real: the twin (``occubench/twin``, the
environment as code) by default, or any simulator named. The same agents run the same
tasks once under the reference and once under each other simulator. A sample under a
simulator is paired with the sample under the reference of the same agent, protocol, env
mode, fault setting, environment, task and epoch, both scored (repeated runs of one key are
paired in the order of their run ids; a sample without a partner is counted as unpaired
and left out). Per agent, simulator and env mode (and fault setting):

- **CR** under the reference and under the simulator, over the paired samples only, so
  that both are rates of the same tasks and epochs;
- **agreement**: the share of pairs with the same verdict (with the counts);
- **gap**: CR under the simulator - CR under the reference, the sim-to-real gap
  (negative: the simulator is harder than the real environment), with a 95% percentile
  bootstrap interval over *tasks*: a task is resampled with all its epochs
  (``analysis.bootstrap_interval``, ``DEFAULT_BOOTSTRAP_RESAMPLES`` resamples, seed
  ``DEFAULT_BOOTSTRAP_SEED``), so that epochs of one task, which are not independent,
  do not narrow it; with one epoch it is the paired bootstrap over tasks;
- **flips**: the pairs with unlike verdicts, each with its cause, the first place the two
  trajectories (``SampleRow.trajectory``: action, answer, action, ... final answer) differ.
  Up to there the agent saw the same thing in both, so a deterministic agent made the same
  calls; the first observation that differs is what the simulator did to the verdict:

  - ``observation``: the same call answered differently at that step (the simulator's
    doing), with the tool and a preview of both answers;
  - ``call``: the agent's calls differ first (another tool or arguments, or an answer
    instead of a call), everything before alike: the agent's own variation;
  - ``answer``: the same steps, another final answer;
  - ``none``: the same trajectory graded differently (the verifier);
  - ``unknown``: a trajectory was not recorded, or one stops where the other goes on.

The previews are read from the two samples' episodes in their logs (only for the flips),
each a window of the answer's (or call's) JSON text from a little before the first
character the two differ at.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from enum import Enum
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from occubench.agent import episode_in
from occubench.analysis import (
    BASELINE_MODE,
    MetricRow,
    bootstrap_interval,
    group,
    setup_of,
)
from occubench.defaults import DEFAULT_BOOTSTRAP_RESAMPLES, DEFAULT_BOOTSTRAP_SEED
from occubench.errors import UsageError
from occubench.results import LogReadError, SampleRow, log_samples
from occubench.simulator import SimStep

_NOT_READ = {"events", "messages", "attachments"}
"""Sample fields the previews do not need (the episode is in the store)."""
PREVIEW_CHARS = 48
"""The longest preview of an answer or a call at a flip's first difference."""
PREVIEW_BEFORE = 16
"""Characters a preview shows before the first one the two sides differ at."""
ANSWERED_INSTEAD = "(no call: the final answer)"
"""A flip's side where the agent answered instead of calling."""


class DifferenceKind(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """Where two trajectories of a flipped task first differ (module doc)."""

    OBSERVATION = "observation"
    CALL = "call"
    ANSWER = "answer"
    NONE = "none"
    UNKNOWN = "unknown"


class FirstDifference(BaseModel):
    """The first place the reference's trajectory and the simulator's differ."""

    kind: DifferenceKind
    step: int | None = Field(
        default=None, description="The step (1-based) it happens at (None: not at a step)."
    )
    tool: str | None = Field(
        default=None, description="The tool called at that step under the reference."
    )
    reference: str = Field(
        default="",
        description="Under the reference: the answer (observation) or the call at that step "
        "('' when not read).",
    )
    simulator: str = Field(default="", description="The same under the simulator.")


class VerdictFlip(BaseModel):
    """A task and epoch passed under one of the two and failed under the other."""

    env_name: str
    task_id: str
    epoch: int
    reference_passed: bool
    simulator_passed: bool
    cause: FirstDifference


class VerdictRow(MetricRow):
    """One agent under one simulator, against the reference, in one env mode (module doc)."""

    agent: str
    simulator: str
    reference: str
    env_mode: str
    faults: str = Field(default="", description="Fault setting of E1-E3 ('' under E0).")
    tasks: int = Field(description="Tasks with a pair.")
    pairs: int = Field(description="(task, epoch) pairs scored under both.")
    unpaired: int = Field(description="Scored samples under one of the two without a partner.")
    agreeing: int = Field(description="Pairs with the same verdict.")
    agreement: float = Field(description="agreeing / pairs (nan without a pair).")
    reference_rate: float = Field(description="CR under the reference, over the pairs.")
    simulator_rate: float = Field(description="CR under the simulator, over the pairs.")
    gap: float = Field(description="simulator_rate - reference_rate.")
    low: float = Field(description="95% bootstrap interval of the gap (over tasks), low end.")
    high: float = Field(description="95% bootstrap interval of the gap, high end.")
    flips: list[VerdictFlip] = Field(default_factory=list, description="Pairs unlike, by task.")


Key = tuple[str, str, str, str, str, str]
"""agent, env mode, fault setting, environment, task id, protocol."""


def _faults(row: SampleRow) -> str:
    """The fault setting a pair must share (the plan follows from it); '' under E0."""
    if row.env_mode == BASELINE_MODE:
        return ""
    return f"fc={row.fault_count} fd={row.fault_duration} seed={row.seed} {row.fault_engine}"


def _keyed(rows: Sequence[SampleRow]) -> dict[tuple[Key, int, int], SampleRow]:
    """Scored rows by ``Key``, epoch and occurrence (run order): what a pair shares."""
    out: dict[tuple[Key, int, int], SampleRow] = {}
    seen: dict[tuple[Key, int], int] = {}
    for row in sorted(rows, key=lambda r: r.run_id):
        if row.passed is None:
            continue
        key = (
            setup_of(row)[0],
            row.env_mode,
            _faults(row),
            row.env_name,
            str(row.task_id),
            row.protocol.value,
        )
        occurrence = seen.get((key, row.epoch), 0)
        seen[(key, row.epoch)] = occurrence + 1
        out[(key, row.epoch, occurrence)] = row
    return out


def first_unlike(a: Sequence[str], b: Sequence[str]) -> int | None:
    """The position of the first entry two trajectories differ at (None: none, or a prefix)."""
    for position, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return position
    return None


def locate(a: Sequence[str], b: Sequence[str]) -> FirstDifference:
    """Where two trajectory digests (``SampleRow.trajectory``) first differ, without previews.

    Each step is two entries (``a:`` the call, ``o:`` its answer); ``f:`` closes a graded one.
    """
    if not a or not b:
        return FirstDifference(kind=DifferenceKind.UNKNOWN)
    position = first_unlike(a, b)
    if position is None:
        same = len(a) == len(b)
        return FirstDifference(kind=DifferenceKind.NONE if same else DifferenceKind.UNKNOWN)
    x, y = a[position], b[position]
    if x.startswith("f:") and y.startswith("f:"):
        return FirstDifference(kind=DifferenceKind.ANSWER)
    both_observed = x.startswith("o:") and y.startswith("o:")
    kind = DifferenceKind.OBSERVATION if both_observed else DifferenceKind.CALL
    return FirstDifference(kind=kind, step=position // 2 + 1)


class _Episodes:
    """The steps of logged samples, read once per log (only logs with a flip are read)."""

    def __init__(self) -> None:
        self._logs: dict[str, dict[tuple[str, int], list[SimStep]]] = {}

    def steps(self, row: SampleRow) -> list[SimStep] | None:
        if row.log not in self._logs:
            found: dict[tuple[str, int], list[SimStep]] = {}
            try:
                for sample in log_samples(row.log, exclude_fields=_NOT_READ):
                    found[(str(sample.id), sample.epoch)] = episode_in(sample.store).steps
            except LogReadError:
                pass  # a log gone since it was read: the flip keeps its step, without previews
            self._logs[row.log] = found
        return self._logs[row.log].get((str(row.task_id), row.epoch))


def _answered(step: SimStep) -> str:
    """A step's answer as JSON text (an error marked as such)."""
    answered: Any = step.observation if step.observation is not None else step.text
    return ("error: " if step.failed else "") + json.dumps(answered, ensure_ascii=False)


def _call(step: SimStep) -> str:
    return f"{step.tool}({json.dumps(step.arguments, ensure_ascii=False)})"


def around(a: str, b: str) -> tuple[str, str]:
    """Both texts cut to a window from a little before the first character they differ at.

    Each is at most ``PREVIEW_CHARS`` long (``...`` marks what was cut), so that two long
    answers that differ near their end still show where.
    """
    start = len(os.path.commonprefix([a, b]))
    start = max(0, start - PREVIEW_BEFORE)

    def cut(text: str) -> str:
        head = "..." if start else ""
        body = text[start:]
        if len(head) + len(body) > PREVIEW_CHARS:
            body = body[: PREVIEW_CHARS - len(head) - 3] + "..."
        return head + body

    return cut(a), cut(b)


def _previewed(
    cause: FirstDifference, reference: list[SimStep] | None, simulator: list[SimStep] | None
) -> FirstDifference:
    """``cause`` with the tool and both sides' previews at its step, where they were read.

    A side read but without that step answered instead of calling (``ANSWERED_INSTEAD``).
    """
    if cause.step is None or reference is None or simulator is None:
        return cause
    index = cause.step - 1
    ours = reference[index] if index < len(reference) else None
    theirs = simulator[index] if index < len(simulator) else None
    show = _answered if cause.kind is DifferenceKind.OBSERVATION else _call
    a, b = around(
        show(ours) if ours is not None else ANSWERED_INSTEAD,
        show(theirs) if theirs is not None else ANSWERED_INSTEAD,
    )
    return cause.model_copy(
        update={"tool": ours.tool if ours is not None else None, "reference": a, "simulator": b}
    )


def _gap_interval(task_differences: list[tuple[float, int]]) -> tuple[float, float]:
    """95% bootstrap interval of (sum of differences) / (pairs), resampling tasks."""
    data = np.array(task_differences, dtype=float)
    interval = bootstrap_interval(
        lambda d: float(d[:, 0].sum() / d[:, 1].sum()),
        data,
        n_resamples=DEFAULT_BOOTSTRAP_RESAMPLES,
        seed=DEFAULT_BOOTSTRAP_SEED,
    )
    return interval.low, interval.high


def _row(
    agent: str,
    simulator: str,
    reference: str,
    key: tuple[str, str],
    pairs: list[tuple[SampleRow, SampleRow]],
    unpaired: int,
    episodes: _Episodes,
) -> VerdictRow:
    mode, faults = key
    by_task: dict[tuple[str, str], list[float]] = {}
    flips = []
    for ours, theirs in pairs:
        assert ours.passed is not None and theirs.passed is not None  # scored, by _keyed
        task = (ours.env_name, str(ours.task_id))
        by_task.setdefault(task, []).append(float(theirs.passed) - float(ours.passed))
        if ours.passed != theirs.passed:
            cause = locate(ours.trajectory, theirs.trajectory)
            if cause.step is not None:
                cause = _previewed(cause, episodes.steps(ours), episodes.steps(theirs))
            flips.append(
                VerdictFlip(
                    env_name=ours.env_name,
                    task_id=str(ours.task_id),
                    epoch=ours.epoch,
                    reference_passed=ours.passed,
                    simulator_passed=theirs.passed,
                    cause=cause,
                )
            )
    n = len(pairs)
    ours_rate = sum(bool(o.passed) for o, _ in pairs) / n if n else math.nan
    theirs_rate = sum(bool(t.passed) for _, t in pairs) / n if n else math.nan
    low, high = (
        _gap_interval([(sum(d), len(d)) for d in by_task.values()]) if n else (math.nan, math.nan)
    )
    return VerdictRow(
        agent=agent,
        simulator=simulator,
        reference=reference,
        env_mode=mode,
        faults=faults,
        tasks=len(by_task),
        pairs=n,
        unpaired=unpaired,
        agreeing=n - len(flips),
        agreement=(n - len(flips)) / n if n else math.nan,
        reference_rate=ours_rate,
        simulator_rate=theirs_rate,
        gap=theirs_rate - ours_rate,
        low=low,
        high=high,
        flips=sorted(flips, key=lambda f: (f.task_id, f.env_name, f.epoch)),
    )


def against_reference(rows: Sequence[SampleRow], reference: str) -> list[VerdictRow]:
    """Each agent under each other simulator, against ``reference`` (module doc).

    Rows are by env mode, fault setting, agent and simulator; an agent that did not run
    under the reference (or under a simulator) in a mode has no row there.

    Raises:
        UsageError: when no run of ``rows`` is under ``reference``.
    """
    simulators = sorted({r.simulator_model or "" for r in rows})
    if reference not in simulators:
        found = ", ".join(simulators) or "none"
        raise UsageError(
            f"no run under the reference simulator {reference} in the logs (they hold runs "
            f"under: {found}); name one of those with --reference"
        )
    by_simulator = {
        sim: _keyed([r for r in rows if (r.simulator_model or "") == sim]) for sim in simulators
    }
    ours = by_simulator[reference]
    episodes = _Episodes()
    out = []
    for simulator in simulators:
        if simulator == reference:
            continue
        theirs = by_simulator[simulator]
        agents = sorted({k[0][0] for k in theirs} & {k[0][0] for k in ours})
        for agent in agents:
            settings = group(
                [k for k in {**ours, **theirs} if k[0][0] == agent], lambda k: k[0][1:3]
            )
            for (mode, faults), keys in settings.items():
                paired = [(ours[k], theirs[k]) for k in keys if k in ours and k in theirs]
                if not paired:
                    continue
                unpaired = sum(1 for k in keys if (k in ours) != (k in theirs))
                out.append(
                    _row(agent, simulator, reference, (mode, faults), paired, unpaired, episodes)
                )
    return sorted(out, key=lambda r: (r.env_mode, r.faults, r.agent, r.simulator))
