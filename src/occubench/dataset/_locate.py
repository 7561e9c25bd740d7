"""Where a dataset is: a folder, the built-in reference suite, or $OCCUBENCH_DATASET."""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path

from occubench.defaults import DEFAULT_DATASET_ENV

REFERENCE_DATASET = "reference"
"""Dataset name that stands for the built-in suite (``--dataset reference``)."""


def reference_suite_dir() -> Path:
    """Folder of the built-in reference suite (release layout)."""
    return Path(str(files("occubench.dataset") / "suite"))


def resolve_dataset_dir(dataset: str | Path | None) -> Path:
    """The dataset folder: the argument, else $OCCUBENCH_DATASET, else an error.

    The name ``reference`` stands for the built-in reference suite.

    Raises:
        ValueError: no dataset is named.
    """
    chosen = dataset or os.environ.get(DEFAULT_DATASET_ENV)
    if not chosen:
        raise ValueError(
            f"no dataset given: pass dataset=DIR (CLI: --dataset DIR) or set "
            f"{DEFAULT_DATASET_ENV}; --dataset {REFERENCE_DATASET} is the built-in suite"
        )
    if str(chosen) == REFERENCE_DATASET:
        return reference_suite_dir()
    return Path(chosen)
