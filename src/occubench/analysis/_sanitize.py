"""Make text from logs safe to show in a terminal or a Markdown table.

Anything a model wrote (answers, tool arguments, error messages, even model names in a
crafted log) may hold terminal escape sequences that move the cursor, retitle the
window or hide output, and rich markup that would restyle the table around it. The
sequences and the remaining control characters are removed (newline and tab are kept),
bidirectional overrides too (they reorder what is shown), and rich markup is escaped.
In Markdown, HTML is escaped and a cell is kept on one line without a bare ``|``.
(The HTML report escapes through jinja2's autoescape.) Terminal text is redacted too
(``occubench.redaction``).
"""

from __future__ import annotations

import html
import re

from rich.markup import escape

from occubench.redaction import redact

_ESCAPES = re.compile(
    r"""
    \x1b\[[0-?]*[ -/]*[@-~]                 # CSI: ESC [ params intermediates final
    | \x1b[\]PX^_].*?(?:\x07|\x1b\\|\x9c|$) # OSC, DCS, SOS, PM, APC up to their terminator
    | \x1b[ -/]*[0-~]                       # other ESC sequences (charset, keypad, ...)
    | \x9b[0-?]*[ -/]*[@-~]                 # 8-bit CSI
    | [\x90\x98\x9d\x9e\x9f].*?(?:\x07|\x1b\\|\x9c|$)  # 8-bit string controls
    """,
    re.VERBOSE | re.DOTALL,
)
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def strip_controls(text: str) -> str:
    """Remove escape sequences and control characters except newline and tab."""
    return _CONTROLS.sub("", _ESCAPES.sub("", text))


def terminal_text(text: object) -> str:
    """Return ``text`` ready for a rich table cell: redacted, controls stripped, escaped."""
    return escape(strip_controls(redact(str(text))))


def markdown_cell(text: object) -> str:
    """Return ``text`` ready for a Markdown table cell: one line, HTML and pipes escaped."""
    flat = " ".join(strip_controls(str(text)).split())
    return html.escape(flat, quote=False).replace("|", "\\|")
