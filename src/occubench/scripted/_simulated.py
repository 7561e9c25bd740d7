"""What a scripted simulator reads and writes, in either protocol's layout.

A scripted simulator reads the last action from the conversation (occubench's layout: a
JSON user message; the paper's: an ``<agent_action>`` block whose ``arguments`` are the
agent's raw argument string) and answers in the tags its system prompt asks for
(``<predicted_observation>`` in the paper's layout, ``<observation>`` in occubench's), as
a real simulator model would.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageSystem

_ACTION_BLOCK = re.compile(r"<agent_action>\s*(.*?)\s*</agent_action>", re.DOTALL)


@dataclass
class Action:
    """One action as a simulator is asked it."""

    name: str | None
    arguments: dict[str, Any]
    state: dict[str, Any] | None = None
    """Explicit state mode: the current state the action carries."""
    raw: dict[str, Any] = field(default_factory=dict)
    """The action message's whole JSON object."""


def read_action(message: ChatMessage) -> Action:
    """The action of a simulator's user message (an empty one when it holds none)."""
    text = message.text
    block = _ACTION_BLOCK.search(text)
    try:
        value = json.loads(block.group(1) if block else text)
    except json.JSONDecodeError:
        value = {}
    value = value if isinstance(value, dict) else {}
    arguments = value.get("arguments") or {}
    if isinstance(arguments, str):  # the paper's layout: the agent's raw argument string
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            arguments = {"_raw": arguments}
    return Action(
        name=value.get("name"),
        arguments=arguments if isinstance(arguments, dict) else {"_raw": arguments},
        state=value.get("current_state"),
        raw=value,
    )


def last_action(messages: list[ChatMessage]) -> Action:
    """The action of the conversation's last message."""
    return read_action(messages[-1]) if messages else Action(name=None, arguments={})


def system_text(messages: list[ChatMessage]) -> str:
    """The conversation's system prompt ("" without one)."""
    return next((m.text for m in messages if isinstance(m, ChatMessageSystem)), "")


def observation_reply(
    messages: list[ChatMessage], observation: Any, patch: list[dict[str, Any]] | None = None
) -> str:
    """An observation in the tags the system prompt asks for, with a state patch if given."""
    tag = (
        "predicted_observation"
        if "<predicted_observation>" in system_text(messages)
        else "observation"
    )
    reply = f"<{tag}>{json.dumps(observation, ensure_ascii=False)}</{tag}>"
    if patch is not None:
        reply += f"<state_patch>{json.dumps(patch)}</state_patch>"
    return reply
