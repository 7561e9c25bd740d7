"""Where a dataset is: a folder, a built-in dataset, or $OCCUBENCH_DATASET."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from occubench.dataset._fetch import (
    RELEASE_DATASET,
    configured_release,
    fetch_release,
    release_dir,
    stderr_progress,
)
from occubench.dataset._loader import TASKS_FILE
from occubench.dataset._suite import (
    CONVERSATIONAL_DATASET,
    REFERENCE_DATASET,
    builtin_dataset_dir,
)
from occubench.defaults import DEFAULT_DATASET_ENV
from occubench.errors import UsageError


def resolve_dataset_dir(dataset: str | Path | None) -> Path:
    """The dataset folder: the argument, else $OCCUBENCH_DATASET, else an error.

    The name ``reference`` stands for the built-in reference suite, ``conversational``
    for the built-in suite of tasks with a user, ``occubench`` for the public release in
    the cache, fetched (with a message on stderr) on first use.

    Raises:
        UsageError: no dataset is named.
        FetchError: the release is not cached and could not be fetched.
    """
    chosen = dataset or os.environ.get(DEFAULT_DATASET_ENV)
    if not chosen:
        raise UsageError(
            f"no dataset given: pass dataset=DIR (CLI: --dataset DIR) or set "
            f"{DEFAULT_DATASET_ENV}; --dataset {REFERENCE_DATASET} is the built-in suite, "
            f"--dataset {CONVERSATIONAL_DATASET} its tasks with a user"
        )
    builtin = builtin_dataset_dir(str(chosen))
    if builtin is not None:
        return builtin
    if str(chosen) == RELEASE_DATASET:
        return cached_release()
    return Path(chosen)


def cached_release() -> Path:
    """The cached public release; fetched first (saying so on stderr) when it is missing."""
    source = configured_release()
    folder = release_dir(source)
    if (folder / TASKS_FILE).is_file():
        return folder
    print(
        f"The public OccuBench release is not in the cache yet: fetching revision "
        f"{source.revision} from {source.url} into {folder} (once; `occubench data fetch` "
        "does the same).",
        file=sys.stderr,
    )
    return fetch_release(folder, source=source, progress=stderr_progress())
