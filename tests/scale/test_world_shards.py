"""Shard processes and Ray workers recording one world at once: no key is paid twice.

The simulator is the local OpenAI-compatible server, which counts the requests it answers
whatever process sends them; the world's entries say how many requests their answers took.
"""

import threading
from importlib.util import find_spec

import pytest

from occubench.config import RunConfig
from occubench.providers import PROVIDER
from occubench.roles import Role
from occubench.scale import Executor, RunSpec, execute, merged_rows, plan_shards
from occubench.testing import ScriptedOpenAIServer
from occubench.worlds import World, verify_world, world_stats

SETTINGS = {"dataset": "reference", "env_mode": "E3", "with_plan": True, "protocol": "occubench"}


def spec(tmp_path, name, world):
    return RunSpec(
        name=name,
        agent="occubench/careful",
        roles={
            Role.SIMULATOR: f"{PROVIDER}/local/canned",
            Role.VERIFIER: "occubench/scripted-judge",
        },
        config=RunConfig(**SETTINGS, world=world),
        log_dir=str(tmp_path / name),
    )


def paid(server):
    return server.stats.snapshot()["requests"].get("canned", 0)


def check_world(world, requests):
    verified = verify_world(world)
    assert verified.clean, verified.problems
    stats = world_stats(world)
    assert stats.duplicates == 0 and stats.conflicts == 0 and stats.entries == stats.keys
    with_attempts = world_entries_attempts(world)
    assert with_attempts == requests  # every request made an entry: none paid twice
    return stats


def world_entries_attempts(world):
    with World.open(world, writable=False) as opened:
        return sum(e.attempts for e in opened.entries())


def test_two_sharded_runs_record_one_world_at_once_and_pay_each_key_once(tmp_path, monkeypatch):
    world = str(tmp_path / "world")
    monkeypatch.setenv("LOCAL_API_KEY", "test-key")
    with ScriptedOpenAIServer() as server:
        monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
        results = {}

        def go(name):
            results[name] = execute(plan_shards(spec(tmp_path, name, world), 2), Executor.LOCAL)

        threads = [threading.Thread(target=go, args=(n,)) for n in ("one", "two")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        requests = paid(server)
    for shards in results.values():
        assert [r.success for r in shards] == [True, True], [r.error for r in shards]
    stats = check_world(world, requests)
    assert stats.segments >= 2  # more than one process wrote it
    rows = [r for shards in results.values() for r in merged_rows(shards)]
    asked = sum(r.simulator_calls for r in rows)
    hits = sum(r.world_hits for r in rows)
    assert asked == stats.keys and hits > 0  # the same tasks twice: each key asked once
    one, two = ({r.task_id: r.passed for r in merged_rows(results[n])} for n in ("one", "two"))
    assert one == two


@pytest.mark.skipif(find_spec("ray") is None, reason="Ray is not installed")
def test_a_ray_run_and_local_shards_record_one_world_at_once(tmp_path, monkeypatch):
    import ray

    world = str(tmp_path / "world")
    monkeypatch.setenv("LOCAL_API_KEY", "test-key")
    with ScriptedOpenAIServer() as server:
        monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        try:
            local = {}
            thread = threading.Thread(
                target=lambda: local.update(
                    shards=execute(plan_shards(spec(tmp_path, "local", world), 2), Executor.LOCAL)
                )
            )
            thread.start()
            remote = execute(plan_shards(spec(tmp_path, "ray", world), 2), Executor.RAY)
            thread.join()
        finally:
            ray.shutdown()
        requests = paid(server)
    assert [r.success for r in remote] == [True, True], [r.error for r in remote]
    assert [r.success for r in local["shards"]] == [True, True]
    stats = check_world(world, requests)
    rows = merged_rows(remote) + merged_rows(local["shards"])
    assert sum(r.simulator_calls for r in rows) == stats.keys
