"""Hit rates and shared paths, on rows made by hand."""

import math

from conftest import sample_row
from occubench.analysis import shared_paths, world_use


def rows():
    return [
        sample_row(
            agent_model="a/one",
            env_name="e1",
            world="W",
            world_hits=1,
            simulator_calls=3,
            world_keys=["k1", "k2", "k3", "k4"],
        ),
        sample_row(
            agent_model="a/two",
            env_name="e1",
            run_id="run2",
            world="W",
            world_hits=3,
            simulator_calls=1,
            world_keys=["k1", "k2", "k3", "k9"],
        ),
        sample_row(
            agent_model="a/two",
            env_name="e2",
            run_id="run2",
            world="W",
            world_hits=0,
            live_calls=2,
            world_keys=["k7", "k8"],
        ),
        sample_row(agent_model="a/one", simulator_calls=5),  # no world: not counted
    ]


def test_hit_rates_per_world_run_agent_and_env():
    found = {(w.dimension, w.group): w for w in world_use(rows())}
    every = found[("all", "all")]
    assert (every.samples, every.observations, every.world_hits) == (3, 10, 4)
    assert every.simulator_calls == 4 and every.live_calls == 2 and every.hit_rate == 0.4
    assert found[("agent", "a/two")].hit_rate == 3 / 6
    assert found[("run", "run1")].hit_rate == 1 / 4
    assert found[("env", "e2")].hit_rate == 0.0 and found[("env", "e2")].live_calls == 2
    assert {w.world for w in world_use(rows())} == {"W"}


def test_shared_paths_count_calls_another_agent_also_made():
    found = {p.agent: p for p in shared_paths(rows())}
    assert (found["a/one"].observations, found["a/one"].shared) == (4, 3)
    assert (found["a/two"].observations, found["a/two"].shared) == (6, 3)
    assert found["a/two"].share == 0.5


def test_one_agent_shares_nothing_and_no_call_has_no_rate():
    alone = [sample_row(world="W", world_keys=["k"], simulator_calls=1)]
    assert shared_paths(alone) == []
    (every, *_) = world_use([sample_row(world="W")])
    assert every.observations == 0 and math.isnan(every.hit_rate)
