"""Explicit state mode: the simulator returns a JSON Patch of the state with each observation.

In the default ``history`` mode the state lives only in the conversation, as in the
paper. In ``explicit`` mode every action message also carries the current state, the
simulator answers with the observation and an RFC 6902 patch, we apply the patch
(jsonpatch), and the state after every step is kept in the log.
"""

from __future__ import annotations

import json
import re
from enum import Enum
from typing import Any

import jsonpatch
import jsonpointer

from occubench.codepoints import loads
from occubench.simulator._parse import ObservationParseError


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


def apply_reply_patch(
    text: str, state: dict[str, Any]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Read the ``<state_patch>`` of a reply and apply it to ``state``.

    Returns:
        The patch and the new state (``state`` itself is not changed).

    Raises:
        PatchError: when the patch is missing, not a JSON list of operations, or
            does not apply to the state.
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
        new_state = jsonpatch.apply_patch(state, patch, in_place=False)
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException, TypeError) as e:
        raise PatchError(f"the state patch does not apply: {e}") from None
    if not isinstance(new_state, dict):
        raise PatchError("the state patch must leave the state a JSON object")
    return patch, new_state


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
