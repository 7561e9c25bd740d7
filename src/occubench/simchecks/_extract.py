"""What the fidelity metrics read out of observations and env configs.

Identifiers. A value is an *id* when its key names an identifier: the key, split into
lower-case words (``snake_case`` and ``camelCase``), ends in one of ``ID_WORDS`` (``id``,
``ids``, ``code``, ``number``, ``no``, ``ref``, ``uuid``, ``sku`` ...), unless the whole key
is one of ``NOT_ID_KEYS`` (``status_code``, ``currency_code`` ...). The value must be a
string or an integer (a list of them under an ``*_ids`` key counts item by item). Values
inside a structured error (``error``/``errors`` objects) are never ids: an error that
repeats the unknown id it was asked about invents nothing.

Known values. An id is *known* when it occurs in the env config the simulator was given:
a scalar value or a key anywhere in the initial state or the canned observations, or a
word of the system prompt or the state description. The audit adds the arguments of the
call itself and every id a write call returned (created by an earlier call).

Read and write tools. A tool is a *read* when the first word of its name is one of
``READ_VERBS`` (``get``, ``list``, ``search`` ...); any other tool may change the state or
create records (``create``, ``book``, ``calculate`` ...).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from occubench.dataset import EnvConfig

ID_WORDS = frozenset({"id", "ids", "code", "codes", "number", "no", "ref", "uuid", "guid", "sku"})
"""Last words of a key that make its value an identifier."""

NOT_ID_KEYS = frozenset(
    {
        "status_code",
        "error_code",
        "http_code",
        "response_code",
        "return_code",
        "exit_code",
        "currency_code",
        "country_code",
        "language_code",
        "zip_code",
        "postal_code",
        "area_code",
        "page_number",
        "version_number",
        "line_number",
        "total_number",
    }
)
"""Keys that end like an identifier but hold a code of another kind."""

READ_VERBS = frozenset(
    {
        "get",
        "list",
        "read",
        "fetch",
        "search",
        "find",
        "query",
        "view",
        "show",
        "lookup",
        "look",
        "check",
        "retrieve",
        "describe",
        "count",
        "browse",
        "inspect",
        "display",
        "verify",
        "validate",
        "scan",
        "monitor",
        "review",
        "track",
        "is",
        "has",
    }
)
"""First words of a tool name that make it a read (no state change, nothing created)."""

ERROR_KEYS = ("error", "errors")
ERROR_STATUSES = frozenset({"error", "failed", "failure", "not_found", "notfound", "invalid"})
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_TOKEN = re.compile(r"[\w][\w\-./:#+]*")
_MAX_DEPTH = 3


def key_words(key: str) -> list[str]:
    """The lower-case words of a key (``patientId`` and ``patient_id`` give the same)."""
    return [w.lower() for w in _WORD.findall(key)]


def is_id_key(key: str) -> bool:
    """Whether a key names an identifier (module doc)."""
    words = key_words(key)
    return bool(words) and words[-1] in ID_WORDS and "_".join(words) not in NOT_ID_KEYS


def stem(key: str) -> str:
    """A key without its identifier word: ``patient_id``, ``patientId`` and ``patient`` match."""
    words = key_words(key)
    if len(words) > 1 and words[-1] in ID_WORDS:
        words = words[:-1]
    return "_".join(words)


def singular(name: str) -> str:
    """The stem of a collection's name in the singular (``patients`` -> ``patient``)."""
    word = stem(name)
    return word[:-3] + "y" if word.endswith("ies") else word.removesuffix("s")


def is_read_tool(name: str) -> bool:
    """Whether a tool only reads (module doc)."""
    words = key_words(name)
    return bool(words) and words[0] in READ_VERBS


def is_scalar(value: Any) -> bool:
    """A string or an integer (booleans and floats are measurements, not ids)."""
    return isinstance(value, str | int) and not isinstance(value, bool)


def is_error(observation: dict[str, Any]) -> bool:
    """Whether an observation is a structured error (an ``error`` key, a failed status...)."""
    if any(observation.get(k) for k in ERROR_KEYS):
        return True
    status = observation.get("status")
    if isinstance(status, str) and status.strip().lower() in ERROR_STATUSES:
        return True
    return observation.get("success") is False or observation.get("found") is False


def id_values(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Every (path, id) in an observation, structured errors skipped (module doc)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ERROR_KEYS:
                continue
            where = f"{path}.{key}" if path else key
            if is_id_key(key):
                for one in item if isinstance(item, list) else [item]:
                    if is_scalar(one):
                        yield where, str(one)
            if isinstance(item, dict | list):
                yield from id_values(item, where)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from id_values(item, f"{path}[{index}]")


def scalar_tokens(value: Any) -> Iterator[str]:
    """Every scalar value and every key in a JSON value, as strings."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from scalar_tokens(item)
    elif isinstance(value, list):
        for item in value:
            yield from scalar_tokens(item)
    elif value is not None and not isinstance(value, bool):
        yield str(value)


def text_tokens(text: str) -> Iterator[str]:
    """Id-shaped words of a text (``P-2231``, ``ED-11``, ``8471.30``), end punctuation cut."""
    for token in _TOKEN.findall(text):
        yield token.rstrip(".:-/#+")


def known_values(env: EnvConfig) -> set[str]:
    """Values the env config gives the simulator (module doc)."""
    known = set(scalar_tokens(env.task_initial_state))
    for canned in env.canned_observations or []:
        known.update(scalar_tokens(canned.observation))
        known.update(scalar_tokens(canned.arguments))
    known.update(text_tokens(env.world_model_system_prompt))
    known.update(text_tokens(json.dumps(env.state_description, ensure_ascii=False)))
    return known


def key_paths(value: Any, prefix: str = "", depth: int = 0) -> set[str]:
    """The key paths of a JSON object: ``a``, ``a.b``, ``items[].name`` (list items pooled)."""
    paths: set[str] = set()
    if not isinstance(value, dict) or depth >= _MAX_DEPTH:
        return paths
    for key, item in value.items():
        path = f"{prefix}{key}"
        paths.add(path)
        if isinstance(item, dict):
            paths |= key_paths(item, f"{path}.", depth + 1)
        elif isinstance(item, list):
            for element in item:
                paths |= key_paths(element, f"{path}[].", depth + 1)
    return paths


def _id_key(records: list[dict[str, Any]], parent: str) -> str | None:
    """The identifying key shared by all records: ``id``, then ``<parent>_id``, then any."""
    shared = set.intersection(*(set(r) for r in records))
    candidates = sorted(k for k in shared if is_id_key(k) and all(is_scalar(r[k]) for r in records))
    if not candidates:
        return None
    for preferred in ("id", f"{singular(parent)}_id"):
        if preferred in candidates:
            return preferred
    return candidates[0]


def is_keyed_collection(value: dict[str, Any]) -> bool:
    """Whether an object is a collection keyed by id: two or more objects sharing a key."""
    items = [v for v in value.values() if isinstance(v, dict)]
    return (
        len(items) >= 2
        and len(items) == len(value)
        and bool(set.intersection(*(set(i) for i in items)))
    )


def record_collections(
    value: Any, path: str = ""
) -> Iterator[tuple[str, dict[str, dict[str, Any]]]]:
    """Every collection of records in a JSON value: (path, {id: record}).

    A collection is a list of objects sharing an identifying key, or an object of two or
    more objects that share at least one key (keyed by id).
    """
    if isinstance(value, list):
        records = [r for r in value if isinstance(r, dict)]
        if records and len(records) == len(value):
            key = _id_key(records, path.rsplit(".", 1)[-1])
            if key is not None:
                yield path, {str(r[key]): r for r in records}
        for index, item in enumerate(value):
            yield from record_collections(item, f"{path}[{index}]")
    elif isinstance(value, dict):
        if is_keyed_collection(value):
            yield path, {str(k): v for k, v in value.items()}
        for key, item in value.items():
            if key not in ERROR_KEYS:
                yield from record_collections(item, f"{path}.{key}" if path else key)


def state_scalars(value: Any, parent: str = "") -> Iterator[tuple[str, Any]]:
    """Every (key, value) of a scalar in the state, in order.

    An ``id`` inside a collection named ``patients`` also appears as ``patient_id``, and
    so do the keys of a collection keyed by id (``{"patients": {"P-1": {...}}}``).
    """
    if isinstance(value, dict):
        if parent and is_keyed_collection(value):
            yield from ((f"{singular(parent)}_id", key) for key in value)
        for key, item in value.items():
            if is_scalar(item):
                yield key, item
                if key.lower() == "id" and parent:
                    yield f"{singular(parent)}_id", item
            else:
                yield from state_scalars(item, key)
    elif isinstance(value, list):
        for item in value:
            yield from state_scalars(item, parent)
