"""Shards: the plan, 1 vs 2 workers, a killed shard resumed, the Ray executor.

A run started in a folder that holds an ``occubench/`` package (a clone of the release)
must not run that package in its workers, local or Ray.
"""

import os
import shlex
import shutil
import signal
import sys
import tempfile
import time
from importlib.util import find_spec
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import HANG_BOUND, RELEASE_DIR, RELEASE_IDS
from occubench.cli import app
from occubench.config import NO_AGENT_MODEL, EvalOptions, RunConfig
from occubench.results import read_runs
from occubench.roles import Role
from occubench.scale import (
    Executor,
    RunSpec,
    check_executor,
    execute,
    merged_rows,
    plan_shards,
    read_shard_counts,
    shard_count,
    start_shard,
)
from occubench.testing import Hold, ScriptedOpenAIServer

runner = CliRunner()
# careful follows the plan and retries; canned answers from known observations; checks
# grade: deterministic, and E3 injects explicit and implicit faults
REFERENCE = [
    "--dataset",
    "reference",
    "--agent-model",
    "occubench/careful",
    "--simulator-model",
    "occubench/canned",
    "--env-mode",
    "E3",
    "--with-plan",
    "--protocol",
    "occubench",
    "--display",
    "none",
]
REFERENCE_ARGS = {
    "dataset": "reference",
    "env_mode": "E3",
    "with_plan": True,
    "protocol": "occubench",
}


def outcomes(rows):
    """Everything a deterministic run decides, per task."""
    return {
        r.task_id: (r.passed, r.checks_passed, r.stop_reason, r.tool_calls, r.faults) for r in rows
    }


@pytest.fixture(scope="module")
def one_worker(tmp_path_factory):
    """The in-process path (--workers 1): today's single eval set."""
    out = tmp_path_factory.mktemp("one-worker")
    result = runner.invoke(app, ["run", *REFERENCE, "--workers", "1", "--log-dir", str(out)])
    assert result.exit_code == 0, result.output
    (folder,) = out.iterdir()  # the run's own folder, named for agent, simulator and mode
    assert folder.name.startswith("occubench_careful__occubench_canned__E3-")
    assert list(folder.glob("*.eval")) and not list(folder.glob("shard-*"))
    return outcomes(read_runs([out]))


def test_plan_deals_sorted_ids_round_robin(tmp_path):
    run = RunSpec(
        agent="occubench/schema-agent",
        roles={},
        log_dir=str(tmp_path),
        config=RunConfig(dataset=str(RELEASE_DIR)),
    )
    shards = plan_shards(run, 3)
    ids = sorted(RELEASE_IDS)
    assert [s.task_ids for s in shards] == [ids[0::3], ids[1::3], ids[2::3]]
    assert [s.log_dir for s in shards] == [f"{tmp_path}/shard-{i}-of-3" for i in (1, 2, 3)]
    assert shards[0].config() == RunConfig(dataset=str(RELEASE_DIR), task_ids=ids[0::3])
    assert plan_shards(run, 3) == shards  # the same command finds the same shards
    assert len(plan_shards(run, 50)) == len(ids)  # at most one shard per task
    few = run.model_copy(update={"config": RunConfig(dataset=str(RELEASE_DIR), task_ids="70,11")})
    assert [s.task_ids for s in plan_shards(few, 2)] == [[11], [70]]
    assert shard_count(None, 1) == 1 and shard_count(4, 3) == 3 and shard_count(2, 10) == 2
    with pytest.raises(ValueError, match="at least 1"):
        plan_shards(run, 0)


def test_shards_share_the_runs_connections_and_samples(tmp_path):
    run = RunSpec(
        agent="occubench/schema-agent",
        roles={"verifier": "occubench/scripted-judge"},
        config=RunConfig(dataset=str(RELEASE_DIR)),
        log_dir=str(tmp_path),
        options=EvalOptions(max_connections=32, timeout=60, max_samples=128),
    )
    shard = plan_shards(run, 3)[0]
    agent = shard.generate_config(Role.AGENT)
    assert (agent.max_connections, agent.timeout) == (11, 60)
    assert shard.generate_config(Role.VERIFIER).max_connections == 32
    assert shard.samples_at_once() == 43
    assert plan_shards(run, 1)[0].run == run


def test_two_workers_give_the_verdicts_and_faults_of_one(one_worker, tmp_path):
    live = [a if a != "none" else "rich" for a in REFERENCE]  # with the live view
    result = runner.invoke(app, ["run", *live, "--workers", "2", "--log-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "10/10 samples, 0 errors" in result.output  # the view's last frame
    (folder,) = tmp_path.iterdir()
    assert sorted(p.name for p in folder.iterdir() if p.is_dir()) == [
        "shard-1-of-2",
        "shard-2-of-2",
    ]
    two = outcomes(read_runs([tmp_path]))
    assert two == one_worker
    assert sum(len(o[4]) for o in two.values()) > 0  # faults were injected and logged
    assert "10 " in [line for line in result.output.splitlines() if "all" in line][-1]


def planted_package(folder):
    """A folder holding an ``occubench/`` package whose import writes a marker file."""
    marker = folder / "planted-package-ran"
    package = folder / "clone" / "occubench"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    return package.parent, marker


def test_workers_do_not_import_an_occubench_package_in_the_current_folder(
    one_worker, tmp_path, monkeypatch
):
    clone, marker = planted_package(tmp_path)
    monkeypatch.chdir(clone)
    logs = tmp_path / "logs"
    result = runner.invoke(app, ["run", *REFERENCE, "--workers", "2", "--log-dir", str(logs)])
    assert not marker.exists(), "a worker imported the package of the current folder"
    assert result.exit_code == 0, result.output
    (folder,) = logs.iterdir()
    assert sorted(p.name for p in folder.iterdir() if p.is_dir()) == [
        "shard-1-of-2",
        "shard-2-of-2",
    ]
    assert outcomes(read_runs([logs])) == one_worker


def test_killed_shard_resumes_with_one_result_per_task(tmp_path, monkeypatch):
    ids = [11, 24, 26, 32]
    # one sample may start: the victim is killed after it, before its second
    with ScriptedOpenAIServer(hold=Hold(model="schema-agent", samples=1)) as server:
        monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
        monkeypatch.setenv("LOCAL_API_KEY", "test-key")  # inherited by the workers
        run = RunSpec(
            agent="openai-api/local/schema-agent",
            roles={
                "simulator": "openai-api/local/echo-simulator",
                "verifier": "openai-api/local/scripted-judge",
            },
            config=RunConfig(dataset=str(RELEASE_DIR), task_ids=ids),
            options=EvalOptions(max_samples=1),
            log_dir=str(tmp_path / "logs"),
        )
        shards = plan_shards(run, 2)
        victim = start_shard(shards[0], tmp_path / "victim")
        deadline = time.monotonic() + HANG_BOUND
        while read_shard_counts(shards[0].log_dir).done < 1:
            assert victim.poll() is None, "the shard finished before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.05)
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait()
        assert read_shard_counts(shards[0].log_dir).done == 1 < shards[0].samples  # mid-run
        server.release()
        results = execute(shards)  # the same shards again: resume
    assert [r.success for r in results] == [True, True], [r.error for r in results]
    rows = merged_rows(results)
    assert sorted(r.task_id for r in rows) == ids  # exactly one result per task
    assert all(r.passed for r in rows)


def test_failed_worker_is_reported_not_raised(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the kept worker files: here
    run = RunSpec(
        agent="occubench/no-such-model",
        roles={},
        log_dir=str(tmp_path),
        config=RunConfig(dataset=str(RELEASE_DIR), task_ids="11"),
    )
    [result] = execute(plan_shards(run, 1))
    assert not result.success and "exited with code" in result.error
    assert "no-such-model" in result.error  # the worker's last output lines
    (kept,) = tmp_path.glob("occubench-shards-*")  # kept for a look, and named
    assert str(kept) in result.error


needs_ray = pytest.mark.skipif(
    find_spec("ray") is None, reason="Ray is not installed: pip install 'occubench[ray]'"
)


@pytest.fixture
def ray_temp(monkeypatch):
    """Ray's session folders, which it keeps, in a temporary folder removed after the test
    (a short path: Ray's socket paths are bounded)."""
    folder = Path(tempfile.mkdtemp(prefix="ray-"))
    monkeypatch.setenv("RAY_TMPDIR", str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@needs_ray
@pytest.mark.usefixtures("ray_temp")
def test_ray_local_mode_gives_the_verdicts_of_the_local_executor(one_worker, tmp_path):
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        run = RunSpec(
            agent="occubench/careful",
            roles={"simulator": "occubench/canned"},
            config=RunConfig(**REFERENCE_ARGS),
            log_dir=str(tmp_path),
        )
        results = execute(plan_shards(run, 2), Executor.RAY)
    finally:
        ray.shutdown()
    assert [r.success for r in results] == [True, True], [r.error for r in results]
    assert outcomes(merged_rows(results)) == one_worker


@needs_ray
@pytest.mark.usefixtures("ray_temp")
def test_ray_workers_do_not_import_an_occubench_package_in_the_current_folder(
    one_worker, tmp_path, monkeypatch
):
    """Nothing is imported from the folder; a relative program path still resolves there."""
    clone, marker = planted_package(tmp_path)
    (clone / "answer.py").write_text("print('done')\n")
    monkeypatch.chdir(clone)
    run = RunSpec(
        agent=NO_AGENT_MODEL,
        roles={"simulator": "occubench/canned"},
        config=RunConfig(**REFERENCE_ARGS, agent_command=shlex.join([sys.executable, "answer.py"])),
        log_dir=str(tmp_path / "logs"),
    )
    results = execute(plan_shards(run, 2), Executor.RAY)  # Ray started by the run, here
    assert not marker.exists(), "a Ray worker imported the package of the current folder"
    assert [r.success for r in results] == [True, True], [r.error for r in results]
    rows = merged_rows(results)
    assert sorted(r.task_id for r in rows) == sorted(one_worker)
    assert {(r.error, r.stop_reason) for r in rows} == {(None, "answered")}


def test_ray_missing_is_a_clear_error(monkeypatch):
    monkeypatch.setattr("occubench.scale._execute.find_spec", lambda name: None)
    with pytest.raises(ValueError, match=r"pip install 'occubench\[ray\]'"):
        check_executor("ray")
    assert check_executor("local") is Executor.LOCAL
