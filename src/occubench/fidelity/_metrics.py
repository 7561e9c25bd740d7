"""The fidelity checks of one answered probe trajectory (rule invention aside).

Each check scores one observation (or one pair) in [0, 1], higher is better:

- fabrication: a read observation that holds ids (see ``occubench.simchecks``) passes
  when every id is known from the config, the call's arguments, or a write call earlier in the
  trajectory (created by it); errors and observations without ids are not checked.
- omission: checked on read calls made before any write call. A call whose id argument
  names an entity of the initial state fails when answered with an error (the state
  holds it) and passes otherwise. An observation that lists records of a collection
  of the initial state (shares at least one id with it) fails when it lacks a record
  of that collection the call's arguments do not filter out (a record whose field
  named like an argument holds another value is filtered out); calls with paging
  arguments, or a limit the list reaches, are not checked for lists.
- determinism: a repeated read call passes when its answer equals the first one (two
  structured errors count as equal: their wording may differ).
- schema: a non-error observation of a tool with an object ``example_output`` scores
  the Jaccard index of their key paths (``a``, ``a.b``, ``items[].name``): 1 when the
  keys are the same, lower for each expected key missing and each unexpected key.
- unknown_id: a call with a made-up id passes when the answer is a structured error.

The rules are ``occubench.simchecks``' own, shared with the online simulator checks of a
run; this module applies them to the audit's probe trajectories.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, Field

from occubench.dataset import EnvConfig
from occubench.fidelity._probes import ProbeKind, ProbeResult, TrajectoryResult
from occubench.simchecks import (
    Finding,
    fabrication,
    id_values,
    is_error,
    is_id_key,
    omission,
    preview,
    record_collections,
    same_answer,
    schema_match,
    state_scalars,
)
from occubench.simchecks import call_text as _call_text


class FidelityMetric(str, Enum):  # noqa: UP042 - same str-Enum style as EnvMode
    """The parts of the fidelity score."""

    FABRICATION = "fabrication"
    OMISSION = "omission"
    DETERMINISM = "determinism"
    SCHEMA = "schema"
    UNKNOWN_ID = "unknown_id"
    RULE_INVENTION = "rule_invention"


class FidelityCheck(BaseModel):
    """One fidelity check of one observation (or one repeated pair)."""

    metric: FidelityMetric = Field(description="The part of the score it counts for.")
    value: float = Field(ge=0, le=1, description="1 passed, 0 failed; schema: key-path Jaccard.")
    trajectory: int = Field(description="Index of the trajectory in its environment.")
    step: int = Field(description="Index of the call in its trajectory.")
    detail: str = Field(description="What was checked, and what failed.")


def call_text(step: ProbeResult) -> str:
    """``tool({"arg": ...})`` for messages."""
    return _call_text(step.tool, step.arguments)


def _unknown_id(step: ProbeResult, obs: dict[str, Any]) -> Finding:
    where = f"{step.tool}({step.unknown_param}={step.arguments.get(step.unknown_param or '')!r})"
    if is_error(obs):
        return Finding(value=1.0, detail=f"{where}: error, as it should")
    return Finding(value=0.0, detail=f"{where}: answered with data, not an error: {preview(obs)}")


def trajectory_checks(
    env: EnvConfig, result: TrajectoryResult, known: set[str], index: int = 0
) -> list[FidelityCheck]:
    """Every check of one answered trajectory (module doc).

    Args:
        env: The environment the trajectory ran in.
        result: The calls and observations.
        known: Ids the config gives (``known_values``).
        index: The trajectory's index in its environment (kept in each check).
    """
    examples = {t.name: t.example_output for t in env.action_set_definitions}
    state = list(record_collections(env.task_initial_state))
    state_ids = {str(v) for k, v in state_scalars(env.task_initial_state) if is_id_key(k)}
    created: set[str] = set()
    written = False
    checks: list[FidelityCheck] = []

    def add(metric: FidelityMetric, found: Finding | None, step: int) -> None:
        if found is not None:
            checks.append(
                FidelityCheck(
                    metric=metric,
                    value=found.value,
                    trajectory=index,
                    step=step,
                    detail=found.detail,
                )
            )

    for number, step in enumerate(result.steps):
        obs = step.observation
        if obs is None:
            continue
        if not is_error(obs):
            add(
                FidelityMetric.SCHEMA, schema_match(step.tool, obs, examples.get(step.tool)), number
            )
        if not step.read:
            written = True
            created.update(value for _, value in id_values(obs))
            continue
        first = result.steps[step.repeat_of] if step.repeat_of is not None else None
        if step.kind == ProbeKind.REPEAT and first is not None and first.observation is not None:
            add(
                FidelityMetric.DETERMINISM,
                same_answer(step.tool, step.arguments, first.observation, obs),
                number,
            )
        if step.kind == ProbeKind.UNKNOWN_ID:
            add(FidelityMetric.UNKNOWN_ID, _unknown_id(step, obs), number)
        if not written:
            add(
                FidelityMetric.OMISSION,
                omission(step.tool, step.arguments, obs, state, state_ids),
                number,
            )
        if not is_error(obs):
            add(
                FidelityMetric.FABRICATION,
                fabrication(step.tool, step.arguments, obs, known | created),
                number,
            )
    return checks
