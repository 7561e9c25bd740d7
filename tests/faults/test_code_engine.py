"""The occubench code engine on real-looking data: every planned event lands and shows.

Over the public sample (echo simulator) and the reference suite (canned simulator), an
agent that makes at least fc x (fd + 1) tool calls meets every planned event, and every
implicit fault changes what the agent sees (a kind that cannot apply is switched).
"""

import pytest

from conftest import run_task
from occubench.agent import episode_in


def events_hit(sample):
    """(start_call, source) of the planned env-mode events some logged fault came from."""
    episode = episode_in(sample.store)
    plan = episode.fault_plan
    assert plan is not None
    hit = set()
    for fault in episode.fault_log:
        for event in plan.events:
            start, duration = event.start_call, event.duration
            assert duration is not None  # env-mode events last fault_duration calls
            if start <= fault.call_index < start + duration:
                hit.add(start)
    return hit, plan


@pytest.mark.parametrize("mode", ["E2", "E3"])
def test_every_event_reaches_an_agent_with_enough_calls_on_the_sample(tmp_path, mode):
    log = run_task(
        tmp_path, agent="occubench/steps-agent", env_mode=mode, fault_count=2, fault_duration=2
    )
    for sample in log.samples:
        episode = episode_in(sample.store)
        assert episode.tool_calls >= 2 * 3
        hit, plan = events_hit(sample)
        assert len(hit) == len(plan.events) == 2, sample.id
        implicit = [f for f in episode.fault_log if not f.explicit]
        assert implicit or mode == "E3"
        assert all(f.applied for f in implicit), [f for f in implicit if not f.applied]


def test_every_implicit_fault_changes_the_reference_suites_observations(tmp_path):
    log = run_task(
        tmp_path,
        agent="occubench/careful",
        roles={"simulator": "occubench/canned"},
        dataset="reference",
        with_plan=True,
        env_mode="E2",
        fault_count=2,
        fault_duration=1,
    )
    faults = [f for s in log.samples for f in episode_in(s.store).fault_log]
    assert faults and all(f.applied for f in faults)
    switched = [f for f in faults if f.planned_kind]
    assert all(f"injected {f.kind}" in f.changes[-1] for f in switched)
