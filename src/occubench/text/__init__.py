"""Text in and out: what can be written and shown, and untrusted text read within bounds.

Written and shown: surrogates escaped, terminal text, Markdown and CSV cells. Read: JSON
measured before it is parsed (``json_nesting``), YAML composed within bounds
(``bounded_yaml``).
"""

from occubench.text._codepoints import clean_json, clean_output, escape_invalid, json_text, loads
from occubench.text._nesting import json_nesting, nests_deeper
from occubench.text._problems import validation_line
from occubench.text._sanitize import (
    csv_text,
    from_spreadsheet_cell,
    markdown_cell,
    strip_controls,
    terminal_plain,
    terminal_text,
)
from occubench.text._yaml import YamlBoundError, bounded_yaml

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
    "json_nesting",
    "nests_deeper",
    "YamlBoundError",
    "bounded_yaml",
    "validation_line",
]
