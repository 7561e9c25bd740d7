"""Fault injectors: explicit error observations and implicit degradations.

Observations are JSON values (usually objects). Degradations work on a deep copy
and keep the result valid JSON with the same top-level type.

Key fields identify an entity and are never removed, nulled or aged. A field name
is a key when it is listed in ``key_fields`` (exact match) or when it

* looks like an id: ``id``, ``ids``, ``uuid``, ``guid`` in any case, alone or after
  ``_``, ``-`` or ``.`` (``order_id``, ``ITEM-IDS``), or a camelCase suffix ``Id``,
  ``ID``, ``Ids``, ``IDs``, ``Uuid``, ``UUID`` (``orderId``; ``paid`` is not a key);
* or names the entity: ``name``, ``title``, ``key``, ``sku``, ``code``, ``slug``,
  ``email``, ``username`` in any case, or a ``_name``, ``_number``, ``_code``
  suffix or camelCase ``Name``, ``Number``, ``Code`` suffix (``customer_name``,
  ``flightNumber``).

A field whose value holds a key field at any depth (a nested entity) is protected
the same way from removal and nulling.

Field-level kinds (missing, null, stale) act on one group of records: the longest
list whose items are all objects (the change applies to every item), or, when no
such list has a field to change, the object with the most such fields.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import math
import random
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

from pydantic import BaseModel, Field

from occubench.faults._kinds import FaultKind

_Path = tuple[str | int, ...]

_ID_SNAKE = re.compile(r"(?:^|[_\-.])(?:id|ids|uuid|guid)$", re.IGNORECASE)
_ID_CAMEL = re.compile(r"[a-z0-9](?:Id|ID|Ids|IDs|Uuid|UUID)$")
_NAMING_EXACT = frozenset({"name", "title", "key", "sku", "code", "slug", "email", "username"})
_NAMING_SNAKE = re.compile(r"[_\-.](?:name|number|code)$", re.IGNORECASE)
_NAMING_CAMEL = re.compile(r"[a-z0-9](?:Name|Number|Code)$")
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")
_ISO_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})(?=$|[T ])")


class Degradation(BaseModel):
    """Result of applying an implicit fault to one observation."""

    observation: Any = Field(description="The degraded observation (a copy of the input).")
    applied: bool = Field(description="False when the kind found nothing it could change.")
    changes: list[str] = Field(
        default_factory=list, description="What was changed, located with JSON-path strings."
    )


def explicit_error(
    kind: FaultKind, tool_name: str, rng: random.Random, *, hints: bool = False
) -> dict[str, Any]:
    """Build the error observation an explicit fault returns instead of the real answer.

    Without ``hints`` the body says what failed and nothing about what to do: no
    ``retryable`` flag, no ``retry_after_seconds``, no "retry"/"try again later" (the
    paper's error bodies advise nothing, and advice makes E1 easier).

    Args:
        kind: An explicit fault kind.
        tool_name: Tool the agent called; named in the error message.
        rng: Source of the incidental details (request id, delays, port).
        hints: Add retry advice to the body.

    Returns:
        A JSON-serialisable object with a single ``"error"`` member.

    Raises:
        ValueError: When ``kind`` is implicit.

    """
    if not kind.is_explicit:
        raise ValueError(f"{kind.value} is not an explicit fault kind")
    request_id = f"req_{rng.getrandbits(48):012x}"
    if kind is FaultKind.HTTP_500:
        error: dict[str, Any] = {
            "status": 500,
            "code": "INTERNAL_SERVER_ERROR",
            "message": f"The {tool_name} service failed unexpectedly; the request was not"
            " processed.",
            "request_id": request_id,
        }
    elif kind is FaultKind.TIMEOUT:
        seconds = rng.choice((10, 15, 30, 60))
        error = {
            "status": 504,
            "code": "GATEWAY_TIMEOUT",
            "message": f"The {tool_name} service did not answer within {seconds} seconds."
            + (" Retry the request." if hints else ""),
            "request_id": request_id,
            **({"retryable": True} if hints else {}),
        }
    elif kind is FaultKind.CONNECTION_REFUSED:
        host = re.sub(r"[^a-z0-9]+", "-", tool_name.lower()).strip("-") or "backend"
        port = rng.choice((443, 8080, 8443, 9000))
        error = {
            "code": "ECONNREFUSED",
            "message": f"Could not connect to the {tool_name} service at"
            f" {host}.internal:{port}: connection refused.",
            **({"retryable": True} if hints else {}),
        }
    else:
        after = rng.choice((5, 10, 20, 30, 60))
        error = {
            "status": 503,
            "code": "SERVICE_UNAVAILABLE",
            "message": f"The {tool_name} service is temporarily unavailable."
            + (" Try again later." if hints else ""),
            "request_id": request_id,
            **({"retry_after_seconds": after} if hints else {}),
        }
    return {"error": error}


def degrade(
    kind: FaultKind,
    observation: Any,
    rng: random.Random,
    previous: Any = None,
    key_fields: Sequence[str] = (),
) -> Degradation:
    """Apply an implicit fault to an observation, leaving the input untouched.

    * ``truncated_list``: the longest list with 2+ items (searched at any depth)
      keeps only its first 1 or 2 items; counts elsewhere are left as they were.
    * ``missing_fields``: 1-2 non-key fields are removed (a record is never emptied).
    * ``null_fields``: 1-2 non-key scalar or list fields become null, or empty
      (``""`` for strings, ``[]`` for lists).
    * ``stale_values``: a ``previous`` observation of the same type that differs
      replaces the answer; otherwise 1-2 non-key fields get older values (non-zero
      numbers scaled by 0.80-0.95, ints kept ints; ISO dates moved 1-30 days back).

    Args:
        kind: An implicit fault kind.
        observation: The clean observation.
        rng: Source of every choice; the same state gives the same result.
        previous: The last clean observation of the same tool, if any (None: none).
        key_fields: Extra field names that identify entities (see module docs).

    Returns:
        The degraded copy, whether anything changed, and what changed.

    Raises:
        ValueError: When ``kind`` is explicit.

    """
    if kind.is_explicit:
        raise ValueError(f"{kind.value} is an explicit fault kind; use explicit_error")
    names = (key_fields,) if isinstance(key_fields, str) else tuple(key_fields)
    is_key = _key_rule(frozenset(names))
    result = copy.deepcopy(observation)
    if kind is FaultKind.TRUNCATED_LIST:
        changes = _truncate_list(result, rng)
    elif kind is FaultKind.MISSING_FIELDS:
        changes = _remove_fields(result, rng, is_key)
    elif kind is FaultKind.NULL_FIELDS:
        changes = _null_fields(result, rng, is_key)
    elif previous is not None and type(previous) is type(observation) and previous != observation:
        return Degradation(
            observation=copy.deepcopy(previous),
            applied=True,
            changes=["replaced with the previous observation of this tool"],
        )
    else:
        changes = _age_fields(result, rng, is_key)
    return Degradation(observation=result, applied=bool(changes), changes=changes)


class _Group(NamedTuple):
    """Records a field-level fault acts on together."""

    label: str
    records: list[dict[str, Any]]
    each: bool


def _key_rule(extra: frozenset[str]) -> Callable[[str], bool]:
    """Make the predicate telling whether a field name is a key (see module docs)."""

    def is_key(name: str) -> bool:
        return (
            name in extra
            or name.lower() in _NAMING_EXACT
            or any(p.search(name) for p in (_ID_SNAKE, _ID_CAMEL, _NAMING_SNAKE, _NAMING_CAMEL))
        )

    return is_key


def _nodes(value: Any, path: _Path = ()) -> Iterator[tuple[_Path, Any]]:
    """Yield every JSON value with its path, in document order (parents first)."""
    yield path, value
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _nodes(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _nodes(child, (*path, index))


def _format_key(key: str | int) -> str:
    """Render one path step: ``[3]``, ``.status`` or ``["odd key"]``."""
    if isinstance(key, int):
        return f"[{key}]"
    return f".{key}" if _PLAIN_KEY.match(key) else f"[{json.dumps(key)}]"


def _format_path(path: _Path) -> str:
    """Render a path JSON-path style, rooted at ``$``."""
    return "$" + "".join(_format_key(step) for step in path)


def _pick_fields(
    root: Any, rng: random.Random, eligible: Callable[[dict[str, Any]], list[str]]
) -> tuple[_Group, list[str]] | None:
    """Choose the record group to degrade and 1-2 of its eligible field names."""
    nodes = list(_nodes(root))
    record_lists = [
        (path, value)
        for path, value in nodes
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value)
    ]
    record_lists.sort(key=lambda item: -len(item[1]))
    picked: tuple[_Group, list[str]] | None = None
    for path, records in record_lists:
        names = list(dict.fromkeys(n for record in records for n in eligible(record)))
        if names:
            picked = (_Group(_format_path(path) + "[*]", records, True), names)
            break
    if picked is None:
        for path, value in nodes:
            if isinstance(value, dict):
                names = eligible(value)
                if names and (picked is None or len(names) > len(picked[1])):
                    picked = (_Group(_format_path(path), [value], False), names)
    if picked is None:
        return None
    group, names = picked
    return group, rng.sample(names, min(len(names), rng.randint(1, 2)))


def _truncate_list(root: Any, rng: random.Random) -> list[str]:
    """Cut the longest list with 2+ items down to its first 1-2 items."""
    lists = [(path, v) for path, v in _nodes(root) if isinstance(v, list) and len(v) >= 2]
    if not lists:
        return []
    path, target = max(lists, key=lambda item: len(item[1]))
    before = len(target)
    keep = rng.randint(1, min(2, before - 1))
    del target[keep:]
    unit = "item" if keep == 1 else "items"
    return [f"truncated {_format_path(path)} from {before} to {keep} {unit}"]


def _remove_fields(root: Any, rng: random.Random, is_key: Callable[[str], bool]) -> list[str]:
    """Remove 1-2 non-key fields from the chosen records, never emptying one."""
    picked = _pick_fields(
        root,
        rng,
        lambda r: [n for n, v in r.items() if not _protected(n, v, is_key)] if len(r) > 1 else [],
    )
    if picked is None:
        return []
    group, names = picked
    changes = []
    for name in names:
        hits = 0
        for record in group.records:
            if name in record and len(record) > 1:
                del record[name]
                hits += 1
        if hits:
            changes.append(f"removed {group.label}{_format_key(name)}{_items(group, hits)}")
    return changes


def _null_fields(root: Any, rng: random.Random, is_key: Callable[[str], bool]) -> list[str]:
    """Set 1-2 non-key scalar or list fields of the chosen records to null or empty."""
    picked = _pick_fields(
        root,
        rng,
        lambda r: [n for n, v in r.items() if not _protected(n, v, is_key) and _nullable(v)],
    )
    if picked is None:
        return []
    group, names = picked
    changes = []
    for name in names:
        empty = rng.random() < 0.5
        shown: dict[str, None] = {}
        hits = 0
        for record in group.records:
            if name in record and _nullable(record[name]):
                old = record[name]
                blank: Any = "" if isinstance(old, str) else [] if isinstance(old, list) else None
                record[name] = blank if empty else None
                shown[json.dumps(record[name])] = None
                hits += 1
        rendered = " or ".join(shown)
        changes.append(f"set {group.label}{_format_key(name)} to {rendered}{_items(group, hits)}")
    return changes


def _age_fields(root: Any, rng: random.Random, is_key: Callable[[str], bool]) -> list[str]:
    """Give 1-2 non-key numeric or date fields of the chosen records older values."""
    picked = _pick_fields(
        root,
        rng,
        lambda r: [n for n, v in r.items() if not is_key(n) and _older(v, 0.9, 1) is not None],
    )
    if picked is None:
        return []
    group, names = picked
    changes = []
    for name in names:
        factor = rng.uniform(0.8, 0.95)
        days = rng.randint(1, 30)
        edits = []
        for record in group.records:
            old = record.get(name)
            new = _older(old, factor, days)
            if new is not None:
                record[name] = new
                edits.append((old, new))
        if not edits:
            continue
        where = f"{group.label}{_format_key(name)}"
        if group.each:
            changes.append(f"changed {where} to older values{_items(group, len(edits))}")
        else:
            ((old, new),) = edits
            changes.append(f"changed {where} from {json.dumps(old)} to {json.dumps(new)}")
    return changes


def _protected(name: str, value: Any, is_key: Callable[[str], bool]) -> bool:
    """Whether a field is a key or holds one at any depth."""
    return is_key(name) or any(
        isinstance(node, dict) and any(is_key(k) for k in node) for _, node in _nodes(value)
    )


def _items(group: _Group, hits: int) -> str:
    """Suffix telling how many list items a change touched."""
    return f" in {hits} item{'s' if hits != 1 else ''}" if group.each else ""


def _nullable(value: Any) -> bool:
    """Whether nulling or emptying the value changes it (scalars and non-empty lists)."""
    if isinstance(value, str | list):
        return len(value) > 0
    return isinstance(value, int | float)


def _older(value: Any, factor: float, days: int) -> Any:
    """Make a number or ISO date string look older; None when it cannot be aged."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        if value == 0:
            return None
        scaled = value * round(factor * 1000) // 1000
        return scaled if scaled != value else value - (1 if value > 0 else -1)
    if isinstance(value, float):
        if value == 0 or not math.isfinite(value):
            return None
        text = repr(value)
        aged = value * factor
        if "." in text and "e" not in text:
            rounded = round(aged, max(2, len(text.partition(".")[2])))
            if rounded not in (0, value):
                aged = rounded
        return aged if aged != value else None
    if isinstance(value, str):
        match = _ISO_DATE.match(value)
        if match is None:
            return None
        try:
            day = dt.date.fromisoformat(match.group(1)) - dt.timedelta(days=days)
        except (ValueError, OverflowError):
            return None
        return day.isoformat() + value[match.end(1) :]
    return None
