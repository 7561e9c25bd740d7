"""Tasks divided between a trainer's training set and its evaluation set.

The rule: the selected task ids, sorted, are shuffled by a generator seeded with
``seed``; the first ``eval_fraction`` of them (the nearest whole number, at least one)
are held out for evaluation, the rest are trained on. The same tasks, fraction and seed
always give the same split; no task is on both sides. ``eval_fraction=1.0`` holds every
task out: an evaluation with no training set (``vf-eval`` of chosen tasks).
"""

from __future__ import annotations

import random

from pydantic import BaseModel, ConfigDict, Field

from occubench.errors import UsageError


class TaskSplit(BaseModel):
    """The task ids a trainer trains on and those it evaluates on, each side sorted."""

    model_config = ConfigDict(frozen=True)

    train: list[int] = Field(description="Tasks trained on (empty when every task is held out).")
    eval: list[int] = Field(description="Tasks held out for evaluation.")


def split_tasks(task_ids: list[int], eval_fraction: float, seed: int) -> TaskSplit:
    """The seeded split of ``task_ids`` (see the module doc).

    Raises:
        UsageError: ``eval_fraction`` is not in (0, 1], or a split (a fraction under 1)
            would leave a side without a task.
    """
    if not 0.0 < eval_fraction <= 1.0:
        raise UsageError(f"eval_fraction: {eval_fraction} is not in (0, 1]")
    ids = sorted(set(task_ids))
    if eval_fraction == 1.0:
        return TaskSplit(train=[], eval=ids)
    held_out = max(1, round(len(ids) * eval_fraction))
    if held_out >= len(ids):
        raise UsageError(
            f"eval_fraction: {eval_fraction} of {len(ids)} task(s) leaves no task to train on; "
            "select more tasks, lower the fraction, or set it to 1.0 to evaluate them all"
        )
    random.Random(seed).shuffle(ids)
    return TaskSplit(train=sorted(ids[held_out:]), eval=sorted(ids[:held_out]))
