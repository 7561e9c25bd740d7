"""Render an agent's trajectory as inert text for the judge.

Everything the agent or the simulator wrote is data. Each block's content is
escaped (``&``, ``<``, ``>`` become entities), so nothing inside a block can close it,
open another, or pose as a delimiter of ours.
"""

from __future__ import annotations

import json
from html import escape

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool, ChatMessageUser

from occubench.grading._checks import ToolCall


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


def render_trajectory(messages: list[ChatMessage]) -> str:
    """The interaction after the instruction: agent turns, calls and observations."""
    lines: list[str] = []
    step = 0
    for message in messages[1:] if messages else []:
        if isinstance(message, ChatMessageAssistant):
            if message.text.strip():
                lines.append(f"[agent] {message.text.strip()}")
            for call in message.tool_calls or []:
                step += 1
                args = json.dumps(call.arguments, ensure_ascii=False)
                lines.append(f"[call {step}] {call.function}({args})")
        elif isinstance(message, ChatMessageTool):
            if message.error is not None:
                lines.append(f"[tool error] {message.error.type}: {message.error.message}")
            else:
                lines.append(f"[observation] {message.text}")
        elif isinstance(message, ChatMessageUser):
            lines.append(f"[user] {message.text}")
    return "\n".join(lines) if lines else "(no interaction)"


def render_paper_trajectory(messages: list[ChatMessage]) -> str:
    """The trajectory text the release's verifier reads.

    In order: ``[Agent Response]: <text>`` for each non-empty assistant text, and for
    each tool call ``[Agent Action]: Call tool `<name>` with arguments: <raw arguments>``
    followed by ``[Environment Observation] (from <name>): <observation>``; entries apart by
    blank lines.
    """
    results = {m.tool_call_id: m for m in messages if isinstance(m, ChatMessageTool)}
    entries: list[str] = []
    for message in messages:
        if not isinstance(message, ChatMessageAssistant):
            continue
        if message.text.strip():
            entries.append(f"[Agent Response]: {message.text}")
        for call in message.tool_calls or []:
            arguments = json.dumps(call.arguments, ensure_ascii=False)
            entries.append(
                f"[Agent Action]: Call tool `{call.function}` with arguments: {arguments}"
            )
            result = results.get(call.id)
            if result is not None:
                text = result.error.message if result.error is not None else result.text
                entries.append(f"[Environment Observation] (from {call.function}): {text}")
    return "\n\n".join(entries)
