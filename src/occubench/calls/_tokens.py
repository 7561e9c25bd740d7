"""Approximate token counts, the way occubench's offline models report usage.

A token is about ``DEFAULT_CHARS_PER_TOKEN`` (four) characters of text. A prompt counts
every message's text, the tool calls an assistant message carries (name and arguments as
JSON) and the tool definitions sent with it (as JSON), as a provider bills them. The
scripted models report this usage, and the cost estimate (``occubench estimate``) predicts
it from the prompts a run will send; real tokenizers differ from it by a share that
depends on the language and on how much of the text is JSON.

``prompt_tokens_ceiling`` is no estimate but an upper bound, for the spending limit: a
token of the tokenizers providers use (byte-level BPE, SentencePiece with byte fallback)
stands for at least one byte of text, so a prompt is billed for no more tokens than the
UTF-8 bytes of its messages and tool definitions, written out as JSON (every field, so
more than any provider sends), plus ``PROMPT_OVERHEAD_TOKENS`` of the provider's own.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant
from inspect_ai.tool import ToolInfo

from occubench.defaults import DEFAULT_CHARS_PER_TOKEN

PROMPT_OVERHEAD_TOKENS = 1024
"""Tokens a provider may add to a prompt of its own: its chat template's markers and a
hidden system prompt for tool use (a few hundred tokens where providers document one)."""


def approx_tokens(text: str) -> int:
    """Tokens of a text: at least one, then one per ``DEFAULT_CHARS_PER_TOKEN`` characters."""
    return max(1, len(text) // DEFAULT_CHARS_PER_TOKEN)


def calls_text(calls: Sequence[tuple[str, dict[str, Any]]]) -> str:
    """Tool calls (name, arguments) as the JSON a provider sends or bills."""
    return json.dumps([{"name": n, "arguments": a} for n, a in calls], ensure_ascii=False)


def message_tokens(message: ChatMessage) -> int:
    """Tokens of one prompt message: its text, plus its tool calls when it carries any."""
    text = message.text
    if isinstance(message, ChatMessageAssistant) and message.tool_calls:
        text += calls_text([(c.function, c.arguments) for c in message.tool_calls])
    return approx_tokens(text)


def tools_tokens(tools: Sequence[ToolInfo]) -> int:
    """Tokens of the tool definitions sent with a prompt (0 without tools)."""
    if not tools:
        return 0
    return approx_tokens(json.dumps([t.model_dump(exclude_none=True) for t in tools]))


def prompt_tokens(messages: Sequence[ChatMessage], tools: Sequence[ToolInfo] = ()) -> int:
    """Input tokens of one model call: every message and the tool definitions."""
    return sum(message_tokens(m) for m in messages) + tools_tokens(tools)


def reply_tokens(content: str, calls: Sequence[tuple[str, dict[str, Any]]] = ()) -> int:
    """Output tokens of one reply: its text and its tool calls."""
    return approx_tokens(content + (calls_text(calls) if calls else ""))


def prompt_tokens_ceiling(messages: Sequence[ChatMessage], tools: Sequence[ToolInfo] = ()) -> int:
    """At most the input tokens one model call is billed for (module doc)."""
    parts = [*messages, *tools]
    size = sum(
        len(p.model_dump_json(exclude_none=True).encode(errors="surrogatepass")) for p in parts
    )
    return size + PROMPT_OVERHEAD_TOKENS
