"""A setting that needs a task field the dataset lacks stops the run, unless allowed.

The public release has no ``solution_plan`` in any of its 382 tasks: ``--with-plan`` on it
measured the run without plans, silently. Now the run stops before it starts (exit 2),
naming how many tasks lack the field, unless ``--allow-missing-fields`` lets it go on
(said in a warning).
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from conftest import RELEASE_DIR, SCRIPTED_MODEL_ARGS, run_task
from occubench.cli import app
from occubench.config import RunConfig
from occubench.dataset import load_dataset, reference_suite_dir
from occubench.errors import UsageError


def flat(text: str) -> str:
    return " ".join(text.split())


def test_the_release_layout_has_no_plans_and_the_rule_names_them():
    tasks = load_dataset(RELEASE_DIR).tasks
    (missing,) = RunConfig(with_plan=True).missing_fields(tasks)
    assert missing.field == "solution_plan" and len(missing.tasks) == len(tasks)
    assert RunConfig(with_plan=True).missing_fields(load_dataset(reference_suite_dir()).tasks) == []
    (targeted,) = RunConfig(faults=["targeted"]).missing_fields(tasks)
    assert targeted.field == "reference_plan"


def test_with_plan_on_tasks_without_plans_stops_before_the_run(tmp_path):
    args = ["run", *SCRIPTED_MODEL_ARGS, "--dataset", str(RELEASE_DIR), "--with-plan",
            "--log-dir", str(tmp_path / "logs"), "--display", "none"]  # fmt: skip
    stopped = CliRunner().invoke(app, args)
    assert stopped.exit_code == 2, stopped.output
    said = flat(stopped.output)
    count = len(load_dataset(RELEASE_DIR).tasks)
    assert f"--with-plan needs each task's solution_plan, and {count} of the {count}" in said
    assert "--allow-missing-fields" in said
    assert not (tmp_path / "logs").exists()  # nothing ran

    allowed = CliRunner().invoke(app, [*args, "--allow-missing-fields", "--workers", "1"])
    assert allowed.exit_code == 0, allowed.output
    assert "Warning: --with-plan needs each task's solution_plan" in flat(allowed.output)


def test_inspect_eval_of_the_task_stops_the_same_way(tmp_path):
    with pytest.raises(UsageError, match="needs each task's reference_plan"):
        run_task(tmp_path, faults=["targeted"], env_mode="E1")
