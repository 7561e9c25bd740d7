"""A dataset the tests write in the public release's layout, from the project's own suite.

The default suite needs nothing beside the clone: instead of the public sample it reads
this fixture, written from the built-in reference suite the way the public release
stores its data. Tasks keep only the release's six fields (no plans, no checks, so a
judge grades them), env configs lose the extensions (no canned observations), and each
simulator prompt is laid out as the release's are: a templated head whose braces are
doubled, then the initial state and the state descriptions appended after placeholder
labels with doubled braces, then the action set (by name, single braces). The pool
lists two scenarios that have no task, as the release's pool does.

Task ids are those of the public sample (one per industry), so that a test reads alike
whichever of the two it runs on; their content is the reference suite's.
"""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
from functools import cache
from pathlib import Path

from occubench.dataset import (
    EnvConfig,
    Scenario,
    TaskRecord,
    load_dataset,
    reference_suite_dir,
    write_dataset,
)

RELEASE_IDS = [11, 24, 26, 32, 46, 47, 51, 70, 119, 154]
"""The fixture's task ids, sorted (the public sample's)."""

RELEASE_TASK_FIELDS = (
    "task_id",
    "difficulty_level",
    "task_scenario_name",
    "agent_instruction",
    "env_name",
    "verification_plan",
)
"""The fields a task of the public release has."""

SCENARIOS_WITHOUT_TASKS = [
    Scenario(category="Business & Enterprise", domain="Finance", task_scenario_name="Ledger Close"),
    Scenario(
        category="Education & Culture", domain="Libraries", task_scenario_name="Archive Intake"
    ),
]
"""Pool entries no task uses (the release's pool has 100 scenarios for 382 tasks)."""


def _doubled(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _release_prompt(env: EnvConfig) -> str:
    """The env's simulator prompt as the release lays it out (see the module docstring)."""
    head = (
        f"### 1. Role and Objective\n{env.world_model_system_prompt}\n\n"
        "### 2. Environment Management\nThe current state, as JSON:\n```json\n"
        "{initial_state}\n```\nMeaning of the fields:\n```json\n{state_descriptions}\n```\n\n"
        "### 3. Action Space\n```json\n{action_set_definitions}\n```\n"
        'Each observation is a JSON object, e.g. {"status": "ok"}.\n'
    )
    actions = {
        tool.name: tool.model_dump(mode="json", exclude={"name"}, exclude_none=True)
        for tool in env.action_set_definitions
    }
    return (
        _doubled(head)
        + "{{initial_state}}: "
        + _doubled(json.dumps(env.task_initial_state, indent=2))
        + "\n{{state_descriptions}}: "
        + _doubled(json.dumps(env.state_description, indent=2))
        + "\n{action_set_definitions}: "
        + json.dumps(actions, indent=2)
    )


def write_release_dataset(root: Path) -> Path:
    """Write the fixture dataset into ``root`` (created); returns ``root``."""
    suite = load_dataset(reference_suite_dir())
    tasks = sorted(suite.tasks, key=lambda t: t.task_id)
    renumbered = [
        TaskRecord.model_validate(
            {**task.model_dump(mode="json", include=set(RELEASE_TASK_FIELDS)), "task_id": new_id}
        )
        for task, new_id in zip(tasks, RELEASE_IDS, strict=True)
    ]
    envs = [
        EnvConfig(
            environment_name=env.environment_name,
            world_model_system_prompt=_release_prompt(env),
            action_set_definitions=env.action_set_definitions,
            task_initial_state=env.task_initial_state,
            state_description=env.state_description,
        )
        for env in suite.envs.values()
    ]
    scenarios = [*suite.scenarios.values(), *SCENARIOS_WITHOUT_TASKS]
    return write_dataset(root, renumbered, envs, scenarios)


@cache
def fixture_release_dir() -> Path:
    """This test process's fixture dataset: written once, in a temporary folder removed at exit.

    Cached here rather than in ``conftest``, which is imported twice (by pytest as
    ``tests.conftest`` and by the tests as ``conftest``): one dataset per process.
    """
    root = Path(tempfile.mkdtemp(prefix="occubench-release-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return write_release_dataset(root / "dataset")
