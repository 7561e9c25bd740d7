"""The built-in reference suite: where it is installed, and the name it goes by."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

REFERENCE_DATASET = "reference"
"""Dataset name that stands for the built-in suite (``--dataset reference``)."""


def reference_suite_dir() -> Path:
    """Folder of the built-in reference suite (release layout)."""
    return Path(str(files("occubench.dataset") / "suite"))


def dataset_label(root: Path) -> str:
    """How a message names a dataset folder: ``reference``, or the folder as given.

    The built-in suite goes by its name: its install path says less to a user.
    """
    return REFERENCE_DATASET if root.resolve() == reference_suite_dir().resolve() else str(root)
