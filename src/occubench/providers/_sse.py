"""Server-sent events, the framing every streaming wire shares.

A stream is a run of events, each an optional ``event:`` name, one ``data:`` line of JSON
and a blank line (WHATWG HTML, "Server-sent events"). OpenAI's chat stream names no
event and ends with ``data: [DONE]``; Anthropic's and the Responses API's name each
event by its ``type``; Gemini's ``alt=sse`` stream names none.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any

Event = tuple[str | None, dict[str, Any] | None]
"""An event's name (None: unnamed) and its data (None: the chat stream's ``[DONE]``)."""

Pieces = Callable[[str], list[str]]
"""How a text is cut into the deltas that carry it."""


def sse(events: Iterable[Event]) -> Iterator[bytes]:
    """Events as server-sent events (``event:`` name if any, ``data:`` JSON, a blank line).

    The JSON is ASCII (escaped): any text, a lone surrogate included, encodes.
    """
    for name, data in events:
        named = f"event: {name}\n" if name else ""
        text = "[DONE]" if data is None else json.dumps(data)
        yield f"{named}data: {text}\n\n".encode()


def whole(text: str) -> list[str]:
    """A text in one delta (what an answer that was generated whole sends)."""
    return [text]


def halves(text: str) -> list[str]:
    """A text in two deltas (one if short, none if empty), as streams arrive in pieces."""
    middle = len(text) // 2
    return [part for part in (text[:middle], text[middle:]) if part]
