"""The simulator with a world: recorded paths answered without a call, the rest recorded."""

import asyncio
import traceback

import pytest
from inspect_ai.model import GenerateConfig, ModelOutput, ModelUsage, get_model

from occubench.dataset import EnvConfig
from occubench.errors import ErrorSource, error_source
from occubench.play import Move, human_model
from occubench.providers import PROVIDER_PACKAGES
from occubench.simchecks import ObservationChecker
from occubench.simulator import Simulator, WorldMiss, model_author, world_context
from occubench.worlds import EntrySource, ObservationSource, PathStep, World, WorldEntry, WorldMode

ENV = EnvConfig(
    environment_name="beds",
    world_model_system_prompt="You simulate a bed board.",
    action_set_definitions=[
        {
            "name": "get_bed",
            "description": "One bed.",
            "parameters": {"type": "object", "properties": {"bed_id": {"type": "string"}}},
        },
    ],
    task_initial_state={"beds": [{"bed_id": "B-1", "status": "clean"}]},
    state_description={"beds": "Beds of the unit."},
)


class Counter:
    """A mockllm callable: answers ``{"n": k}`` for its k-th call and counts the calls."""

    def __init__(self, answers=None):
        self.calls = 0
        self.prompts = []
        self.answers = answers

    def __call__(self, input, tools, tool_choice, config):
        self.calls += 1
        self.prompts.append([m.text for m in input])
        text = self.answers.pop(0) if self.answers else f'{{"n": {self.calls}}}'
        out = ModelOutput.from_content("mockllm/model", text)
        out.usage = ModelUsage(input_tokens=3, output_tokens=2, total_tokens=5)
        return out


def simulator(counter, **kwargs):
    return Simulator(get_model("mockllm/model", custom_outputs=counter), "SYSTEM", **kwargs)


def bound(counter, world, mode=WorldMode.RECORD, variant=0, **kwargs):
    sim = simulator(counter, **kwargs)
    sim.use_world(world, world_context(sim, ENV, variant=variant), mode, task="7")
    return sim


def walk(sim, calls):
    async def go():
        return [await sim.observe(tool, args) for tool, args in calls]

    return asyncio.run(go())


CALLS = [("get_bed", {"bed_id": "B-1"}), ("get_bed", {"bed_id": "B-2"})]


def test_a_recorded_path_is_answered_without_a_call_and_the_history_is_the_same(tmp_path):
    world = World.open(tmp_path / "w", writable=True)
    first, second = Counter(), Counter()
    a = bound(first, world)
    seen_a = walk(a, CALLS)
    assert first.calls == 2 and [s.source for s in a.steps] == [ObservationSource.SIMULATOR] * 2
    b = bound(second, world)
    seen_b = walk(b, [*CALLS, ("get_bed", {"bed_id": "B-3"})])
    assert second.calls == 1  # only the unrecorded third call
    assert [o.text for o in seen_b[:2]] == [o.text for o in seen_a]
    assert [s.source for s in b.steps] == [ObservationSource.WORLD] * 2 + [
        ObservationSource.SIMULATOR
    ]
    assert [s.attempts for s in b.steps] == [0, 0, 1]
    # the live third call saw the history the recorded answers made
    assert second.prompts[0][: len(first.prompts[1])] == first.prompts[1]
    entries = list(world.entries())
    assert len(entries) == 3
    assert all(e.source is EntrySource.SIMULATOR and e.author == "mockllm/model" for e in entries)
    assert entries[0].usage == {"input_tokens": 3, "output_tokens": 2}


def test_arguments_are_keyed_by_meaning_and_failed_steps_are_part_of_the_path(tmp_path):
    world = World.open(tmp_path / "w", writable=True)
    a = bound(Counter(), world)
    asyncio.run(a.observe("get_bed", {"bed_id": "B-1", "x": 1}, '{"x": 1, "bed_id": "B-1"}'))
    counter = Counter()
    b = bound(counter, world)
    asyncio.run(b.observe("get_bed", {"bed_id": "B-1", "x": 1}, '{"bed_id":"B-1","x":1}'))
    assert counter.calls == 0
    c = bound(counter, world)
    c.record_failure("get_bed", {"bed_id": "B-1"}, {"error": "timeout"})
    asyncio.run(c.observe("get_bed", {"bed_id": "B-1", "x": 1}))
    assert counter.calls == 1  # after a failure the path is another one
    assert c.steps[0].source is None and c.path[0].failed == {"error": "timeout"}


def test_another_context_or_variant_does_not_share(tmp_path):
    world = World.open(tmp_path / "w", writable=True)
    walk(bound(Counter(), world), CALLS[:1])
    counter = Counter()
    walk(bound(counter, world, variant=1), CALLS[:1])
    walk(bound(counter, world, max_retries=5), CALLS[:1])
    walk(bound(counter, world, config=GenerateConfig(seed=3)), CALLS[:1])
    assert counter.calls == 3
    # how a call is carried out is not part of the context
    other = bound(counter, world, config=GenerateConfig(timeout=9, max_connections=2))
    walk(other, CALLS[:1])
    assert counter.calls == 3


def test_replay_never_asks_the_simulator(tmp_path):
    world = World.open(tmp_path / "w", writable=True)
    walk(bound(Counter(), world), CALLS[:1])
    counter = Counter()
    replay = bound(counter, World.open(tmp_path / "w", writable=False), WorldMode.REPLAY)
    with pytest.raises(WorldMiss, match=r"task 7: step 2 \('get_bed'\) is not in the world"):
        walk(replay, CALLS)
    assert counter.calls == 0 and [s.source for s in replay.steps] == [ObservationSource.WORLD]
    try:
        walk(bound(counter, world, WorldMode.REPLAY), CALLS[1:])
    except WorldMiss:
        assert error_source(traceback.format_exc(), PROVIDER_PACKAGES) is ErrorSource.WORLD


def test_replay_live_answers_a_miss_live_and_does_not_record(tmp_path):
    world = World.open(tmp_path / "w", writable=True)
    walk(bound(Counter(), world), CALLS[:1])
    counter = Counter()
    live = bound(counter, World.open(tmp_path / "w", writable=False), WorldMode.REPLAY_LIVE)
    walk(live, CALLS)
    assert counter.calls == 1
    assert [s.source for s in live.steps] == [ObservationSource.WORLD, ObservationSource.LIVE]
    assert len(World.open(tmp_path / "w", writable=False).keys()) == 1


def test_samples_asking_one_key_at_once_pay_once(tmp_path):
    world = World.open(tmp_path / "w", writable=True)
    counter = Counter()
    sims = [bound(counter, world) for _ in range(4)]

    async def go():
        return await asyncio.gather(*(s.observe(*CALLS[0]) for s in sims))

    seen = asyncio.run(go())
    assert counter.calls == 1 and len({o.text for o in seen}) == 1
    assert sorted(s.steps[0].source for s in sims) == sorted(
        [ObservationSource.SIMULATOR] + [ObservationSource.WORLD] * 3
    )


def test_explicit_state_and_check_records_are_applied_without_checking_again(tmp_path):
    world = World.open(tmp_path / "w", writable=True)
    bad = '<observation>{"bed_id": "B-9", "status": "clean"}</observation>'
    good = '<observation>{"bed_id": "B-1", "status": "clean"}</observation>'
    patch = '<state_patch>[{"op": "add", "path": "/seen", "value": 1}]</state_patch>'
    first = Counter([bad + patch, good + patch])
    kwargs = dict(state={"beds": []}, checker=None)
    a = bound(first, world, **{**kwargs, "checker": ObservationChecker(ENV)})
    walk(a, CALLS[:1])
    assert first.calls == 2 and a.checked == 1 and a.steps[0].check is not None
    second = Counter()
    b = bound(second, world, **{**kwargs, "checker": ObservationChecker(ENV)})
    walk(b, CALLS[:1])
    assert second.calls == 0 and b.checked == 0
    assert b.steps[0].check == a.steps[0].check
    assert b.state == a.state and b.steps[0].patch == a.steps[0].patch


def test_apply_entry_rebuilds_a_history_from_the_world(tmp_path):
    world = World.open(tmp_path / "w", writable=True)
    counter = Counter()
    a = bound(counter, world)
    walk(a, CALLS)
    entries = sorted(world.entries(), key=lambda e: len(e.path))
    rebuilt = bound(Counter(), world)
    for entry in entries:
        rebuilt.apply_entry(entry)
    assert [s.text for s in rebuilt.steps] == [s.text for s in a.steps]
    assert [m.text for m in rebuilt._messages] == [m.text for m in a._messages]
    again = bound(Counter(), world)
    with pytest.raises(ValueError, match="does not answer the next call"):
        again.apply_entry(entries[1])


def test_a_person_simulating_records_entries_of_their_own(tmp_path):
    class Desk:
        async def ask(self, turn):
            return Move(answer='<observation>{"bed_id": "B-1"}</observation>')

    model = human_model("ada", Desk())
    assert model_author(model) == (EntrySource.PERSON, "ada")
    world = World.open(tmp_path / "w", writable=True)
    sim = Simulator(model, "SYSTEM")
    sim.use_world(world, world_context(sim, ENV), WorldMode.RECORD)
    asyncio.run(sim.observe(*CALLS[0]))
    (entry,) = world.entries()
    assert entry.source is EntrySource.PERSON and entry.author == "ada"


def test_a_recorded_observation_keeps_the_order_of_its_text(tmp_path):
    world = World.open(tmp_path / "w", writable=True)
    walk(bound(Counter(['{"b": 1, "a": {"d": 2, "c": 3}}']), world), CALLS[:1])
    replayed = bound(Counter(), world, WorldMode.REPLAY)
    (seen,) = walk(replayed, CALLS[:1])
    assert list(seen.value) == ["b", "a"] and list(seen.value["a"]) == ["d", "c"]


def test_a_hostile_check_record_is_the_worlds_error_not_the_agents(tmp_path):
    world = World.open(tmp_path / "w", writable=True)
    sim = bound(Counter(), world)
    tool, arguments = CALLS[0]
    entry = WorldEntry.record(
        sim.world.context_digest,
        [],
        PathStep.of(tool, arguments),
        text='{"n": 1}',
        author="someone",
        observation={"n": 1},
        check={"kept": "nonsense"},
    )
    world.append(entry)
    replay = bound(Counter(), world, WorldMode.REPLAY)
    with pytest.raises(WorldMiss, match="check record is not one"):
        walk(replay, CALLS[:1])
    assert replay.steps == []
