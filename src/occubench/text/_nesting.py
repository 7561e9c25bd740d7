"""How deep JSON text nests, measured on its bytes before anything parses it.

A parser recurses once per level: text nested thousands deep exhausts Python's and
pydantic's recursion before any depth rule can look at the parsed value. Every reader of
untrusted JSON (a served environment's messages, a world's lines) measures the text first
and refuses what nests deeper than its rule (``DEFAULT_MAX_JSON_DEPTH`` and the envelope
around it).
"""

from __future__ import annotations

import re
from itertools import accumulate

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
"""A JSON string, or an unclosed one to the end: matched from any quote, never retried."""
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = [0] * 256
_STEP[ord("[")] = _STEP[ord("{")] = 1
_STEP[ord("]")] = _STEP[ord("}")] = -1


def json_nesting(data: bytes) -> int:
    """How deep JSON text nests (brackets outside strings), measured without parsing it.

    Linear in the text; malformed text is measured all the same (an unclosed bracket
    counts, an unclosed string hides the rest).
    """
    skeleton = _STRING.sub(b"", data).translate(None, _NOT_BRACKETS)
    return max(accumulate(map(_STEP.__getitem__, skeleton), initial=0))


def nests_deeper(data: bytes, limit: int) -> bool:
    """Whether JSON text nests deeper than ``limit`` (text with few brackets is not scanned)."""
    return data.count(b"[") + data.count(b"{") > limit and json_nesting(data) > limit
