"""Read an observation (a JSON object) out of a simulator's reply."""

from __future__ import annotations

import json
import re
from typing import Any

_TAGGED = re.compile(r"<observation>(.*?)</observation>", re.DOTALL | re.IGNORECASE)
_FENCED = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


class ObservationParseError(ValueError):
    """The reply holds no JSON object."""


def parse_observation(text: str) -> dict[str, Any]:
    """Extract the observation from ``text``.

    Tried in order: the last ``<observation>`` tag pair, fenced code blocks, the whole
    text as JSON, then the first balanced JSON object found in the text. Only a JSON
    object is accepted (the release's contract: "the observation must be a JSON
    object").

    Raises:
        ObservationParseError: when no candidate is a JSON object.
    """
    candidates = [m for m in _TAGGED.findall(text)][::-1]
    candidates += _FENCED.findall(text)
    candidates.append(text)
    for candidate in candidates:
        found = _first_object(candidate.strip())
        if found is not None:
            return found
    preview = text.strip().replace("\n", " ")[:120]
    raise ObservationParseError(f"no JSON object in simulator reply: {preview!r}")


def _first_object(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
        return value if isinstance(value, dict) else None
    except json.JSONDecodeError:
        pass
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start >= 0:
        try:
            value, _ = decoder.raw_decode(text, start)
            if isinstance(value, dict):
                return value
        except json.JSONDecodeError:
            pass
        start = text.find("{", start + 1)
    return None
