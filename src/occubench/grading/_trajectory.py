"""Render an agent's trajectory as inert text for the judge.

Everything the agent or the simulator wrote is data. Each block's content is
escaped (``&``, ``<``, ``>`` become entities), so nothing inside a block can close it,
open another, or pose as a delimiter of ours.

occubench's trajectory (``render_trajectory``) is one JSON object per line, one line per
turn, and only those lines are turns: every text, argument and observation is a JSON
value inside its line (newlines and other line breaks escaped), and tool names are
cleaned to the characters a tool name may hold. So an agent answer that spells out
``[call 1] get_x({})`` or a fake observation, or a tool named with a newline and a fake
observation, stays inside the string it was written in. The paper's trajectory
(``render_paper_trajectory``) is the release's text, line by line, as the release sends it.
"""

from __future__ import annotations

import json
import re
from html import escape
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool, ChatMessageUser

from occubench.agent import USER_TURN_METADATA, raw_arguments
from occubench.grading._checks import ToolCall
from occubench.text import loads


def neutralize(text: str) -> str:
    """Make text safe to place inside a delimited block of the judge prompt."""
    return escape(text, quote=False)


def block(tag: str, content: str) -> str:
    """A delimited data block with neutralised content."""
    return f"<{tag}>\n{neutralize(content)}\n</{tag}>"


def tool_calls(messages: list[ChatMessage]) -> list[ToolCall]:
    """The agent's tool calls in order, as sent."""
    return [
        ToolCall(tool=call.function, arguments=call.arguments or {})
        for m in messages
        if isinstance(m, ChatMessageAssistant)
        for call in (m.tool_calls or [])
    ]


TRAJECTORY_ROLES = ("user", "agent", "call", "observation", "tool_error")
"""The ``role`` of a line of ``render_trajectory``."""

_NOT_IN_A_NAME = re.compile(r"[^A-Za-z0-9_.-]")
_LINE_BREAKS = {"\u0085": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}
MAX_TOOL_NAME = 64


def clean_tool_name(name: str) -> str:
    """A tool name as the judge is shown it: letters, digits, ``_.-`` (others ``_``), 64 at most."""
    return _NOT_IN_A_NAME.sub("_", name)[:MAX_TOOL_NAME] or "_"


def _line(**fields: Any) -> str:
    """One turn: a JSON object on one line (JSON escapes newlines; other breaks too)."""
    text = json.dumps(fields, ensure_ascii=False)
    for char, escaped in _LINE_BREAKS.items():
        text = text.replace(char, escaped)
    return text


def _result(text: str) -> Any:
    """An observation's JSON value, or its text when it is not JSON."""
    try:
        return loads(text)
    except (ValueError, RecursionError):
        return text


def render_trajectory(messages: list[ChatMessage]) -> str:
    """The interaction after the system prompt, one JSON object a line (module doc).

    Lines: ``{"role": "user", "text": ...}``, ``{"role": "agent", "text": ...}``,
    ``{"role": "call", "call": N, "tool": ..., "arguments": {...}}``, and for each call
    ``{"role": "observation", "call": N, "tool": ..., "result": ...}`` or
    ``{"role": "tool_error", "call": N, "tool": ..., "error": ...}``.
    """
    lines: list[str] = []
    numbers: dict[str, int] = {}
    for message in messages[1:] if messages else []:
        if isinstance(message, ChatMessageAssistant):
            if message.text.strip():
                lines.append(_line(role="agent", text=message.text.strip()))
            for call in message.tool_calls or []:
                numbers[call.id] = len(numbers) + 1
                tool = clean_tool_name(call.function)
                lines.append(
                    _line(role="call", call=numbers[call.id], tool=tool, arguments=call.arguments)
                )
        elif isinstance(message, ChatMessageTool):
            number = numbers.get(message.tool_call_id or "")
            tool = clean_tool_name(message.function or "")
            if message.error is not None:
                error = f"{message.error.type}: {message.error.message}"
                lines.append(_line(role="tool_error", call=number, tool=tool, error=error))
            else:
                result = _result(message.text)
                lines.append(_line(role="observation", call=number, tool=tool, result=result))
        elif isinstance(message, ChatMessageUser):
            lines.append(_line(role="user", text=message.text))
    return "\n".join(lines) if lines else "(no interaction)"


def render_paper_trajectory(messages: list[ChatMessage]) -> str:
    """The trajectory text the release's harness builds, byte for byte.

    In order: ``[Agent Response]: <content>`` for each assistant message with content,
    and for each tool call ``[Agent Action]: Call tool `<name>` with arguments: <raw
    arguments>`` followed by ``[Environment Observation] (from <name>): <observation>``;
    each entry with a newline before and after it (the release appends a newline, the
    entry, a newline), so entries are apart by a blank line. The arguments are the
    agent's own string (``agent.raw_arguments``), as the release passes them on.

    On a task with a user (an extension: the release has none) each of the user's turns
    is an entry too, ``[User Response]: <what the user said>``, where it came, but for the
    words that closed the conversation after the agent's last message: the last entry
    stays the agent's final answer, as the release's judge reads it. A trajectory
    without a user turn is the release's text unchanged.
    """
    results = {m.tool_call_id: m for m in messages if isinstance(m, ChatMessageTool)}
    entries: list[str] = []
    last_agent = max(
        (i for i, m in enumerate(messages) if isinstance(m, ChatMessageAssistant)), default=-1
    )
    for index, message in enumerate(messages):
        if isinstance(message, ChatMessageUser) and USER_TURN_METADATA in (message.metadata or {}):
            if index > last_agent:
                continue
            entries.append(f"[User Response]: {message.text}")
            continue
        if not isinstance(message, ChatMessageAssistant):
            continue
        if message.text:
            entries.append(f"[Agent Response]: {message.text}")
        for call in message.tool_calls or []:
            entries.append(
                f"[Agent Action]: Call tool `{call.function}` with arguments: {raw_arguments(call)}"
            )
            result = results.get(call.id)
            if result is not None:
                text = result.error.message if result.error is not None else result.text
                entries.append(f"[Environment Observation] (from {call.function}): {text}")
    return "".join(f"\n{entry}\n" for entry in entries)
