"""The built-in reference suite: ten tasks, one per industry, with canned observations."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

REFERENCE_DATASET = "reference"
"""Dataset name that stands for the built-in suite (``--dataset reference``)."""


def reference_suite_dir() -> Path:
    """Folder of the built-in reference suite (release layout)."""
    return Path(str(files("occubench.reference") / "suite"))
