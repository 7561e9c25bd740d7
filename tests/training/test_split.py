"""The seeded split of a trainer's tasks between training and evaluation."""

from __future__ import annotations

import pytest

from occubench.errors import UsageError
from occubench.training import split_tasks

TASKS = list(range(1, 21))


def test_the_split_is_disjoint_complete_and_sized_by_the_fraction():
    split = split_tasks(TASKS, 0.25, seed=3)
    assert len(split.eval) == 5 and len(split.train) == 15
    assert not set(split.train) & set(split.eval)
    assert sorted(split.train + split.eval) == TASKS
    assert split.train == sorted(split.train) and split.eval == sorted(split.eval)


def test_the_seed_decides_the_split_and_the_order_given_does_not():
    split = split_tasks(TASKS, 0.25, seed=3)
    assert split_tasks(list(reversed(TASKS)), 0.25, seed=3) == split
    others = {tuple(split_tasks(TASKS, 0.25, seed=s).eval) for s in range(4, 8)}
    assert others - {tuple(split.eval)}  # another seed, another split


def test_a_small_selection_keeps_one_task_on_each_side():
    assert split_tasks([7, 9], 0.2, seed=0).model_dump() in (
        {"train": [7], "eval": [9]},
        {"train": [9], "eval": [7]},
    )


@pytest.mark.parametrize(
    ("tasks", "fraction", "message"),
    [
        ([4], 0.2, "0.2 of 1 task"),
        ([4, 5], 0.9, "leaves no task to train on"),
        (TASKS, 0.0, "not in \\(0, 1\\]"),
        (TASKS, 1.5, "not in \\(0, 1\\]"),
    ],
)
def test_a_split_that_cannot_have_both_sides_is_refused(tasks, fraction, message):
    with pytest.raises(UsageError, match=message):
        split_tasks(tasks, fraction, seed=0)


def test_a_fraction_of_one_holds_every_task_out():
    assert split_tasks([3, 1, 2], 1.0, seed=0).model_dump() == {"train": [], "eval": [1, 2, 3]}
