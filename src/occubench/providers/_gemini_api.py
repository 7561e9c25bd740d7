"""Google's generateContent (Gemini API): an answer's shape and its stream's chunks.

google-genai: ``types.GenerateContentResponse``; docs: Gemini API, "Generating content"
and "Thought signatures". An answer is one candidate (``index`` 0) whose ``content``
(role ``model``) holds the parts, its ``finishReason``, the ``modelVersion``, the
``responseId`` and the ``usageMetadata``. ``streamGenerateContent`` sends the same
answer as chunks of that shape, one part each: a text in pieces, a text's
``thoughtSignature`` on a final empty text part, and the finish reason and usage on the
last chunk only. With ``alt=sse`` the chunks are unnamed server-sent events, without it
one JSON array.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from occubench.providers._sse import Pieces, whole

Part = dict[str, Any]
"""A content part as JSON data (``text``, ``thought``, ``functionCall``, ``thoughtSignature``)."""


class GeminiAnswer(NamedTuple):
    """A whole answer of one candidate."""

    model: str
    """The ``modelVersion``."""
    response_id: str
    parts: list[Part]
    finish: str
    """The ``finishReason`` (``STOP``, ``MAX_TOKENS`` ...)."""
    usage: dict[str, Any]
    """The ``usageMetadata``."""


def _response(answer: GeminiAnswer, parts: list[Part], *, last: bool = True) -> dict[str, Any]:
    """A ``GenerateContentResponse`` of these parts; the finish and usage if ``last``."""
    candidate: dict[str, Any] = {"index": 0, "content": {"role": "model", "parts": parts}}
    if last:
        candidate["finishReason"] = answer.finish
    response: dict[str, Any] = {
        "candidates": [candidate],
        "modelVersion": answer.model,
        "responseId": answer.response_id,
    }
    if last:
        response["usageMetadata"] = answer.usage
    return response


def generate_response(answer: GeminiAnswer) -> dict[str, Any]:
    """The answer as one ``GenerateContentResponse`` (as JSON data)."""
    return _response(answer, answer.parts)


def _streamed_parts(parts: Sequence[Part], pieces: Pieces) -> list[Part]:
    """The parts as streamed: a visible text in pieces, its signature on an empty text."""
    streamed: list[Part] = []
    for part in parts:
        text = part.get("text")
        if "functionCall" in part or part.get("thought") or not text:
            streamed.append(part)
            continue
        streamed += [{"text": piece} for piece in pieces(text)]
        if "thoughtSignature" in part:
            streamed.append({"text": "", "thoughtSignature": part["thoughtSignature"]})
    return streamed


def stream_chunks(answer: GeminiAnswer, pieces: Pieces = whole) -> list[dict[str, Any]]:
    """The answer as the chunks of its stream: one part each, finish and usage on the last."""
    streamed = _streamed_parts(answer.parts, pieces) or [{"text": ""}]
    last = len(streamed) - 1
    return [_response(answer, [part], last=n == last) for n, part in enumerate(streamed)]
