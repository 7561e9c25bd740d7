"""A simulator measured against twins: the record of each step compared, and its summary.

``occubench audit --twin`` (room ``fidelity``) writes a ``TwinFidelity`` per simulator;
report, leaderboard and bundle rows show its summary beside each score, and ``verify``
recomputes the summary from the steps. The record lives here, beside the twins, so that
every reader shares one shape.

Per step, three matches (each None where it was not measured):

- **outcome**: the simulator's answer is a success where the twin's is, an error where
  the twin's is.
- **determined fields**: of the twin observation's determined leaves, how many the
  simulator gave with the same value (numbers within the stated relative tolerance);
  ``missing`` leaves it left out, ``extra`` leaves it added that the twin has not.
- **state** (explicit state mode only): of the state leaves either has after the step
  (the twin's, and any the simulator's patched state adds), how many both hold with the
  same value.

A step the simulator gave no usable answer to (a provider error, an unparseable reply
after the re-asks) keeps its ``failure`` and counts in no share and in no drift: an
infrastructure failure is not a mismatch. The compare rule itself is ``_compare``'s.

``fields_changed`` is the number of state leaves the twin's step changed, the axis
EnvSimBench reports by (a step that changes nothing is easy; five fields, hard).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from occubench.defaults import (
    DEFAULT_MAX_JSON_DEPTH,
    DEFAULT_MAX_TWIN_FIDELITY_BYTES,
    DEFAULT_MAX_TWIN_TRAJECTORIES_BYTES,
)
from occubench.errors import UsageError
from occubench.files import write_fresh
from occubench.text import nests_deeper, validation_line

TWIN_FIDELITY_VERSION = 1
"""The version of the ``TwinFidelity`` format."""


class Feeding(StrEnum):
    """Whose history the simulator saw before each step."""

    TWIN = "twin"
    """Fed the twin's answers: one wrong answer does not cascade."""
    OWN = "own"
    """Free-running: its own earlier answers, so drift shows as a first wrong step."""


class TwinCall(BaseModel):
    """One call of a trajectory replayed against the twin."""

    model_config = ConfigDict(extra="forbid")

    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class TwinTrajectory(BaseModel):
    """Calls in order in one environment, replayed from its initial state.

    The on-disk format of ``audit --twin --trajectories`` is a JSON list of these.
    """

    model_config = ConfigDict(extra="forbid")

    environment: str
    name: str = Field(description="A probe's name, the log sample it was read from, a user's.")
    calls: list[TwinCall]


class StepMatch(BaseModel):
    """One step of one trajectory, a simulator's answer against the twin's."""

    model_config = ConfigDict(extra="forbid")

    environment: str
    trajectory: str = Field(description="Which trajectory (probe name or log sample).")
    step: int = Field(ge=0, description="The step's index in its trajectory.")
    tool: str
    fields_changed: int = Field(ge=0, description="State leaves the twin's step changed.")
    outcome_match: bool | None = Field(
        default=None, description="Success/error as the twin's (None: no usable answer)."
    )
    determined: int = Field(default=0, ge=0, description="The twin's determined leaves.")
    determined_matched: int = Field(default=0, ge=0, description="Of those, equal in the answer.")
    missing: int = Field(default=0, ge=0, description="Determined leaves the answer lacks.")
    extra: int = Field(default=0, ge=0, description="Leaves the answer has and the twin not.")
    state_fields: int | None = Field(
        default=None, description="State leaves compared (None: state not measured)."
    )
    state_matched: int | None = Field(default=None, description="Of those, equal.")
    failure: str | None = Field(
        default=None, description="Why the simulator gave no usable answer (an infra error)."
    )


class TwinFidelity(BaseModel):
    """One simulator's steps against the twins of some environments."""

    model_config = ConfigDict(extra="forbid")

    version: int = TWIN_FIDELITY_VERSION
    simulator: str
    feeding: Feeding
    tolerance: float = Field(ge=0, description="Relative tolerance of numeric leaves.")
    environments: list[str]
    steps: list[StepMatch]


class FidelitySummary(BaseModel):
    """The shares of a ``TwinFidelity`` (None: nothing measured for that share)."""

    model_config = ConfigDict(extra="forbid")

    simulator: str
    environments: list[str]
    steps: int
    outcome: float | None
    determined: float | None
    state: float | None
    first_drift: int | None = Field(
        default=None,
        description="Free-running only: the earliest step index at which any trajectory "
        "first differed from its twin (None: none did, or fed the twin's history).",
    )
    failures: int = Field(
        default=0, ge=0, description="Steps with no usable answer (infra failures, apart)."
    )


def _share(hits: int, total: int) -> float | None:
    return hits / total if total else None


def summarise(fidelity: TwinFidelity) -> FidelitySummary:
    """The outcome, determined-field and state shares of a simulator's steps."""
    answered = [s for s in fidelity.steps if s.failure is None]
    stated = [s for s in answered if s.state_fields is not None]
    drift: int | None = None
    if fidelity.feeding is Feeding.OWN:
        firsts = [step for step in first_drifts(fidelity).values() if step is not None]
        drift = min(firsts) if firsts else None
    return FidelitySummary(
        simulator=fidelity.simulator,
        environments=sorted(fidelity.environments),
        steps=len(fidelity.steps),
        outcome=_share(sum(bool(s.outcome_match) for s in answered), len(answered)),
        determined=_share(
            sum(s.determined_matched for s in fidelity.steps),
            sum(s.determined for s in fidelity.steps),
        ),
        state=_share(
            sum(s.state_matched or 0 for s in stated), sum(s.state_fields or 0 for s in stated)
        ),
        first_drift=drift,
        failures=len(fidelity.steps) - len(answered),
    )


def is_exact(step: StepMatch) -> bool:
    """Whether a step's answer agreed with the twin's in every way measured.

    A step with an infra failure is neither exact nor a difference (``first_drifts``
    passes over it).
    """
    return (
        bool(step.outcome_match)
        and step.determined_matched == step.determined
        and step.missing == 0
        and step.extra == 0
        and (step.state_fields is None or step.state_matched == step.state_fields)
    )


def first_drifts(fidelity: TwinFidelity) -> dict[tuple[str, str], int | None]:
    """Each trajectory (environment, trajectory) with the first step that differed (None: none).

    Steps with an infra failure are passed over.
    """
    out: dict[tuple[str, str], int | None] = {}
    for step in sorted(fidelity.steps, key=lambda s: s.step):
        key = (step.environment, step.trajectory)
        out.setdefault(key, None)
        if out[key] is None and step.failure is None and not is_exact(step):
            out[key] = step.step
    return out


def summaries(records: Sequence[TwinFidelity]) -> dict[str, FidelitySummary]:
    """Each simulator's summary (records of one simulator merged, fed the twin's first)."""
    merged: dict[tuple[str, Feeding], TwinFidelity] = {}
    for record in records:
        key = (record.simulator, record.feeding)
        if key in merged:
            held = merged[key]
            held.steps = held.steps + record.steps
            held.environments = sorted(set(held.environments) | set(record.environments))
        else:
            merged[key] = record.model_copy(deep=True)
    out: dict[str, FidelitySummary] = {}
    for (simulator, _), record in sorted(
        merged.items(), key=lambda kv: kv[0][1] is not Feeding.TWIN
    ):
        out.setdefault(simulator, summarise(record))
    return out


_RECORDS = TypeAdapter(list[TwinFidelity])


def fidelity_json(records: Sequence[TwinFidelity]) -> bytes:
    """Records as the JSON list ``read_fidelity`` reads."""
    return _RECORDS.dump_json(list(records), indent=1) + b"\n"


def fidelity_records(value: Any) -> list[TwinFidelity]:
    """Records from parsed JSON (raises pydantic's ``ValidationError`` when they are not)."""
    return _RECORDS.validate_python(value)


def write_fidelity(path: Path, records: Sequence[TwinFidelity]) -> None:
    """Write records as the JSON list ``read_fidelity`` reads (a new file, whole or not)."""
    write_fresh(path, fidelity_json(records))


_T = TypeVar("_T")


def _read_bounded(path: Path, adapter: TypeAdapter[_T], what: str, max_bytes: int) -> _T:
    """A JSON file read as ``adapter``'s type within a size and a nesting bound.

    Raises:
        UsageError: the file is missing, too large, too deep, or not ``what`` (the
            message names the file and the first bad field).
    """
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise UsageError(f"{path}: {size} bytes, more than the {max_bytes} allowed")
        data = path.read_bytes()
    except OSError as error:
        raise UsageError(f"{path}: cannot be read ({error.strerror})") from None
    if nests_deeper(data, DEFAULT_MAX_JSON_DEPTH):
        raise UsageError(f"{path}: nests deeper than {DEFAULT_MAX_JSON_DEPTH} levels")
    try:
        return adapter.validate_json(data)
    except ValidationError as error:
        raise UsageError(f"{path}: not {what}: {validation_line(error)}") from None


def read_fidelity(
    path: Path, max_bytes: int = DEFAULT_MAX_TWIN_FIDELITY_BYTES
) -> list[TwinFidelity]:
    """The records of a file ``audit --twin --out`` wrote, checked within bounds.

    Raises:
        UsageError: the file is missing, too large, too deep, or not such records (the
            message names the file and the first bad field).
    """
    return _read_bounded(path, _RECORDS, "twin-fidelity records", max_bytes)


_TRAJECTORIES = TypeAdapter(list[TwinTrajectory])


def trajectories_json(trajectories: Sequence[TwinTrajectory]) -> bytes:
    """Trajectories as the JSON list ``read_trajectories`` reads."""
    return _TRAJECTORIES.dump_json(list(trajectories), indent=1) + b"\n"


def read_trajectories(
    path: Path, max_bytes: int = DEFAULT_MAX_TWIN_TRAJECTORIES_BYTES
) -> list[TwinTrajectory]:
    """The trajectories of a file (``audit --twin --trajectories``), checked within bounds.

    Raises:
        UsageError: the file is missing, too large, too deep, or not a list of
            trajectories (the message names the file and the first bad field).
    """
    return _read_bounded(path, _TRAJECTORIES, "a list of trajectories", max_bytes)
