"""Explicit state mode: the simulator returns a JSON Patch of the state with each observation.

In the default ``history`` mode the state lives only in the conversation, as in the
paper. In ``explicit`` mode every action message also carries the current state, the
simulator answers with the observation and an RFC 6902 patch, we apply the patch
(jsonpatch), and the state after every step is kept in the log. A patch may not grow
the state past ``DEFAULT_MAX_STATE_SIZE`` characters of JSON (a few ``copy`` operations double it
each): it is refused before the growing operation runs, and re-asked like a patch that
does not apply.
"""

from __future__ import annotations

import copy
import json
import re
from enum import Enum
from typing import Any, NamedTuple

import jsonpatch
import jsonpointer

from occubench.defaults import DEFAULT_MAX_STATE_SIZE
from occubench.simulator._parse import ObservationParseError
from occubench.text import loads


class StateMode(str, Enum):
    """Where the environment's state lives."""

    HISTORY = "history"
    """Implicit in the simulator's history (the paper's way; default)."""
    EXPLICIT = "explicit"
    """Kept by us as JSON, changed only by the simulator's patches."""


STATE_CONTRACT = """
### Explicit state (fixed by the harness)
- Each action message also carries "current_state": the environment's state right now.
  It is authoritative: it supersedes the initial state shown above.
- After the observation, reply with the change the action makes to that state as an
  RFC 6902 JSON Patch inside <state_patch></state_patch> tags, for example
  <state_patch>[{"op": "replace", "path": "/orders/0/status", "value": "shipped"}]</state_patch>.
  Reply <state_patch>[]</state_patch> when the action changes nothing.
"""

_PATCH = re.compile(r"<state_patch>(.*?)</state_patch>", re.DOTALL | re.IGNORECASE)


class PatchError(ValueError):
    """A reply's state patch is missing, malformed, or does not apply."""


def state_action(tool: str, arguments: dict[str, Any], state: dict[str, Any]) -> str:
    """The action message of explicit mode: the action and the current state."""
    return json.dumps(
        {"name": tool, "arguments": arguments, "current_state": state}, ensure_ascii=False
    )


class PatchedState(NamedTuple):
    """A reply's state patch and the state it leads to."""

    patch: list[dict[str, Any]]
    """The JSON Patch operations the reply gave."""
    state: dict[str, Any]
    """The state after them."""


def apply_reply_patch(
    text: str, state: dict[str, Any], max_size: int = DEFAULT_MAX_STATE_SIZE
) -> PatchedState:
    """Read the ``<state_patch>`` of a reply and apply it to ``state``.

    Returns:
        The patch and the new state (``state`` itself is not changed).

    Raises:
        PatchError: when the patch is missing, not a JSON list of operations, does not
            apply to the state, or would grow it past ``max_size`` characters of JSON.
    """
    found = _PATCH.findall(text)
    if not found:
        raise PatchError("the reply has no <state_patch> block")
    try:
        patch = loads(found[-1].strip() or "[]")
    except json.JSONDecodeError as e:
        raise PatchError(f"the state patch is not JSON: {e.msg}") from None
    if not isinstance(patch, list) or not all(isinstance(op, dict) for op in patch):
        raise PatchError("the state patch must be a JSON list of operations")
    try:
        new_state = _bounded_apply(state, patch, max_size)
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException, TypeError) as e:
        raise PatchError(f"the state patch does not apply: {e}") from None
    if not isinstance(new_state, dict):
        raise PatchError("the state patch must leave the state a JSON object")
    return PatchedState(patch, new_state)


def _size(value: Any) -> int:
    """Characters of ``value``'s JSON."""
    return len(json.dumps(value, ensure_ascii=False))


def _growth(state: Any, op: dict[str, Any]) -> int:
    """At most how many characters of JSON one operation adds to the state."""
    name = op.get("op")
    growth = len(str(op.get("path", "")))
    if name in ("add", "replace"):
        return growth + _size(op.get("value"))
    if name == "copy":
        try:
            return growth + _size(jsonpointer.resolve_pointer(state, str(op.get("from", ""))))
        except (jsonpointer.JsonPointerException, TypeError):
            return growth  # the operation itself will fail and say why
    return growth


def _bounded_apply(state: dict[str, Any], patch: list[dict[str, Any]], max_size: int) -> Any:
    """``patch`` applied to a copy of ``state``, one operation at a time.

    An operation that could take the state past ``max_size`` is refused before it runs.
    """
    current: Any = copy.deepcopy(state)
    size = _size(current)
    for index, op in enumerate(patch):
        growth = _growth(current, op)
        if size + growth > max_size:
            size = _size(current)  # the running figure is an upper bound: measure
            if size + growth > max_size:
                raise PatchError(
                    f"the state patch would grow the state past {max_size} characters of "
                    f"JSON (operation {index}: {op.get('op')!r} at {op.get('path')!r})"
                )
        current = jsonpatch.JsonPatch([op]).apply(current, in_place=True)
        size += growth
    return current


def reask_for(error: Exception) -> str:
    """The correction message for a reply that failed to parse or patch."""
    if isinstance(error, PatchError):
        return (
            f"Your state patch was rejected: {error}. Reply again with the observation in "
            "<observation></observation> tags and a valid RFC 6902 patch of current_state in "
            "<state_patch></state_patch> tags."
        )
    if isinstance(error, ObservationParseError):
        return (
            f"Your last reply was not usable: {error}. Reply again with only the "
            "observation: one whole JSON object inside <observation></observation> tags."
        )
    raise TypeError(f"not a reply error: {error!r}")
