"""Simulator prompts stay prefix-stable, with and without faults (prompt-cache friendly)."""

import pytest
from inspect_ai.event import ModelEvent
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

from conftest import run_task
from occubench.agent import episode_in
from occubench.analysis import PrefixShare, prefix_share

STEPS_ROLES = {"simulator": "occubench/echo-simulator", "verifier": "occubench/scripted-judge"}


def event(*messages, role="simulator"):
    return ModelEvent(
        model="m",
        role=role,
        input=list(messages),
        tools=[],
        tool_choice="auto",
        config={},
        output={},
    )


def test_share_counts_the_common_prefix():
    system, a1 = ChatMessageSystem(content="rules"), ChatMessageUser(content="call 1")
    o1, a2 = ChatMessageAssistant(content="obs 1"), ChatMessageUser(content="call 2")
    grown = prefix_share([event(system, a1), event(system, a1, o1, a2), event(a1, role=None)])
    assert (grown.prompts, grown.pairs, grown.exact_pairs, grown.share) == (2, 1, 1, 1.0)
    changed = prefix_share([event(system, a1), event(ChatMessageSystem(content="rules!"), a1)])
    assert changed.exact_pairs == 0 and 0.0 < changed.share < 0.5
    assert (grown + changed).pairs == 2
    assert PrefixShare().share == 1.0


@pytest.mark.parametrize("env_mode", ["E0", "E3"])
def test_simulator_prompts_are_prefixes_of_the_next(tmp_path, env_mode):
    log = run_task(
        tmp_path,
        agent="occubench/steps-agent",
        roles=STEPS_ROLES,
        env_mode=env_mode,
        fault_count=4,
        task_ids="11,24",
        sim_checks=False,  # the echo simulator fails them: re-asks are not the next prefix
    )
    assert log.status == "success"
    for sample in log.samples:
        assert episode_in(sample.store).tool_calls == 16
        share = prefix_share(sample.events)
        explicit = [f for f in episode_in(sample.store).fault_log if f.explicit]
        assert share.prompts == 16 - len(explicit)
        assert share.share >= 0.9 and share.exact_pairs == share.pairs
    if env_mode == "E3":
        assert any(f.explicit for s in log.samples for f in episode_in(s.store).fault_log)
