"""The gym API with a world: an episode recorded by hand, then replayed with no simulator."""

from __future__ import annotations

import anyio

from occubench.env import ToolCallAction, make_episode
from occubench.scripted import BEHAVIOURS
from occubench.worlds import ObservationSource, World, close_shared_worlds
from world_fixtures import Counted

TASK = 1002


async def by_hand(counter, **settings):
    episode = make_episode(
        "reference", TASK, simulator=counter.model(), protocol="occubench", **settings
    )
    await episode.reset()
    seen = []
    while True:
        reply = BEHAVIOURS["careful"](episode.messages, [])
        if not reply.tool_calls:
            return episode, seen, await episode.grade(reply.content)
        (tool, arguments), *_ = reply.tool_calls
        seen.append(
            (await episode.step(ToolCallAction(tool=tool, arguments=arguments))).observation
        )


def test_an_episode_replays_its_world_under_the_same_faults(tmp_path):
    world = str(tmp_path / "world")
    faults = dict(env_mode="E3", fault_count=2, fault_duration=2, seed=7, with_plan=True)
    first, second = Counted("canned"), Counted("canned")
    one, seen_one, grade_one = anyio.run(lambda: by_hand(first, world=world, **faults))
    close_shared_worlds()
    two, seen_two, grade_two = anyio.run(
        lambda: by_hand(second, world=world, world_mode="replay", **faults)
    )
    assert first.calls > 0 and second.calls == 0
    assert seen_two == seen_one and grade_two.passed == grade_one.passed
    assert two.record.fault_log == one.record.fault_log
    sources = [s.source for s in two.record.steps]
    explicit = [s for s in two.record.steps if s.failed]
    assert explicit and all(s.source is None for s in explicit)  # never in the world
    assert set(sources) - {None} == {ObservationSource.WORLD}
    assert len(World.open(world, writable=False).keys()) == len(sources) - len(explicit)
