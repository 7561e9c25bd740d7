"""The ``canned`` simulator: answers exact calls from the env's known observations.

It reads the ``<canned_observations>`` block that ``render_system_prompt`` puts in
the simulator's system prompt when an env config has ``canned_observations``, so it
sees exactly what a real simulator model would see.
"""

from __future__ import annotations

import json
import re
from datetime import date, timedelta
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageSystem
from inspect_ai.tool import ToolInfo

from occubench.faults import SEMANTIC_FAULT_PROMPT
from occubench.scripted._reply import Reply
from occubench.scripted._simulated import last_action, observation_reply, system_text

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_CANNED = re.compile(r"<canned_observations>\s*(.*?)\s*</canned_observations>", re.DOTALL)


def canonical(arguments: Any) -> str:
    """A comparable form of call arguments (key order does not matter)."""
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False)


def canned_observations(messages: list[ChatMessage]) -> list[dict[str, Any]]:
    """The known observations listed in the system prompt (empty when there are none)."""
    system = next((m.text for m in messages if isinstance(m, ChatMessageSystem)), "")
    found = _CANNED.search(system)
    return json.loads(found.group(1)) if found else []


def semantic_variant(observation: Any) -> Any:
    """A deterministic "subtly wrong" copy of an observation.

    The first number of a non-id field is multiplied by 10 (a unit swap); without one,
    the first ISO date moves one day later.
    """
    altered = json.loads(json.dumps(observation))

    def visit(node: Any, want: type) -> bool:
        items = (
            node.items()
            if isinstance(node, dict)
            else enumerate(node)
            if isinstance(node, list)
            else []
        )
        for key, value in items:
            is_id = isinstance(key, str) and (key == "id" or key.endswith("_id"))
            if (
                want is float
                and isinstance(value, int | float)
                and not isinstance(value, bool)
                and not is_id
                and value
            ):
                node[key] = value * 10
                return True
            if want is str and isinstance(value, str) and _DATE.fullmatch(value):
                day = date.fromisoformat(value) + timedelta(days=1)
                node[key] = day.isoformat()
                return True
            if isinstance(value, dict | list) and visit(value, want):
                return True
        return False

    if not visit(altered, float):
        visit(altered, str)
    return altered


def canned_simulator(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
    """The known observation of the last action, or a structured not-found error.

    Asked for a semantic fault (the system prompt is ``SEMANTIC_FAULT_PROMPT``), it
    returns ``semantic_variant`` of the observation it is given.
    """
    if system_text(messages) == SEMANTIC_FAULT_PROMPT:
        given = json.loads(messages[-1].text).get("observation", {})
        return Reply(content=f"<observation>{json.dumps(semantic_variant(given))}</observation>")
    action = last_action(messages)
    patch: list[dict[str, Any]] | None = [] if action.state is not None else None  # lookups
    return Reply(content=observation_reply(messages, canned_observation(messages), patch))


def canned_observation(messages: list[ChatMessage]) -> dict[str, Any]:
    """The known observation of the conversation's last action, or a not-found error."""
    action = last_action(messages)
    name, arguments = action.name, action.arguments
    observation: dict[str, Any] = {
        "error": {
            "code": "NOT_FOUND",
            "message": f"no record for {name} with arguments {canonical(arguments)}",
        }
    }
    for known in canned_observations(messages):
        if known["tool"] == name and canonical(known["arguments"]) == canonical(arguments):
            observation = known["observation"]
            break
    return observation
