"""The fidelity checks of one answered probe trajectory (rule invention aside).

Each check scores one observation (or one pair) in [0, 1], higher is better:

- fabrication: a read observation that holds ids (see ``_extract``) passes when every
  id is known from the config, the call's arguments, or a write call earlier in the
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
"""

from __future__ import annotations

import json
from enum import Enum
from typing import Any

from pydantic import BaseModel, Field

from occubench.dataset import EnvConfig
from occubench.fidelity._extract import (
    id_values,
    is_error,
    is_id_key,
    is_scalar,
    key_paths,
    record_collections,
    scalar_tokens,
    state_scalars,
    stem,
)
from occubench.fidelity._probes import ProbeKind, ProbeResult, TrajectoryResult

PAGING_ARGS = frozenset({"page", "offset", "cursor", "page_token", "next_token", "skip"})
LIMIT_ARGS = frozenset(
    {"limit", "max_results", "page_size", "per_page", "top", "top_n", "max", "count", "size", "n"}
)
_PREVIEW = 160


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
    return f"{step.tool}({json.dumps(step.arguments, ensure_ascii=False)})"


def preview(value: Any) -> str:
    """A short JSON rendering of a value."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= _PREVIEW else text[: _PREVIEW - 3] + "..."


def _leaves(value: Any, path: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            out.update(_leaves(item, f"{path}.{key}" if path else key))
        return out
    if isinstance(value, list):
        out = {}
        for index, item in enumerate(value):
            out.update(_leaves(item, f"{path}[{index}]"))
        return out if value else {path: []}
    return {path: value}


def _differences(a: dict[str, Any], b: dict[str, Any], limit: int = 3) -> str:
    first, second = _leaves(a), _leaves(b)
    paths = sorted(set(first) | set(second))
    changed = [
        f"{p}: {first.get(p, '(absent)')!r} -> {second.get(p, '(absent)')!r}"
        for p in paths
        if first.get(p, ...) != second.get(p, ...)
    ]
    more = f" (+{len(changed) - limit} more)" if len(changed) > limit else ""
    return "; ".join(changed[:limit]) + more


def _fabrication(
    step: ProbeResult, obs: dict[str, Any], known: set[str]
) -> tuple[float, str] | None:
    found = list(id_values(obs))
    if not found:
        return None
    allowed = known | set(scalar_tokens(step.arguments))
    invented = [f"{path}={value}" for path, value in found if value not in allowed]
    if invented:
        return 0.0, f"{call_text(step)}: ids in no state or earlier call: {', '.join(invented[:5])}"
    return 1.0, f"{call_text(step)}: {len(found)} ids, all known"


def _matches(value: Any, wanted: Any) -> bool:
    options = wanted if isinstance(wanted, list) else [wanted]
    return any(str(value).strip().lower() == str(o).strip().lower() for o in options)


def _kept(record: dict[str, Any], arguments: dict[str, Any]) -> bool:
    """Whether a state record passes the call's arguments taken as filters."""
    for name, wanted in arguments.items():
        if not (is_scalar(wanted) or isinstance(wanted, list)):
            continue
        for key, value in record.items():
            if (key == name or stem(key) == stem(name)) and is_scalar(value):
                if not _matches(value, wanted):
                    return False
    return True


def _limited(arguments: dict[str, Any], listed: int) -> bool:
    names = {k.lower(): v for k, v in arguments.items()}
    if names.keys() & PAGING_ARGS:
        return True
    return any(isinstance(names.get(k), int) and listed >= names[k] for k in LIMIT_ARGS)


def _named_entities(step: ProbeResult, state_ids: set[str]) -> list[str]:
    """``param=value`` for each id argument whose value the initial state holds."""
    return [
        f"{k}={v}"
        for k, v in step.arguments.items()
        if is_id_key(k) and is_scalar(v) and str(v) in state_ids
    ]


def _omission(
    step: ProbeResult,
    obs: dict[str, Any],
    state: list[tuple[str, dict[str, dict[str, Any]]]],
    state_ids: set[str],
) -> tuple[float, str] | None:
    named = _named_entities(step, state_ids)
    if is_error(obs):
        if not named:
            return None
        return 0.0, (
            f"{call_text(step)}: error for {', '.join(named)}, which the initial state "
            f"holds: {preview(obs)}"
        )
    problems: list[str] = []
    checked = len(named)
    for path, records in record_collections(obs):
        listed = set(records)
        overlap = [(len(listed & set(coll)), spath, coll) for spath, coll in state]
        best = max(overlap, key=lambda o: o[0], default=(0, "", {}))
        if best[0] == 0 or _limited(step.arguments, len(records)):
            continue
        checked += 1
        _, state_path, collection = best
        expected = {i for i, r in collection.items() if _kept(r, step.arguments)}
        missing = sorted(expected - listed)
        if missing:
            problems.append(
                f"{path or '(top)'} lacks {', '.join(missing[:5])} (state {state_path or '(top)'})"
            )
    if not checked:
        return None
    if problems:
        return 0.0, f"{call_text(step)}: {'; '.join(problems)}"
    return 1.0, f"{call_text(step)}: state entities answered, lists complete"


def _schema(step: ProbeResult, obs: dict[str, Any], example: Any) -> tuple[float, str] | None:
    if not isinstance(example, dict) or not example:
        return None
    expected, got = key_paths(example), key_paths(obs)
    score = len(expected & got) / len(expected | got)
    missing, unexpected = sorted(expected - got), sorted(got - expected)
    if score < 1:
        return score, (
            f"{step.tool}: missing keys {missing[:5]}, unexpected keys "
            f"{unexpected[:5]} (vs example_output)"
        )
    return 1.0, f"{step.tool}: keys as in example_output"


def _determinism(step: ProbeResult, first: ProbeResult) -> tuple[float, str] | None:
    if step.observation is None or first.observation is None:
        return None
    a, b = first.observation, step.observation
    same = (is_error(a) and is_error(b)) or json.dumps(a, sort_keys=True) == json.dumps(
        b, sort_keys=True
    )
    if same:
        return 1.0, f"{call_text(step)}: same answer twice"
    return 0.0, f"{call_text(step)}: answers differ: {_differences(a, b)}"


def _unknown_id(step: ProbeResult, obs: dict[str, Any]) -> tuple[float, str]:
    where = f"{step.tool}({step.unknown_param}={step.arguments.get(step.unknown_param or '')!r})"
    if is_error(obs):
        return 1.0, f"{where}: error, as it should"
    return 0.0, f"{where}: answered with data, not an error: {preview(obs)}"


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

    def add(metric: FidelityMetric, found: tuple[float, str] | None, step: int) -> None:
        if found is not None:
            checks.append(
                FidelityCheck(
                    metric=metric, value=found[0], trajectory=index, step=step, detail=found[1]
                )
            )

    for number, step in enumerate(result.steps):
        obs = step.observation
        if obs is None:
            continue
        if not is_error(obs):
            add(FidelityMetric.SCHEMA, _schema(step, obs, examples.get(step.tool)), number)
        if not step.read:
            written = True
            created.update(value for _, value in id_values(obs))
            continue
        if step.kind == ProbeKind.REPEAT and step.repeat_of is not None:
            add(
                FidelityMetric.DETERMINISM, _determinism(step, result.steps[step.repeat_of]), number
            )
        if step.kind == ProbeKind.UNKNOWN_ID:
            add(FidelityMetric.UNKNOWN_ID, _unknown_id(step, obs), number)
        if not written:
            add(FidelityMetric.OMISSION, _omission(step, obs, state, state_ids), number)
        if not is_error(obs):
            add(FidelityMetric.FABRICATION, _fabrication(step, obs, known | created), number)
    return checks
