"""Make text from logs safe to show in a terminal, a Markdown file or a spreadsheet.

Anything a model wrote (answers, tool arguments, error messages, even model names in a
crafted log) may hold terminal escape sequences that move the cursor, retitle the
window or hide output, and rich markup that would restyle the table around it. The
sequences and the remaining control characters are removed (newline and tab are kept),
bidirectional overrides too (they reorder what is shown), and rich markup is escaped.
Terminal text is redacted too (``occubench.redaction``).

In Markdown (``markdown_cell``) text is kept on one line, HTML is escaped, and every
character that could make it live Markdown is escaped with a backslash: no link, image,
autolink, emphasis, code span, table cell break or block (heading, list, rule) can be
formed from it, in CommonMark, GitHub's dialect or markdown-it with linkify.

In CSV (``csv_text``, the one writer of every CSV file) a text cell that a spreadsheet
would read as a formula (one beginning with ``=``, ``+``, ``-``, ``@``, tab or carriage
return, after any spaces or quotes) gets a single quote in front, as OWASP's CSV
injection guidance recommends; numbers are written as they are, negative ones too.
``from_spreadsheet_cell`` takes the quote off again when such a file is read back.
(The HTML report escapes through jinja2's autoescape.)
"""

from __future__ import annotations

import csv
import html
import io
import numbers
import re
from collections.abc import Iterable, Mapping, Sequence

from rich.markup import escape

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


def terminal_plain(text: object) -> str:
    """Return ``text`` ready for a console printing without markup: redacted, controls stripped."""
    from occubench.redaction import redact  # with Inspect's hooks: when text is shown

    return strip_controls(redact(str(text)))


def terminal_text(text: object) -> str:
    """Return ``text`` ready for a rich table cell: redacted, controls stripped, escaped."""
    return escape(terminal_plain(text))


_MARKDOWN_INLINE = re.compile(
    r"""
    [\\`*_\[\]~|$@]   # escapes, code, emphasis, links, images, strikethrough, cells, math, emails
    | (?<=/)/          # the second slash of "//": scheme and protocol-relative autolinks
    | \.(?=[^\s\d])    # a dot inside a word: bare domains ("www.x.org", "x.com") that linkify
    """,
    re.VERBOSE,
)
_MARKDOWN_BLOCK = re.compile(r"^(?:#|[-+](?!\d)|\d{1,9}(?=[.)](?:\s|$)))")
"""A start that makes a block inside a list item: heading, bullet or rule, ordered list."""


def _escape_block_start(found: re.Match[str]) -> str:
    start = found.group(0)
    return start + "\\" if start[0].isdigit() else "\\" + start


def markdown_cell(text: object) -> str:
    """Return ``text`` for a Markdown file, inert: one line, nothing in it renders live.

    HTML is escaped (``&``, ``<``, ``>``) and the characters that form links, images,
    autolinks, emphasis, code, table cells or blocks are backslash-escaped; a number
    (``-0.25``, ``51.0``) is left as it is.
    """
    flat = " ".join(strip_controls(str(text)).split())
    inline = _MARKDOWN_INLINE.sub(r"\\\g<0>", html.escape(flat, quote=False))
    return _MARKDOWN_BLOCK.sub(_escape_block_start, inline)


_FORMULA = re.compile(r"[\s']*[=+\-@\t\r]")
"""Text a spreadsheet may run as a formula, behind any whitespace (or quotes: a cell that
was quoted once is quoted again, so that reading it back gives exactly what was written)."""


def spreadsheet_cell(value: object) -> object:
    """Return ``value`` for a CSV cell: a text cell a spreadsheet would run is quoted.

    Numbers (``bool``, ``int``, ``float``, negative ones too) and ``None`` are kept as
    they are; any other value is text, and text beginning with ``=``, ``+``, ``-``,
    ``@``, tab or carriage return (after any spaces or quotes) gets a ``'`` in front.
    """
    if value is None or isinstance(value, numbers.Number):
        return value
    text = str(value)
    return "'" + text if _FORMULA.match(text) else text


def from_spreadsheet_cell(text: str) -> str:
    """Return the text ``spreadsheet_cell`` was given, from the cell it wrote."""
    return text[1:] if text.startswith("'") and _FORMULA.match(text[1:]) else text


def csv_text(records: Iterable[Mapping[str, object]], columns: Sequence[str]) -> str:
    """CSV text: a header of ``columns``, one row per record, every cell ``spreadsheet_cell``.

    Every CSV file the project writes goes through here. A record's missing column is
    an empty cell; a key not among ``columns`` is an error (``ValueError``).
    """
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=columns)
    writer.writerow({c: spreadsheet_cell(c) for c in columns})
    writer.writerows({k: spreadsheet_cell(v) for k, v in r.items()} for r in records)
    return buffer.getvalue()
