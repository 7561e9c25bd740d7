"""Workers started before their shards: forked (or spawned), given a shard or dismissed;
how many shards a run takes by the machine, its size and its endpoints' latency."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import RELEASE_DIR, RELEASE_IDS
from occubench.config import RunConfig
from occubench.defaults import DEFAULT_SHARD_CALLS_PER_SECOND
from occubench.results import read_runs
from occubench.roles import Role
from occubench.scale import (
    ForkedProcess,
    Preflight,
    RunSpec,
    can_fork,
    execute,
    merged_rows,
    plan_shards,
    role_calls,
    run_shards,
    shard_count,
    shards_for_latency,
    start_workers,
)
from occubench.testing._openai_server import ScriptedOpenAIServer

SCRIPTED = {
    "agent": "occubench/schema-agent",
    "roles": {"simulator": "occubench/echo-simulator", "verifier": "occubench/scripted-judge"},
}


FORK_CASES = [
    pytest.param(
        True,
        marks=pytest.mark.skipif(sys.platform != "linux", reason="forked on Linux only"),
    ),
    False,
]
ALONE = "OCCUBENCH_TEST_ALONE"
"""Set in a test's own pytest process (``in_a_process_of_its_own``)."""


def in_a_process_of_its_own(request: pytest.FixtureRequest) -> None:
    """Run this test again in a new pytest process, and pass or fail with it.

    Workers are forked only from a process with one thread, and an earlier test of this
    process (an HTTP client's or a thread pool's threads) may have left others running.
    """
    assert ALONE not in os.environ, "a process of its own still has other threads"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0"]
        + [request.node.nodeid],
        cwd=request.config.rootpath,
        env={**os.environ, ALONE: "1"},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert done.stdout.splitlines()[-1].startswith("1 passed"), done.stdout[-2000:]


def spec(log_dir: Path) -> RunSpec:
    return RunSpec(**SCRIPTED, config=RunConfig(dataset=str(RELEASE_DIR)), log_dir=str(log_dir))


def test_default_shards_follow_cores_size_and_latency(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    assert shard_count(None, 30, 30, in_flight=30) == 1  # small runs: one process
    assert shard_count(None, 100, 100, in_flight=100) == 4  # a shard per 25 in flight
    assert shard_count(None, 2000, 2000, in_flight=256) == 11
    assert shard_count(3, 100, 100, in_flight=100) == 3  # as asked
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert shard_count(None, 100, 100, in_flight=100) == 2  # a shard per core
    # 100 samples in flight at 1 s per call: 100 calls a second, two shards' worth
    assert 100 / DEFAULT_SHARD_CALLS_PER_SECOND == 2
    assert shards_for_latency(4, 100, 1.0) == 2
    assert shards_for_latency(4, 100, 10.0) == 1  # a slow endpoint: one process is enough
    assert shards_for_latency(4, 100, 0.2) == 4  # a fast one: as many as allowed
    assert shards_for_latency(4, 100, None) == 4  # no preflight: as many as allowed
    assert shards_for_latency(4, 100, 0.0) == 4


def test_a_started_run_keeps_its_shards_whatever_the_latency(tmp_path):
    run = spec(tmp_path)
    assert run_shards(run, str(tmp_path), 4, 100, 10.0) == 1  # new: by its latency
    (tmp_path / run.folder_name(3)).mkdir()  # started before with three shards
    assert run_shards(run, str(tmp_path), 4, 100, 10.0) == 3  # resumed with three
    assert run_shards(run, "s3://bucket/logs", 4, 100, 10.0) == 4  # not looked for remotely


@pytest.mark.parametrize("fork", FORK_CASES, ids=["forked", "spawned"])
def test_dismissed_workers_end_having_run_nothing(monkeypatch, fork, request):
    if fork and not can_fork():
        in_a_process_of_its_own(request)
        return
    monkeypatch.setattr("occubench.scale._local.can_fork", lambda: fork)
    with start_workers(2) as pool:
        folder = pool.folder
        processes = [w.process for w in pool.workers]
        assert all(isinstance(p, ForkedProcess) is fork for p in processes)
        assert all(p.poll() is None for p in processes)  # waiting for their shards
    assert [p.wait(timeout=120) for p in processes] == [0, 0]
    assert not folder.exists()  # nothing ran: nothing kept


def test_an_interrupted_start_stops_its_workers(monkeypatch):
    monkeypatch.setattr("occubench.scale._local.can_fork", lambda: False)  # slow to start
    with pytest.raises(KeyboardInterrupt), start_workers(2) as pool:
        processes = [w.process for w in pool.workers]
        raise KeyboardInterrupt
    assert all(p.wait(timeout=60) != 0 for p in processes)  # stopped, not dismissed


@pytest.mark.parametrize("fork", FORK_CASES, ids=["forked", "spawned"])
def test_workers_started_early_run_the_shards_as_new_ones_do(tmp_path, monkeypatch, fork, request):
    if fork and not can_fork():
        in_a_process_of_its_own(request)
        return
    monkeypatch.setattr("occubench.scale._local.can_fork", lambda: fork)
    shards = plan_shards(spec(tmp_path / "early"), 2)
    with start_workers(3) as pool:  # one more than needed: dismissed
        extra = pool.workers[2].process
        early = execute(shards, pool=pool)
        work = pool.folder
    assert extra.wait(timeout=120) == 0
    assert not work.exists()  # every shard succeeded: the workers' files are gone
    late = execute(plan_shards(spec(tmp_path / "late"), 2))
    assert [r.success for r in early] == [True, True], [r.error for r in early]
    outcome = {r.task_id: (r.passed, r.tool_calls) for r in merged_rows(early)}
    assert sorted(outcome) == RELEASE_IDS
    assert outcome == {r.task_id: (r.passed, r.tool_calls) for r in merged_rows(late)}
    assert outcome == {r.task_id: (r.passed, r.tool_calls) for r in read_runs([tmp_path / "early"])}


def test_the_preflight_measures_the_latency(monkeypatch):
    monkeypatch.setenv("LOCAL_API_KEY", "test-key")
    with ScriptedOpenAIServer(latency=0.2) as server:
        monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
        checks = Preflight(role_calls({Role.AGENT: "openai-api/local/schema-agent"}))
        assert server.stats.snapshot()["requests"] == {}  # built, nothing sent yet
        report = checks.check()
    assert report.failures == [] and report.latency is not None and report.latency >= 0.2
    offline = Preflight(role_calls({Role.AGENT: "none/none"})).check()
    assert offline.failures == [] and offline.latency is None  # never called


def test_a_forked_worker_leaves_no_process_behind_its_run(tmp_path, release_dir):
    """The command's forked workers end with it (the whole command, two shards)."""
    args = [
        str(Path(sys.executable).with_name("occubench")),
        "run",
        "--dataset",
        str(release_dir),
        "--agent-model",
        SCRIPTED["agent"],
        "--simulator-model",
        SCRIPTED["roles"]["simulator"],
        "--verifier-model",
        SCRIPTED["roles"]["verifier"],
        "--workers",
        "2",
        "--display",
        "none",
        "--log-dir",
        str(tmp_path / "logs"),
    ]
    run = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert str(tmp_path / "logs") not in ps  # no worker outlived the command
    assert sorted(r.task_id for r in read_runs([tmp_path / "logs"])) == RELEASE_IDS
