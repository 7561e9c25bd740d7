"""What ``occubench serve`` hands the runner: the task's configuration, arguments and roles."""

from __future__ import annotations

import pytest

from occubench.config import RunConfig
from occubench.dataset import DatasetError
from occubench.errors import UsageError
from occubench.roles import Role
from occubench.serving import ServeOptions, Transport, served_task, served_world, session_log_dir


def test_the_served_task_and_its_environment():
    config, envs = served_task(RunConfig(dataset="reference", task_ids=[1001]), 1001)
    assert config.dataset_dir().is_absolute()
    assert [env.environment_name for env in envs] == ["ref_emergency_department_triage"]
    with pytest.raises(DatasetError, match="unknown task ids: 99"):
        served_task(RunConfig(dataset="reference", task_ids=[99]), 99)


def test_a_world_is_made_absolute_and_opened_as_asked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert served_world(RunConfig()).world is None
    assert served_world(RunConfig(world="w")).world == str(tmp_path / "w")
    with pytest.raises(UsageError):
        served_world(RunConfig(world="missing", world_mode="replay"))


def test_the_task_arguments_and_roles_of_a_session():
    served = ServeOptions("sim/a", transport=Transport.HTTP, port=0, allowed_hosts=["box"])
    args = served.task_args(RunConfig(task_ids=[3]))
    assert args["transport"] == "http" and args["allowed_hosts"] == ["box"]
    assert args["task_ids"] == [3] and args["unsubmitted"] == "grade"
    assert served.roles() == {Role.SIMULATOR: "sim/a"}
    assert ServeOptions("sim/a", "judge/b").roles()[Role.VERIFIER] == "judge/b"
    assert served.eval_options().retry_on_error == 0


def test_each_session_has_a_folder_of_its_own():
    folder = session_log_dir("logs/serve/", 7, "E0")
    assert folder.startswith("logs/serve/task-7-E0-") and not folder.startswith("logs/serve//")
