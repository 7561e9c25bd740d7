"""A finished model answer told as the event stream a streaming client expects.

Inspect's agent bridge answers a request whole (it does not stream), so a streaming
request to the bridge endpoint is answered with the whole answer, as server-sent events
in the order the provider sends them: each block or item opened, its text or arguments
in one delta, closed, then the end of the message. A client that accumulates the
events (the SDKs' stream helpers, Claude Code, Codex, the agent frameworks) ends with the
same answer as the non-streaming request gives. The text does not arrive token by token:
the first event is sent once the whole generation is done.

- OpenAI chat completions (docs: OpenAI API, "Streaming", the chat completion chunk
  object; openai SDK: ``types/chat/chat_completion_chunk.py``): unnamed events, each a
  ``chat.completion.chunk``: per choice its role, its content or refusal, each tool call
  (its index, id, name and arguments), then its ``finish_reason``; with
  ``stream_options.include_usage`` a last chunk with no choices and the usage; then
  ``data: [DONE]``.

- Anthropic Messages (docs: Anthropic API, "Streaming Messages", event flow; anthropic
  SDK: ``types/raw_message_stream_event.py``): ``message_start`` (the message with no
  content yet), per content block ``content_block_start``, ``content_block_delta``,
  ``content_block_stop``, then ``message_delta`` (stop reason, cumulative usage) and
  ``message_stop``.
- OpenAI Responses (docs: OpenAI API, "Streaming API responses"; openai SDK:
  ``types/responses/response_stream_event.py``): ``response.created``,
  ``response.in_progress``, per output item ``response.output_item.added``, its parts
  (``response.content_part.added``, ``response.output_text.delta`` / ``.done``,
  ``response.content_part.done``) or arguments (``response.function_call_arguments.delta``
  / ``.done``), ``response.output_item.done``, then ``response.completed``; every event
  numbered (``sequence_number``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

Event = tuple[str | None, dict[str, Any] | None]
"""An event's name (None: unnamed) and its data (None: the chat stream's ``[DONE]``)."""

Events = Callable[[dict[str, Any], dict[str, Any]], Iterator[Event]]
"""A wire's answer (as JSON data) as its events, given the request as it was sent."""


def sse(events: Iterator[Event]) -> Iterator[bytes]:
    """Events as server-sent events (``event:`` name if any, ``data:`` JSON, a blank line).

    The JSON is ASCII (escaped): any text, a lone surrogate included, encodes.
    """
    for name, data in events:
        named = f"event: {name}\n" if name else ""
        text = "[DONE]" if data is None else json.dumps(data)
        yield f"{named}data: {text}\n\n".encode()


def chat_events(completion: dict[str, Any], asked: dict[str, Any]) -> Iterator[Event]:
    """A chat completion (as JSON data) as its chunks; the usage if the request asked."""
    kept = ("id", "created", "model", "system_fingerprint", "service_tier")
    base = {k: completion[k] for k in kept if k in completion} | {"object": "chat.completion.chunk"}

    def chunk(index: int, delta: dict[str, Any], finish: str | None = None) -> Event:
        choice = {"index": index, "delta": delta, "finish_reason": finish}
        return None, {**base, "choices": [choice]}

    for choice in completion.get("choices") or []:
        index, message = choice.get("index", 0), choice.get("message") or {}
        yield chunk(index, {"role": "assistant", "content": ""})
        for key in ("content", "refusal"):
            if message.get(key):
                yield chunk(index, {key: message[key]})
        for number, call in enumerate(message.get("tool_calls") or []):
            told = {k: call[k] for k in ("id", "type", "function") if k in call}
            yield chunk(index, {"tool_calls": [{"index": number, **told}]})
        yield chunk(index, {}, choice.get("finish_reason") or "stop")
    options = asked.get("stream_options")
    if isinstance(options, dict) and options.get("include_usage"):
        yield None, {**base, "choices": [], "usage": completion.get("usage")}
    yield None, None


def _anthropic_block(block: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A content block as opened (empty) and the deltas that fill it.

    text, thinking and tool_use blocks stream their content (anthropic SDK:
    ``types/raw_content_block_delta.py``: text_delta, thinking_delta, signature_delta,
    input_json_delta, citations_delta); any other block (redacted thinking, a server
    tool's use or result) comes whole in its start event.
    """
    kind = block.get("type")
    if kind == "text":
        deltas = [{"type": "citations_delta", "citation": c} for c in block.get("citations") or []]
        filled = {"type": "text_delta", "text": block["text"]}
        return {"type": "text", "text": ""}, [filled, *deltas]
    if kind == "thinking":
        opened = {"type": "thinking", "thinking": "", "signature": ""}
        return opened, [
            {"type": "thinking_delta", "thinking": block["thinking"]},
            {"type": "signature_delta", "signature": block.get("signature") or ""},
        ]
    if kind == "tool_use":
        partial = json.dumps(block.get("input") or {}, ensure_ascii=False)
        return {**block, "input": {}}, [{"type": "input_json_delta", "partial_json": partial}]
    return block, []


def anthropic_events(message: dict[str, Any], asked: dict[str, Any]) -> Iterator[Event]:
    """A Messages API message (as JSON data) as its stream of events."""
    usage = message.get("usage") or {}
    opened = {**message, "content": [], "stop_reason": None, "stop_sequence": None}
    yield (
        "message_start",
        {
            "type": "message_start",
            "message": {**opened, "usage": {**usage, "output_tokens": 0}},
        },
    )
    for index, block in enumerate(message.get("content") or []):
        start, deltas = _anthropic_block(block)
        yield (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": index,
                "content_block": start,
            },
        )
        for delta in deltas:
            yield (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": delta,
                },
            )
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    stop = {key: message.get(key) for key in ("stop_reason", "stop_sequence")}
    yield "message_delta", {"type": "message_delta", "delta": stop, "usage": usage}
    yield "message_stop", {"type": "message_stop"}


class _Numbered:
    """Responses events, each with the next ``sequence_number``."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, kind: str, **data: Any) -> Event:
        event = (kind, {"type": kind, "sequence_number": self.count, **data})
        self.count += 1
        return event


def _message_parts(event: _Numbered, item: dict[str, Any], index: int) -> Iterator[Event]:
    """An output message's content parts: each opened, its text in one delta, closed."""
    where = {"item_id": item.get("id", ""), "output_index": index}
    for part_index, part in enumerate(item.get("content") or []):
        at = {**where, "content_index": part_index}
        if part.get("type") == "output_text":
            yield event("response.content_part.added", **at, part={**part, "text": ""})
            yield event("response.output_text.delta", **at, delta=part["text"], logprobs=[])
            yield event("response.output_text.done", **at, text=part["text"], logprobs=[])
        elif part.get("type") == "refusal":
            yield event("response.content_part.added", **at, part={**part, "refusal": ""})
            yield event("response.refusal.delta", **at, delta=part["refusal"])
            yield event("response.refusal.done", **at, refusal=part["refusal"])
        else:
            yield event("response.content_part.added", **at, part=part)
        yield event("response.content_part.done", **at, part=part)


def responses_events(response: dict[str, Any], asked: dict[str, Any]) -> Iterator[Event]:
    """A Responses API response (as JSON data) as its stream of events."""
    event = _Numbered()
    started = {k: v for k, v in response.items() if k != "usage"}
    started |= {"status": "in_progress", "output": []}
    yield event("response.created", response=started)
    yield event("response.in_progress", response=started)
    for index, item in enumerate(response.get("output") or []):
        kind = item.get("type")
        opened = dict(item)
        if kind == "message":
            opened |= {"status": "in_progress", "content": []}
        elif kind == "function_call":
            opened |= {"status": "in_progress", "arguments": ""}
        yield event("response.output_item.added", output_index=index, item=opened)
        if kind == "message":
            yield from _message_parts(event, item, index)
        elif kind == "function_call":
            where = {"item_id": item.get("id", ""), "output_index": index}
            yield event("response.function_call_arguments.delta", **where, delta=item["arguments"])
            yield event(
                "response.function_call_arguments.done", **where, arguments=item["arguments"]
            )
        yield event("response.output_item.done", output_index=index, item=item)
    yield event("response.completed", response=response)
