"""OpenAI chat completions: an answer's shape, and a whole answer told as its chunks.

Docs: OpenAI API, "Streaming", the chat completion chunk object; openai SDK:
``types/chat/chat_completion.py``, ``types/chat/chat_completion_chunk.py``. The stream's
events are unnamed, each a ``chat.completion.chunk``: per choice its role, its content or
refusal, each tool call (its index, id, name and arguments), then its
``finish_reason``; with ``stream_options.include_usage`` a last chunk with no choices
and the usage; then ``data: [DONE]``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from occubench.providers._sse import Event

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletion  # types only: `--help` loads no SDK


def completion_chunks(completion: ChatCompletion, include_usage: bool = False) -> Iterator[Event]:
    """A completion as its chunks, the usage last if asked, then ``[DONE]``."""
    data = completion.model_dump(mode="json", exclude_none=True)
    kept = ("id", "created", "model", "system_fingerprint", "service_tier")
    base = {k: data[k] for k in kept if k in data} | {"object": "chat.completion.chunk"}

    def chunk(index: int, delta: dict[str, Any], finish: str | None = None) -> Event:
        choice = {"index": index, "delta": delta, "finish_reason": finish}
        return None, {**base, "choices": [choice]}

    for choice in data.get("choices") or []:
        index, message = choice.get("index", 0), choice.get("message") or {}
        yield chunk(index, {"role": "assistant", "content": ""})
        for key in ("content", "refusal"):
            if message.get(key):
                yield chunk(index, {key: message[key]})
        for number, call in enumerate(message.get("tool_calls") or []):
            told = {k: call[k] for k in ("id", "type", "function") if k in call}
            yield chunk(index, {"tool_calls": [{"index": number, **told}]})
        yield chunk(index, {}, choice.get("finish_reason") or "stop")
    if include_usage:
        yield None, {**base, "choices": [], "usage": data.get("usage")}
    yield None, None


def usage_asked(request: Mapping[str, Any]) -> bool:
    """Whether a streaming request asks for the usage chunk (``stream_options``)."""
    options = request.get("stream_options")
    return isinstance(options, dict) and bool(options.get("include_usage"))


class FunctionCall(NamedTuple):
    """One tool call of an answer."""

    id: str
    name: str
    arguments: Mapping[str, Any]


def function_calls(tool_calls: Sequence[FunctionCall]) -> list[dict[str, Any]]:
    """An assistant message's ``tool_calls`` (as JSON data)."""
    return [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(a)}}
        for call_id, name, a in tool_calls
    ]


def completion_body(
    *,
    completion_id: str,
    model: str,
    content: str | None,
    tool_calls: Sequence[FunctionCall],
    prompt_tokens: int,
    completion_tokens: int,
    created: int = 0,
    message_extra: Mapping[str, Any] | None = None,
    usage_extra: Mapping[str, Any] | None = None,
    choice_extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``chat.completion`` (as JSON data) of one choice: its text and tool calls.

    Its finish reason is ``tool_calls`` when it calls a tool, else ``stop``. An endpoint's
    own members follow the standard ones: the message's (its reasoning) after its
    content, the usage's after the totals, the choice's after its finish reason.
    """
    calls = function_calls(tool_calls)
    message: dict[str, Any] = {"role": "assistant", "content": content, **(message_extra or {})}
    if calls:
        message["tool_calls"] = calls
    choice = {
        "index": 0,
        "message": message,
        "finish_reason": "tool_calls" if calls else "stop",
        **(choice_extra or {}),
    }
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [choice],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            **(usage_extra or {}),
        },
    }
