"""OpenAI's Responses API: a whole response told as the events of its stream.

Docs: OpenAI API, "Streaming API responses"; openai SDK:
``types/responses/response_stream_event.py``. ``response.created`` and
``response.in_progress`` (the response with no output yet), per output item
``response.output_item.added``, its content parts (``response.content_part.added``,
``response.output_text.delta`` / ``.done`` or ``response.refusal.delta`` / ``.done``,
``response.content_part.done``) or its arguments
(``response.function_call_arguments.delta`` / ``.done``), ``response.output_item.done``,
then ``response.completed``; every event numbered (``sequence_number``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from occubench.providers._sse import Event

if TYPE_CHECKING:
    from openai.types.responses import Response  # types only: `--help` loads no SDK


def assistant_text(item: Mapping[str, Any]) -> str | None:
    """An input item's text if it is an assistant message (None: it is not one).

    A message's ``content`` is a string or parts, whose texts are joined (openai SDK:
    ``types/responses/response_input_param.py``); an item without ``type`` is a message.
    """
    if item.get("role") != "assistant" or item.get("type", "message") != "message":
        return None
    content = item.get("content")
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))


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


def response_events(response: Response) -> Iterator[Event]:
    """A response as the events of its stream (each text and arguments in one delta)."""
    data = response.model_dump(mode="json", exclude_none=True)
    event = _Numbered()
    started = {k: v for k, v in data.items() if k != "usage"}
    started |= {"status": "in_progress", "output": []}
    yield event("response.created", response=started)
    yield event("response.in_progress", response=started)
    for index, item in enumerate(data.get("output") or []):
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
            arguments = item["arguments"]
            yield event("response.function_call_arguments.delta", **where, delta=arguments)
            yield event("response.function_call_arguments.done", **where, arguments=arguments)
        yield event("response.output_item.done", output_index=index, item=item)
    yield event("response.completed", response=data)
