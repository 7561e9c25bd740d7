"""Read an observation (one whole JSON object) out of a simulator's reply.

occubench's rule (the paper's layout reads replies its own way, ``PaperLayout.read``):
the observation is the content of the reply's one ``<observation>`` block, else of its
one fenced code block, else the whole reply, and that content must be exactly one JSON
object. Nothing is salvaged from a reply that is not: a reply cut off at the token limit
is not read as the first inner object that happens to be complete, an array is not read
as its first element, and a tag inside a string value is not read as a block of its own.
The caller re-asks with the problem named.
"""

from __future__ import annotations

import json
import re
from typing import Any

from occubench.text import json_text

_OPEN = re.compile(r"<observation>", re.IGNORECASE)
_CLOSE = re.compile(r"</observation>", re.IGNORECASE)
_FENCE = re.compile(r"```(?:json|JSON)?[ \t]*\n?(.*?)```", re.DOTALL)
_KINDS = {list: "an array", str: "a string", int: "a number", float: "a number", bool: "a boolean"}


class ObservationParseError(ValueError):
    """The reply holds no observation: not exactly one whole JSON object."""


def parse_observation(text: str) -> dict[str, Any]:
    r"""The observation in ``text``: one whole JSON object (module doc).

    A lone UTF-16 surrogate in the reply decodes to the six characters ``\uXXXX``
    (``occubench.text._codepoints``).

    Raises:
        ObservationParseError: the reply has more than one block, an unclosed tag, or
            content that is not exactly one JSON object (cut off, an array, extra text).
    """
    content = _content(text).strip()
    fenced = _FENCE.fullmatch(content)
    if fenced:
        content = fenced.group(1).strip()
    decoded = json_text(content)
    try:
        value = json.loads(decoded)
    except json.JSONDecodeError as e:
        raise ObservationParseError(_why(e, decoded)) from None
    except (RecursionError, ValueError) as e:  # too deep, an integer too long to convert
        raise ObservationParseError(f"the observation cannot be read: {e}") from None
    if not isinstance(value, dict):
        kind = "null" if value is None else _KINDS.get(type(value), type(value).__name__)
        raise ObservationParseError(f"the observation must be one JSON object, not {kind}")
    return value


def _content(text: str) -> str:
    """What should be the JSON object: the one block's content, or the whole reply."""
    opens, closes = list(_OPEN.finditer(text)), list(_CLOSE.finditer(text))
    if opens or closes:
        if len(opens) == 1 and not closes:
            raise ObservationParseError(
                "the <observation> block is not closed (the reply was cut off?)"
            )
        if len(opens) != 1 or len(closes) != 1 or closes[0].start() < opens[0].end():
            raise ObservationParseError(
                f"the reply must hold one <observation> block; it has {len(opens)} opening "
                f"and {len(closes)} closing tags"
            )
        return text[opens[0].end() : closes[0].start()]
    fences = _FENCE.findall(text)
    if len(fences) > 1:
        raise ObservationParseError(f"the reply holds {len(fences)} code blocks, not one")
    return fences[0] if fences else text


def _why(error: json.JSONDecodeError, text: str) -> str:
    """The problem of content that failed to decode, in words the simulator can act on."""
    preview = text.strip().replace("\n", " ")[:120]
    if not text.strip():
        return "the reply holds no JSON object (it is empty)"
    if error.pos >= len(text.rstrip()) or error.msg.startswith("Unterminated string"):
        return f"the JSON object is cut off before its end (the reply was cut off?): {preview!r}"
    if error.msg == "Extra data":
        return f"text follows the JSON object (only one object may be given): {preview!r}"
    if not text.lstrip().startswith(("{", "[")):
        return f"no JSON object at the start of the reply (nothing may surround it): {preview!r}"
    return (
        f"the observation is not one JSON object ({error.msg} at line {error.lineno} "
        f"column {error.colno}): {preview!r}"
    )
