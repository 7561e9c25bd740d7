"""Probe trajectories: the calls the fidelity audit makes in each environment.

One trajectory is one fresh simulator session:

1. the first pass: a task's ``reference_plan`` steps (else the calls named in its
   ``solution_plan`` lines), or, for an env whose tasks have neither, generated probes:
   every read tool called with the entities of the initial state that match its required
   parameters by name (``patient_id`` matches ``patient_id``, ``patientId``, ``patient``
   and an ``id`` inside ``patients``), one call per entity value (up to a few per tool);
2. every read call made again before the next write call (or at the end), so the two
   answers can be compared with no state change in between;
3. one call per read tool with an identifying parameter, with that id replaced by one
   that exists nowhere in the config (``P-2231`` becomes ``P-9999``).
"""

from __future__ import annotations

import json
import re
from enum import Enum
from typing import Any, NamedTuple

from pydantic import BaseModel, Field

from occubench.dataset import EnvConfig, TaskRecord, ToolSpec, example_arguments
from occubench.defaults import (
    DEFAULT_AUDIT_MAX_PROBES,
    DEFAULT_AUDIT_PLANS_PER_ENV,
    DEFAULT_AUDIT_PROBE_VALUES,
)
from occubench.simchecks import (
    is_id_key,
    is_read_tool,
    known_values,
    scalar_tokens,
    state_scalars,
)
from occubench.twins import Call, PlannedCalls, plan_calls, state_values

ProbeCall = Call
"""One tool call a probe makes (the twins' ``Call``)."""


_DIGIT = re.compile(r"\d")


class ProbeKind(str, Enum):  # noqa: UP042 - same str-Enum style as EnvMode
    """Why a probe call is made."""

    PLAN = "plan"
    GENERATED = "generated"
    REPEAT = "repeat"
    UNKNOWN_ID = "unknown_id"


class Probe(BaseModel):
    """One call of a probe trajectory."""

    tool: str = Field(description="Tool name.")
    arguments: dict[str, Any] = Field(description="Arguments sent.")
    kind: ProbeKind = Field(description="plan, generated, repeat or unknown_id.")
    read: bool = Field(description="The tool only reads (see READ_VERBS).")
    repeat_of: int | None = Field(
        default=None, description="For a repeat: index of the call it repeats."
    )
    unknown_param: str | None = Field(
        default=None, description="For an unknown_id probe: the parameter given a made-up id."
    )


class ProbeTrajectory(BaseModel):
    """The calls of one simulator session."""

    env_name: str = Field(description="Environment.")
    source: str = Field(
        description="Where the first pass comes from, e.g. 'task 1001 reference_plan'."
    )
    probes: list[Probe] = Field(description="Calls in order.")


def unknown_value(value: Any, known: set[str]) -> Any:
    """An id shaped like ``value`` that is in none of ``known`` (digits become 9s)."""
    if isinstance(value, int) and not isinstance(value, bool):
        number = int("9" * (len(str(abs(value))) + 1))
        while str(number) in known:
            number = number * 10 + 9
        return number
    text = str(value)
    candidate = _DIGIT.sub("9", text) if _DIGIT.search(text) else f"{text}-999"
    if candidate == text:
        candidate = f"{text}-9"
    while candidate in known:
        candidate += "9"
    return candidate


def _fit(value: Any, schema: dict[str, Any]) -> Any:
    """``value`` converted to the parameter's type, or None when it does not fit."""
    kind = schema.get("type", "string")
    kind = kind[0] if isinstance(kind, list) else kind
    if schema.get("enum") and value not in schema["enum"]:
        return None
    if kind == "string":
        return str(value)
    if kind in ("integer", "number"):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        return int(value) if isinstance(value, str) and value.isdigit() else None
    return None


class _BaseArguments(NamedTuple):
    """A tool's example arguments with state values filled in, and the parameter to vary."""

    arguments: dict[str, Any]
    primary: str | None
    """The parameter to vary (an id first), None when none has several values."""
    values: list[Any]
    """The values to vary it over."""


def _base_arguments(
    tool: ToolSpec, scalars: list[tuple[str, Any]], max_values: int
) -> _BaseArguments:
    """Schema example arguments with state values filled in, and the parameter to vary."""
    schema = tool.parameters
    props = schema.get("properties") or {}
    arguments = example_arguments(schema)
    choices: dict[str, list[Any]] = {}
    for param in schema.get("required", []):
        fitted = [_fit(v, props.get(param) or {}) for v in state_values(param, scalars)]
        values = list(dict.fromkeys(v for v in fitted if v is not None))[:max_values]
        if values:
            arguments[param] = values[0]
            choices[param] = values
    varied = sorted(choices, key=lambda p: not is_id_key(p))
    primary = next((p for p in varied if len(choices[p]) > 1), None)
    return _BaseArguments(arguments, primary, choices.get(primary, []) if primary else [])


def generated_calls(
    env: EnvConfig,
    *,
    max_values: int = DEFAULT_AUDIT_PROBE_VALUES,
    max_calls: int = DEFAULT_AUDIT_MAX_PROBES,
) -> list[ProbeCall]:
    """Read calls for the entities of the initial state (module doc, step 1)."""
    scalars = list(state_scalars(env.task_initial_state))
    calls: list[ProbeCall] = []
    for tool in env.action_set_definitions:
        if not is_read_tool(tool.name):
            continue
        arguments, primary, values = _base_arguments(tool, scalars, max_values)
        if primary is None:
            calls.append(ProbeCall(tool.name, arguments))
        else:
            calls += [ProbeCall(tool.name, {**arguments, primary: v}) for v in values]
    return calls[:max_calls]


def _with_repeats(calls: list[ProbeCall], kind: ProbeKind) -> list[Probe]:
    """The first pass with each read call made again before the next write (module doc, 2)."""
    probes: list[Probe] = []
    segment: dict[str, int] = {}

    def flush() -> None:
        for first in segment.values():
            original = probes[first]
            probes.append(
                Probe(
                    tool=original.tool,
                    arguments=original.arguments,
                    kind=ProbeKind.REPEAT,
                    read=True,
                    repeat_of=first,
                )
            )
        segment.clear()

    for tool, arguments in calls:
        read = is_read_tool(tool)
        if not read:
            flush()
        key = json.dumps([tool, arguments], sort_keys=True, ensure_ascii=False)
        if read and key not in segment:
            segment[key] = len(probes)
        probes.append(Probe(tool=tool, arguments=arguments, kind=kind, read=read))
    flush()
    return probes


def _unknown_id_probes(env: EnvConfig, calls: list[ProbeCall], max_values: int) -> list[Probe]:
    """One call per read tool with an identifying parameter, given a made-up id (module doc, 3)."""
    known = known_values(env)
    for _, arguments in calls:
        known.update(scalar_tokens(arguments))
    scalars = list(state_scalars(env.task_initial_state))
    probes: list[Probe] = []
    for tool in env.action_set_definitions:
        if not is_read_tool(tool.name):
            continue
        first = next((args for name, args in calls if name == tool.name), None)
        base = first if first is not None else _base_arguments(tool, scalars, max_values).arguments
        arguments = dict(base)
        param = next(
            (p for p in tool.parameters.get("required", []) if is_id_key(p) and p in arguments),
            None,
        )
        if param is None:
            continue
        arguments[param] = unknown_value(arguments[param], known)
        probes.append(
            Probe(
                tool=tool.name,
                arguments=arguments,
                kind=ProbeKind.UNKNOWN_ID,
                read=True,
                unknown_param=param,
            )
        )
    return probes


def env_trajectories(
    env: EnvConfig,
    tasks: list[TaskRecord],
    *,
    max_plans: int = DEFAULT_AUDIT_PLANS_PER_ENV,
    max_values: int = DEFAULT_AUDIT_PROBE_VALUES,
    max_calls: int = DEFAULT_AUDIT_MAX_PROBES,
) -> list[ProbeTrajectory]:
    """The probe trajectories of one environment (module doc).

    Args:
        env: The environment.
        tasks: Its tasks (their plans are replayed; identical plans once).
        max_plans: Plans replayed at most; without any plan, one generated trajectory.
        max_values: Entity values a generated probe tries per tool.
        max_calls: First-pass calls of a generated trajectory at most.
    """
    plans: list[PlannedCalls] = []
    for task in tasks:
        found = plan_calls(task, env)
        if found is not None and all(found.calls != plan.calls for plan in plans):
            plans.append(found)
    kind = ProbeKind.PLAN
    if not plans:
        kind = ProbeKind.GENERATED
        plans = [
            PlannedCalls(
                "generated", generated_calls(env, max_values=max_values, max_calls=max_calls)
            )
        ]
    return [
        ProbeTrajectory(
            env_name=env.environment_name,
            source=source,
            probes=_with_repeats(calls, kind) + _unknown_id_probes(env, calls, max_values),
        )
        for source, calls in plans[:max_plans]
    ]


class ProbeResult(Probe):
    """One probe call and the simulator's answer."""

    observation: dict[str, Any] | None = Field(
        default=None, description="The observation; None when the simulator gave none."
    )


class TrajectoryResult(BaseModel):
    """One probe trajectory as a simulator answered it."""

    env_name: str = Field(description="Environment.")
    source: str = Field(description="Where the first pass comes from.")
    steps: list[ProbeResult] = Field(description="Calls made, in order, with their observations.")
    error: str | None = Field(
        default=None, description="Simulator error that ended the trajectory early."
    )
