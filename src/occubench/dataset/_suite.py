"""The built-in datasets: where they are installed, and the names they go by.

``reference`` is the reference suite (``suite/``, release layout: tasks, scenario pool,
env configs). ``conversational`` holds tasks with a simulated user set in the same ten
envs: its folder has only its tasks file. One rule joins them (``shared_dir``): a
built-in dataset reads the scenario pool and the env configs of the suite, so the ten
envs exist once and the suite's folder (and its digest) stays as it was.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

REFERENCE_DATASET = "reference"
"""Dataset name that stands for the built-in suite (``--dataset reference``)."""

CONVERSATIONAL_DATASET = "conversational"
"""Dataset name of the built-in conversational suite (``--dataset conversational``)."""

BUILTIN_DATASETS: dict[str, str] = {
    REFERENCE_DATASET: "suite",
    CONVERSATIONAL_DATASET: "conversational",
}
"""Each built-in dataset's name and its folder in the package."""


def builtin_dataset_dir(name: str) -> Path | None:
    """Folder of the built-in dataset ``name``; None when no built-in dataset has that name."""
    folder = BUILTIN_DATASETS.get(name)
    return None if folder is None else Path(str(files("occubench.dataset") / folder))


def reference_suite_dir() -> Path:
    """Folder of the built-in reference suite (release layout)."""
    return Path(str(files("occubench.dataset") / BUILTIN_DATASETS[REFERENCE_DATASET]))


def builtin_name(root: Path) -> str | None:
    """The name of the built-in dataset in folder ``root``; None for any other folder."""
    here = root.resolve()
    for name in BUILTIN_DATASETS:
        folder = builtin_dataset_dir(name)
        if folder is not None and folder.resolve() == here:
            return name
    return None


def shared_dir(root: Path) -> Path:
    """The folder whose scenario pool and env configs the dataset in ``root`` reads.

    ``root`` itself, except for a built-in dataset: every built-in dataset reads the
    reference suite's (module doc).
    """
    return reference_suite_dir() if builtin_name(root) is not None else root


def dataset_label(root: Path) -> str:
    """How a message names a dataset folder: a built-in dataset's name, or the folder as given.

    A built-in dataset goes by its name: its install path says less to a user.
    """
    return builtin_name(root) or str(root)
