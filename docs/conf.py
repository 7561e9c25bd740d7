"""Sphinx configuration of the occubench documentation (MyST Markdown, the Furo theme)."""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "occubench"
author = "the occubench authors"
copyright = "the occubench authors"
release = metadata.version("occubench")

# occubench_docs: the reference pages generated from the code, and the root files' links
extensions = ["myst_parser", "occubench_docs"]
source_suffix = {".md": "markdown"}
root_doc = "index"
# _architecture_rest.md is the second half of ARCHITECTURE.md, kept apart until it is merged
exclude_patterns = ["_build", "_ext"]

myst_heading_anchors = 3  # every heading down to ### is a link target, named as on GitHub
myst_enable_extensions = ["colon_fence"]

html_theme = "furo"
html_title = "occubench"
