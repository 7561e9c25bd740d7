"""Planning a run: a command's request checked against its data into the plan the runner runs."""

import os
from pathlib import Path

import pytest

from occubench.config import EvalOptions, RunConfig
from occubench.errors import UsageError
from occubench.roles import Role
from occubench.scale import (
    Executor,
    RunPlan,
    RunRequest,
    plan_run,
    run_log_dir,
    selected_task_ids,
    started_shards,
)

SIMULATOR = "occubench/canned"
AGENT = "occubench/careful"


def request(**changes: object) -> RunRequest:
    """The reference suite under E3, the careful agent and the canned simulator."""
    given: dict[str, object] = {
        "agent_model": AGENT,
        "roles": {Role.SIMULATOR: SIMULATOR},
        "config": RunConfig.model_validate(
            {"dataset": "reference", "env_mode": "E3", "protocol": "occubench"}
        ),
    }
    return RunRequest.model_validate({**given, **changes})


def plan(**changes: object) -> tuple[RunPlan, list[str]]:
    said: list[str] = []
    return plan_run(request(**changes), said.append), said


def test_plan_resolves_the_dataset_and_keeps_the_whole_selection() -> None:
    made, said = plan()
    everything = selected_task_ids(RunConfig(dataset="reference"))
    assert made.selected == everything
    assert Path(made.spec.config.dataset or "").is_absolute()
    assert made.spec.config.task_ids is None
    assert made.spec.log_dir == ""
    assert made.spec.roles == {Role.SIMULATOR: SIMULATOR}
    assert said == []


def test_a_limit_fixes_the_first_tasks() -> None:
    made, _ = plan(limit=2, epochs=3)
    first = selected_task_ids(RunConfig(dataset="reference"))[:2]
    assert made.selected == first
    assert made.spec.config.task_ids == first
    assert made.samples == 6


def test_the_agent_model_is_required_without_an_agent_program() -> None:
    with pytest.raises(UsageError, match="--agent-model is required"):
        plan(agent_model=None)


def test_an_empty_selection_is_refused() -> None:
    config = RunConfig(dataset="reference", difficulty=[99])
    with pytest.raises(UsageError, match="matches the selection"):
        plan(config=config)


def test_a_budget_needs_a_price_for_every_model() -> None:
    with pytest.raises(UsageError, match=f"no price for {AGENT}, {SIMULATOR}"):
        plan(options=EvalOptions(budget=1.0))


def test_workers_fix_the_shard_count_before_the_preflight(tmp_path: Path) -> None:
    made, _ = plan(workers=2, log_root=str(tmp_path))
    assert made.sticky and made.most == 2
    assert made.shards(None) == 2 and made.shards(0.001) == 2


def test_a_started_folder_gives_its_shard_count(tmp_path: Path) -> None:
    made, _ = plan(log_root=str(tmp_path), executor=Executor.LOCAL)
    spec = made.spec
    assert started_shards(spec, str(tmp_path), 4) is None
    Path(run_log_dir(spec, 3, str(tmp_path))).mkdir(parents=True)
    assert started_shards(spec, str(tmp_path), 4) == 3
    assert made.log_dir(3) == f"{tmp_path}/{spec.folder_name(3)}"


def test_a_remote_root_is_not_looked_in() -> None:
    made, _ = plan()
    assert started_shards(made.spec, "s3://bucket/logs", 5) == 5


def test_cores_bound_the_folders_looked_for(tmp_path: Path) -> None:
    made, _ = plan()
    spec = made.spec
    beyond = max(2, os.cpu_count() or 1) + 1
    Path(run_log_dir(spec, beyond, str(tmp_path))).mkdir(parents=True)
    assert started_shards(spec, str(tmp_path), 2) is None
