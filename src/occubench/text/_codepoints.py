r"""Text that can be written: invalid code points in model output escaped.

A Python string may hold UTF-16 surrogates (U+D800-U+DFFF), which no UTF-8 file can
store: a provider answer whose JSON carries ``"J\ud83d Doe"`` (half of an emoji, ASCII on
the wire) decodes to one, and a log, a store or an export that meets it fails to be
written (``surrogates not allowed``). Every role's reply passes here before anything
reads it:

- ``escape_invalid``: a surrogate pair is joined into its character; a lone surrogate
  becomes the six characters ``\udXXX`` (as Inspect's own safe JSON writer shows it);
- ``loads``: JSON decoding of model text in which an escaped lone surrogate (``\ud83d``
  in the text) decodes to those six characters, not to the code point;
- ``clean_json``: a decoded JSON value (tool-call arguments) with the same rule applied;
- ``clean_output``: a model output's messages (text, reasoning, tool calls) cleaned.

Every other code point a Python string can hold is valid UTF-8 and left as it is.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from pydantic_core import PydanticSerializationError

if TYPE_CHECKING:
    from inspect_ai.model import ModelOutput

_RAW_SURROGATE = re.compile("[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]")
_JSON_ESCAPE = re.compile(
    r"\\u(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})"  # an escaped pair: a real character
    r"|\\u(d[89a-f][0-9a-f]{2})"  # an escaped lone surrogate
    r"|\\.",  # any other escape, an escaped backslash included, kept as it is
    re.IGNORECASE | re.DOTALL,
)
_MAYBE_ESCAPED = re.compile(r"\\u[dD][89a-fA-F]")


def _raw(match: re.Match[str]) -> str:
    found = match.group()
    if len(found) == 2:
        return found.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
    return f"\\u{ord(found):04x}"


def escape_invalid(text: str) -> str:
    r"""``text`` with surrogate pairs joined and lone surrogates written as ``\uXXXX``."""
    try:
        text.encode("utf-8")  # the common case, at C speed: nothing to escape
    except UnicodeEncodeError:
        return _RAW_SURROGATE.sub(_raw, text)
    return text


def _escaped(match: re.Match[str]) -> str:
    lone = match.group(3)
    return f"\\\\u{lone}" if lone else match.group()


def json_text(text: str) -> str:
    r"""Model text ready for JSON decoding (its positions are those a decoder sees).

    A lone surrogate in it, raw or escaped, decodes to the six characters ``\uXXXX``.
    """
    return _JSON_ESCAPE.sub(_escaped, escape_invalid(text))


def loads(text: str) -> Any:
    """``json.loads`` of model text whose strings come out serializable.

    Raises:
        json.JSONDecodeError: as ``json.loads``.
    """
    return json.loads(json_text(text))


def clean_json(value: Any) -> Any:
    """A JSON value whose strings (keys included) are serializable.

    ``value`` itself when it already is; otherwise a copy (tuples become lists).
    """
    dumped = json.dumps(value)  # ASCII: every surrogate is now an escape
    if not _MAYBE_ESCAPED.search(dumped):
        return value
    return json.loads(_JSON_ESCAPE.sub(_escaped, dumped))


def clean_output(output: ModelOutput) -> ModelOutput:
    """``output`` with its completion, error and messages serializable (changed in place)."""
    from inspect_ai.model import ChatMessageAssistant

    output.completion = escape_invalid(output.completion)
    if output.error is not None:
        output.error = escape_invalid(output.error)
    for choice in output.choices:
        try:
            choice.message.model_dump_json()  # the common case: already serializable
            continue
        except PydanticSerializationError:
            pass
        dumped = choice.message.model_dump(mode="json")
        cleaned = clean_json(dumped)
        if cleaned is not dumped:
            choice.message = ChatMessageAssistant.model_validate(cleaned)
    return output
