"""Anthropic's Messages API: its reasoning blocks, and a whole answer told as its stream.

Docs: Anthropic API, "Streaming Messages" (event flow); anthropic SDK:
``types/raw_message_stream_event.py``. ``message_start`` carries the message with no
content yet (no stop reason, no output tokens), an optional ``ping``, then per content
block ``content_block_start``, ``content_block_delta`` and ``content_block_stop``, then
``message_delta`` (stop reason, cumulative usage) and ``message_stop``.

Text, thinking and tool-use blocks stream their content (anthropic SDK:
``types/raw_content_block_delta.py``: ``text_delta``, ``thinking_delta``,
``signature_delta``, ``input_json_delta``, ``citations_delta``); any other block
(redacted thinking, a server tool's use or result) comes whole in its start event.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from occubench.providers._sse import Event, Pieces, whole

if TYPE_CHECKING:  # the answers come from the SDK's client; this module never imports it
    from anthropic.types import Message
    from anthropic.types.beta import BetaMessage


THINKING_FIELDS = {
    "thinking": ("type", "thinking", "signature"),
    "redacted_thinking": ("type", "data"),
}
"""The reasoning blocks and the fields a request sends back of each (anthropic SDK:
``thinking_block_param.py``, ``redacted_thinking_block_param.py``)."""


def message_blocks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A request message's content as blocks (a non-empty string is one text block)."""
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _block(block: dict[str, Any], pieces: Pieces) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A content block (as JSON data) as opened (empty) and the deltas that fill it."""
    kind = block.get("type")
    if kind == "text":
        filled = [{"type": "text_delta", "text": p} for p in pieces(block["text"])]
        cited = [{"type": "citations_delta", "citation": c} for c in block.get("citations") or []]
        return {"type": "text", "text": ""}, [*filled, *cited]
    if kind == "thinking":
        opened = {"type": "thinking", "thinking": "", "signature": ""}
        thought = [{"type": "thinking_delta", "thinking": p} for p in pieces(block["thinking"])]
        signed = {"type": "signature_delta", "signature": block.get("signature") or ""}
        return opened, [*thought, signed]
    if kind == "tool_use":
        partial = json.dumps(block.get("input") or {}, ensure_ascii=False)
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces(partial)]
        return {**block, "input": {}}, deltas
    return block, []


def message_events(
    message: Message | BetaMessage, *, pieces: Pieces = whole, ping: bool = False
) -> Iterator[Event]:
    """A message as the events of its stream.

    Args:
        message: The whole answer.
        pieces: How each text (a block's text or thinking, a tool use's input as JSON) is
            cut into deltas.
        ping: Send a ``ping`` after ``message_start``, as the API does.
    """
    data = message.model_dump(mode="json", exclude_none=True)
    usage = data.get("usage") or {}
    opened = {**data, "content": [], "stop_reason": None, "stop_sequence": None}
    started = {**opened, "usage": {**usage, "output_tokens": 0}}
    yield "message_start", {"type": "message_start", "message": started}
    if ping:
        yield "ping", {"type": "ping"}
    for index, block in enumerate(data.get("content") or []):
        start, deltas = _block(block, pieces)
        at = {"index": index}
        yield "content_block_start", {"type": "content_block_start", **at, "content_block": start}
        for delta in deltas:
            yield "content_block_delta", {"type": "content_block_delta", **at, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", **at}
    stop = {key: data.get(key) for key in ("stop_reason", "stop_sequence")}
    yield "message_delta", {"type": "message_delta", "delta": stop, "usage": usage}
    yield "message_stop", {"type": "message_stop"}
