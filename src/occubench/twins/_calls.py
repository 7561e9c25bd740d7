"""Candidate calls: the tool calls a twin is tried on, built once for every reader.

``candidate_calls(env, tasks)`` lists, in this order and without repeats:

1. the config's canned calls (``canned_observations``);
2. the tasks' planned calls (``plan_calls``: a task's ``reference_plan`` steps, else the
   calls named in its ``solution_plan`` lines), to the env's tools only;
3. for each tool, up to ``per_tool`` calls whose required arguments are drawn from a pool
   per argument, the ``index``-th call taking each pool's ``index``-th value (its last
   when shorter). An argument's pool, in order: the values the calls above gave it
   (this tool's calls first, then any tool's argument of the same name); from
   the initial state, then from each value of ``seen`` (observations a twin gave, so that
   ids a search lists can be used): the values held under its name anywhere, the values
   of keys of the same stem when either names an id (``state_values``), and every record
   id when it names an id; the values under its name in the tool's ``example_output``;
   the schema's example value, then every other value its schema lists (an enum's, both
   truth values of a boolean); values that break the parameter's own schema are
   dropped. A call that breaks the tool's schema, or repeats an earlier call, is left out.

So at most ``len(canned) + len(planned) + per_tool x tools`` calls; reads and writes alike
(``simchecks.is_read_tool`` tells them apart). They are candidates: which of them a twin
answers with a success is the twin's to say.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

from occubench.dataset import EnvConfig, TaskRecord, ToolSpec, example_value
from occubench.defaults import DEFAULT_TWIN_CANDIDATES_PER_TOOL
from occubench.simchecks import is_id_key, record_collections, state_scalars, stem
from occubench.twins._twin import schema_problem


class Call(NamedTuple):
    """One tool call: the tool's name and its arguments."""

    tool: str
    arguments: dict[str, Any]


class PlannedCalls(NamedTuple):
    """A plan's calls and where the plan comes from."""

    source: str
    """The task and its plan (``task 11 reference_plan``), or ``generated``."""
    calls: list[Call]


def solution_plan_calls(text: str, tools: list[ToolSpec]) -> list[Call]:
    """Calls named in a solution plan's lines: a tool name, then optionally a JSON object."""
    names = sorted((t.name for t in tools), key=len, reverse=True)
    pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in names) + r")\b") if names else None
    calls: list[Call] = []
    for line in text.splitlines() if pattern else []:
        found = pattern.search(line)  # type: ignore[union-attr]
        if not found:
            continue
        arguments: dict[str, Any] = {}
        start = line.find("{", found.end())
        if start >= 0:
            try:
                value, _ = json.JSONDecoder().raw_decode(line, start)
            except json.JSONDecodeError:
                value = None
            arguments = value if isinstance(value, dict) else {}
        calls.append(Call(found.group(1), arguments))
    return calls


def plan_calls(task: TaskRecord, env: EnvConfig) -> PlannedCalls | None:
    """The task's planned calls to the env's tools, with where they come from (None if none)."""
    names = {t.name for t in env.action_set_definitions}
    if task.reference_plan is not None:
        source = "reference_plan"
        calls = [Call(s.tool, s.arguments) for s in task.reference_plan.steps]
    elif task.solution_plan:
        source = "solution_plan"
        calls = solution_plan_calls(task.solution_plan, env.action_set_definitions)
    else:
        return None
    calls = [c for c in calls if c.tool in names]
    return PlannedCalls(f"task {task.task_id} {source}", calls) if calls else None


def state_values(param: str, scalars: Sequence[tuple[str, Any]]) -> list[Any]:
    """State values for a parameter: same key first, then same stem when either names an id."""
    exact = [v for k, v in scalars if k == param]
    related = [
        v
        for k, v in scalars
        if k != param and stem(k) == stem(param) and (is_id_key(k) or is_id_key(param))
    ]
    return list(dict.fromkeys(exact + related))


def _values_under(value: Any, key: str) -> Iterator[Any]:
    """Every value held under ``key`` anywhere in a JSON value."""
    if isinstance(value, dict):
        for k, item in value.items():
            if k == key:
                yield item
            yield from _values_under(item, key)
    elif isinstance(value, list):
        for item in value:
            yield from _values_under(item, key)


def _distinct(values: Sequence[Any]) -> list[Any]:
    return list({json.dumps(v, sort_keys=True): v for v in values}.values())


def _held(name: str, source: Any) -> list[Any]:
    """The values a JSON value holds for an argument ``name`` (module doc, 3)."""
    found = list(_values_under(source, name)) + state_values(name, list(state_scalars(source)))
    if is_id_key(name):
        found += [i for _, records in record_collections(source) for i in records]
    return found


def _choices(schema: dict[str, Any]) -> list[Any]:
    """Every value a parameter's schema lists: its enum, or both truth values."""
    if isinstance(schema.get("enum"), list):
        return list(schema["enum"])
    return [True, False] if schema.get("type") == "boolean" else []


def _fits(spec: ToolSpec, name: str, value: Any) -> bool:
    """Whether ``value`` fits the schema of the tool's parameter ``name`` on its own."""
    alone = {
        "type": "object",
        "properties": {name: (spec.parameters.get("properties") or {}).get(name) or {}},
    }
    return schema_problem(spec.model_copy(update={"parameters": alone}), {name: value}) is None


def candidate_calls(
    env: EnvConfig,
    tasks: Sequence[TaskRecord],
    per_tool: int = DEFAULT_TWIN_CANDIDATES_PER_TOOL,
    seen: Sequence[Any] = (),
) -> list[Call]:
    """The calls a twin of ``env`` is tried on (module doc: how they are built, how many).

    Args:
        env: The environment.
        tasks: Its tasks (their plans' calls are candidates).
        per_tool: Calls built per tool from the argument pools at most.
        seen: JSON values (a twin's observations) whose values join the pools after the
            initial state's.
    """
    calls: list[Call] = [Call(c.tool, c.arguments) for c in env.canned_observations or []]
    for task in tasks:
        planned = plan_calls(task, env)
        calls += [c for c in planned.calls if c not in calls] if planned else []
    sources = [env.task_initial_state, *seen]
    for spec in env.action_set_definitions:
        properties = spec.parameters.get("properties") or {}
        pools: dict[str, list[Any]] = {}
        for name in spec.parameters.get("required") or []:
            given = [(tool, args[name]) for tool, args in calls if name in args]
            pool = [v for tool, v in given if tool == spec.name]
            pool += [v for tool, v in given if tool != spec.name]
            pool += [value for source in sources for value in _held(name, source)]
            pool += _values_under(spec.example_output, name)
            example = example_value(name, properties.get(name) or {})
            pool += [example, *_choices(properties.get(name) or {})]
            fitting = [v for v in _distinct(pool) if _fits(spec, name, v)]
            pools[name] = fitting or [example]
        for index in range(per_tool):
            call = Call(spec.name, {n: p[min(index, len(p) - 1)] for n, p in pools.items()})
            if schema_problem(spec, call.arguments) is None and call not in calls:
                calls.append(call)
    return calls
