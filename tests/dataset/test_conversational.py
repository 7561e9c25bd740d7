"""The built-in conversational suite: tasks with a user, set in the reference suite's envs."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from occubench.dataset import (
    CONFIGS_DIR,
    CONVERSATIONAL_DATASET,
    REFERENCE_DATASET,
    SCENARIOS_FILE,
    TASKS_FILE,
    builtin_dataset_dir,
    check_dataset,
    content_digest,
    dataset_label,
    load_dataset,
    reference_suite_dir,
    resolve_dataset_dir,
    shared_dir,
)

REFERENCE_DIGEST = "b9014c427cecd74d5c0f20f8039ea854fe6c3b84ea0c139cb239f48231e7230b"
"""The reference suite's digest before the conversational suite was added beside it."""


USER_SLOT = re.compile(r"\{\{user:([^}]+)\}\}")


def argument_values(value: object) -> set[str]:
    """Every scalar in a plan step's arguments, as text."""
    if isinstance(value, dict):
        return set().union(*(argument_values(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(argument_values(v) for v in value))
    return {str(value)}


def test_one_task_per_industry_each_needing_a_fact_only_the_user_knows():
    data = load_dataset(resolve_dataset_dir(CONVERSATIONAL_DATASET))
    assert len(data.tasks) == 10
    assert len({data.industry(t) for t in data.tasks}) == 10
    suite = load_dataset(reference_suite_dir())
    assert set(data.envs) == set(suite.envs)
    for task in data.tasks:
        assert task.user is not None and task.reference_plan is not None and task.checks
        # the plan (--with-plan) names what only the user knows, never its value
        assert task.solution_plan is not None
        assert {f.name for f in task.user.facts} <= set(USER_SLOT.findall(task.solution_plan))
        first = argument_values(task.reference_plan.steps[0].arguments)
        needed = [f for f in task.user.facts if f.value in first]
        assert needed, f"task {task.task_id}: the first step needs no fact of the user"
        for fact in task.user.facts:
            assert fact.value not in task.agent_instruction
            assert fact.value not in task.solution_plan
            assert fact.value in task.verification_plan


def test_the_reference_suite_is_unchanged():
    data = load_dataset(resolve_dataset_dir(REFERENCE_DATASET))
    assert [t.task_id for t in data.tasks] == list(range(1001, 1011))
    assert all(t.user is None for t in data.tasks)
    assert content_digest(reference_suite_dir()) == REFERENCE_DIGEST


def test_the_suite_holds_only_tasks_and_reads_the_reference_envs():
    folder = builtin_dataset_dir(CONVERSATIONAL_DATASET)
    assert folder is not None
    assert sorted(p.name for p in folder.iterdir() if p.name != "__pycache__") == [TASKS_FILE]
    assert shared_dir(folder) == reference_suite_dir()
    assert dataset_label(folder) == CONVERSATIONAL_DATASET
    assert not check_dataset(folder).issues


def test_its_digest_is_that_of_a_folder_holding_the_shared_files(tmp_path: Path):
    folder = builtin_dataset_dir(CONVERSATIONAL_DATASET)
    assert folder is not None
    copy = tmp_path / "conversational"
    copy.mkdir()
    shutil.copy(folder / TASKS_FILE, copy / TASKS_FILE)
    shutil.copy(reference_suite_dir() / SCENARIOS_FILE, copy / SCENARIOS_FILE)
    shutil.copytree(reference_suite_dir() / CONFIGS_DIR, copy / CONFIGS_DIR)
    assert content_digest(folder) == content_digest(copy)
    assert [t.task_id for t in load_dataset(copy).tasks] == list(range(2001, 2011))
    # an edited env changes the copy's digest as it would change the suite's
    env = next((copy / CONFIGS_DIR).iterdir())
    env.write_text(json.dumps(json.loads(env.read_text()) | {"state_description": {}}))
    assert content_digest(copy) != content_digest(folder)
