"""Text that can be written and shown: surrogates escaped, terminal text, table cells."""

from occubench.text._codepoints import clean_json, clean_output, escape_invalid, json_text, loads
from occubench.text._sanitize import (
    csv_text,
    from_spreadsheet_cell,
    markdown_cell,
    strip_controls,
    terminal_plain,
    terminal_text,
)

__all__ = [
    "strip_controls",
    "terminal_plain",
    "terminal_text",
    "clean_json",
    "escape_invalid",
    "loads",
    "clean_output",
    "json_text",
    "csv_text",
    "markdown_cell",
    "from_spreadsheet_cell",
]
