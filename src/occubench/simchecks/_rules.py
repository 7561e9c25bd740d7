"""The rules that judge one simulator observation, shared by the audit and the online checks.

Each rule reads one call (tool and arguments), its observation and what is known before
it, and gives a ``Finding``: a value in [0, 1] (1 passed, 0 failed; the schema rule gives
the key-path Jaccard index) and a sentence saying what was checked and what failed. A rule
that has nothing to check gives None.

- ``fabrication``: every id of the observation (see ``_extract``) is known: from the config,
  the call's arguments or a write call earlier (created by it).
- ``omission``: a call whose id argument names an entity of the initial state is not
  answered with an error, and a list that shares ids with a collection of the initial state
  holds all of its records the call's arguments do not filter out (a record whose field
  named like an argument holds another value is filtered out); calls with paging arguments,
  or a limit the list reaches, are not checked for lists.
- ``schema_match``: the Jaccard index of the observation's key paths and the tool's object
  ``example_output`` (``a``, ``a.b``, ``items[].name``).
- ``same_answer``: a repeated read gives the same answer (two structured errors count as
  equal: their wording may differ).
- ``contradictions``: the records of an observation agree with what is known of the same
  entities (``entity_facts``): a record is identified by all its id fields (an ``id`` key in
  a collection named ``beds`` is ``bed_id``; ``patientId`` is ``patient_id``), and two
  records of the same entity must hold equal values under the keys both have (numbers
  compared as numbers, text without case or surrounding spaces). Keys that change as time
  passes (their last word is one of ``VOLATILE_WORDS``: ``updated_at``, ``timestamp``, ...)
  are not compared.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field

from occubench.simchecks._extract import (
    ERROR_KEYS,
    id_values,
    is_error,
    is_id_key,
    is_keyed_collection,
    is_scalar,
    key_paths,
    key_words,
    record_collections,
    scalar_tokens,
    singular,
    stem,
)

PAGING_ARGS = frozenset({"page", "offset", "cursor", "page_token", "next_token", "skip"})
LIMIT_ARGS = frozenset(
    {"limit", "max_results", "page_size", "per_page", "top", "top_n", "max", "count", "size", "n"}
)
VOLATILE_WORDS = frozenset({"at", "time", "timestamp", "ago", "elapsed", "now", "count", "total"})
"""Last words of keys whose values may change between reads without a write."""

_PREVIEW = 160

Identity = frozenset[tuple[str, str]]
"""An entity: its id fields as (normalized key, value) pairs."""

Facts = dict[Identity, dict[str, Any]]
"""What is known of each entity: normalized key -> value."""


class Finding(BaseModel):
    """What one rule found in one observation."""

    value: float = Field(ge=0, le=1, description="1 passed, 0 failed; schema: key-path Jaccard.")
    detail: str = Field(description="What was checked, and what failed.")


def call_text(tool: str, arguments: dict[str, Any]) -> str:
    """``tool({"arg": ...})`` for messages."""
    return f"{tool}({json.dumps(arguments, ensure_ascii=False)})"


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


def differences(a: dict[str, Any], b: dict[str, Any], limit: int = 3) -> str:
    """The leaves two JSON objects differ in: ``path: old -> new; ...``."""
    first, second = _leaves(a), _leaves(b)
    paths = sorted(set(first) | set(second))
    changed = [
        f"{p}: {first.get(p, '(absent)')!r} -> {second.get(p, '(absent)')!r}"
        for p in paths
        if first.get(p, ...) != second.get(p, ...)
    ]
    more = f" (+{len(changed) - limit} more)" if len(changed) > limit else ""
    return "; ".join(changed[:limit]) + more


def fabrication(
    tool: str, arguments: dict[str, Any], obs: dict[str, Any], known: set[str]
) -> Finding | None:
    """Every id of ``obs`` is known or given by the call (module doc); None without ids."""
    found = list(id_values(obs))
    if not found:
        return None
    allowed = known | set(scalar_tokens(arguments))
    invented = [f"{path}={value}" for path, value in found if value not in allowed]
    where = call_text(tool, arguments)
    if invented:
        return Finding(
            value=0.0, detail=f"{where}: ids in no state or earlier call: {', '.join(invented[:5])}"
        )
    return Finding(value=1.0, detail=f"{where}: {len(found)} ids, all known")


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


def _named_entities(arguments: dict[str, Any], state_ids: set[str]) -> list[str]:
    """``param=value`` for each id argument whose value the initial state holds."""
    return [
        f"{k}={v}"
        for k, v in arguments.items()
        if is_id_key(k) and is_scalar(v) and str(v) in state_ids
    ]


def omission(
    tool: str,
    arguments: dict[str, Any],
    obs: dict[str, Any],
    state: list[tuple[str, dict[str, dict[str, Any]]]],
    state_ids: set[str],
) -> Finding | None:
    """State entities answered and state lists complete (module doc); None if nothing applies.

    Args:
        tool: The tool called.
        arguments: Its arguments.
        obs: The observation.
        state: The record collections of the initial state (``record_collections``).
        state_ids: Every id value of the initial state.
    """
    named = _named_entities(arguments, state_ids)
    where = call_text(tool, arguments)
    if is_error(obs):
        if not named:
            return None
        return Finding(
            value=0.0,
            detail=f"{where}: error for {', '.join(named)}, which the initial state holds: "
            f"{preview(obs)}",
        )
    problems: list[str] = []
    checked = len(named)
    for path, records in record_collections(obs):
        listed = set(records)
        overlap = [(len(listed & set(coll)), spath, coll) for spath, coll in state]
        best = max(overlap, key=lambda o: o[0], default=(0, "", {}))
        if best[0] == 0 or _limited(arguments, len(records)):
            continue
        checked += 1
        _, state_path, collection = best
        expected = {i for i, r in collection.items() if _kept(r, arguments)}
        missing = sorted(expected - listed)
        if missing:
            problems.append(
                f"{path or '(top)'} lacks {', '.join(missing[:5])} (state {state_path or '(top)'})"
            )
    if not checked:
        return None
    if problems:
        return Finding(value=0.0, detail=f"{where}: {'; '.join(problems)}")
    return Finding(value=1.0, detail=f"{where}: state entities answered, lists complete")


def schema_match(tool: str, obs: dict[str, Any], example: Any) -> Finding | None:
    """Key-path Jaccard index of ``obs`` and an object ``example`` (None without one)."""
    if not isinstance(example, dict) or not example:
        return None
    expected, got = key_paths(example), key_paths(obs)
    score = len(expected & got) / len(expected | got)
    missing, unexpected = sorted(expected - got), sorted(got - expected)
    if score < 1:
        return Finding(
            value=score,
            detail=f"{tool}: missing keys {missing[:5]}, unexpected keys {unexpected[:5]} "
            "(vs example_output)",
        )
    return Finding(value=1.0, detail=f"{tool}: keys as in example_output")


def same_answer(
    tool: str, arguments: dict[str, Any], first: dict[str, Any], again: dict[str, Any]
) -> Finding:
    """A repeated read answered as the first time (two structured errors count as equal)."""
    same = (is_error(first) and is_error(again)) or json.dumps(first, sort_keys=True) == json.dumps(
        again, sort_keys=True
    )
    where = call_text(tool, arguments)
    if same:
        return Finding(value=1.0, detail=f"{where}: same answer twice")
    return Finding(value=0.0, detail=f"{where}: answers differ: {differences(first, again)}")


def _norm_key(key: str, parent: str) -> str:
    if key.lower() == "id" and parent:
        return f"{singular(parent)}_id"
    return "_".join(key_words(key)) or key


def _volatile(key: str) -> bool:
    words = key_words(key)
    return bool(words) and words[-1] in VOLATILE_WORDS


def _record_facts(
    record: dict[str, Any], parent: str, extra: Identity
) -> tuple[Identity, dict[str, Any]]:
    ids = {
        (_norm_key(k, parent), str(v)) for k, v in record.items() if is_id_key(k) and is_scalar(v)
    }
    facts = {
        _norm_key(k, parent): v
        for k, v in record.items()
        if not is_id_key(k)
        and not _volatile(k)
        and (v is None or isinstance(v, str | int | float | bool))
    }
    return frozenset(ids | extra), facts


def entity_facts(value: Any, parent: str = "", extra: Identity = frozenset()) -> Facts:
    """What a JSON value says of each entity it holds (module doc); structured errors skipped.

    The records of a collection keyed by id (``{"beds": {"ED-03": {...}}}``) are identified
    by that key too (``bed_id=ED-03``). An entity told twice with different values in the
    same value is left out (the value itself is ambiguous about it).
    """
    out: Facts = {}
    ambiguous: set[Identity] = set()

    def add(found: Facts) -> None:
        for identity, facts in found.items():
            known = out.setdefault(identity, {})
            for key, item in facts.items():
                if key in known and not _equal(known[key], item):
                    ambiguous.add(identity)
                known[key] = item

    if isinstance(value, dict):
        identity, facts = _record_facts(value, parent, extra)
        if identity and facts:
            add({identity: facts})
        keyed = is_keyed_collection(value)
        for key, item in value.items():
            if key in ERROR_KEYS or not isinstance(item, dict | list):
                continue
            below = frozenset({(f"{singular(parent)}_id", str(key))}) if keyed and parent else None
            add(entity_facts(item, parent if below is not None else key, below or frozenset()))
    elif isinstance(value, list):
        for item in value:
            add(entity_facts(item, parent))
    return {k: v for k, v in out.items() if k not in ambiguous}


def _equal(a: Any, b: Any) -> bool:
    numbers = (int, float)
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, numbers) and isinstance(b, numbers):
        return float(a) == float(b)
    if isinstance(a, str) and isinstance(b, str):
        return a.strip().lower() == b.strip().lower()
    return bool(a == b)


def contradictions(known: Facts, obs: dict[str, Any]) -> list[str]:
    """``entity key: known -> observed`` for each value of ``obs`` that contradicts ``known``."""
    if is_error(obs):
        return []
    found = []
    for identity, facts in entity_facts(obs).items():
        before = known.get(identity)
        if not before:
            continue
        name = ", ".join(f"{k}={v}" for k, v in sorted(identity))
        found += [
            f"{name} {key}: {before[key]!r} -> {value!r}"
            for key, value in facts.items()
            if key in before and not _equal(before[key], value)
        ]
    return found
