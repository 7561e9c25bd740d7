"""A run with a world: recorded, then replayed without a simulator; a replay miss is the world's."""

from inspect_ai.model import ChatMessageTool, get_model

from conftest import run_task
from occubench.agent import episode_in
from occubench.errors import ErrorSource, error_source
from occubench.providers import PROVIDER_PACKAGES
from occubench.worlds import WORLD_METADATA, ObservationSource, World, close_shared_worlds
from world_fixtures import Counted, insert_long_line


def roles(counter):
    return {
        "simulator": counter.model(),
        "verifier": "occubench/scripted-judge",
    }


def strayed():
    """An agent that asks for a patient no recorded path asked for, then answers."""
    call = {"tool": "get_patient_vitals", "arguments": {"patient_id": "Z-9"}}
    return get_model("occubench/replay", outputs=[call, "done"], memoize=False)


def observations(log):
    return [
        [m.text for m in sample.messages if isinstance(m, ChatMessageTool)]
        for sample in log.samples
    ]


def sources(log):
    return [[s.source for s in episode_in(s.store).steps] for s in log.samples]


def test_a_recorded_run_replays_without_a_simulator_call(tmp_path):
    world = tmp_path / "world"
    first = Counted()
    recorded = run_task(tmp_path / "a", roles=roles(first), world=str(world))
    assert first.calls > 0
    assert all(s.error is None for s in recorded.samples)
    assert {x for row in sources(recorded) for x in row} == {ObservationSource.SIMULATOR}
    noted = recorded.eval.metadata[WORLD_METADATA]
    assert noted["mode"] == "record" and noted["variant"] == 0 and noted["entries"] == 0
    close_shared_worlds()
    with World.open(world, writable=False) as opened:
        assert sum(e.attempts for e in opened.entries()) == first.calls  # re-asks included
        digest = opened.digest()

    second = Counted()
    replayed = run_task(tmp_path / "b", roles=roles(second), world=str(world), world_mode="replay")
    assert second.calls == 0
    assert {x for row in sources(replayed) for x in row} == {ObservationSource.WORLD}
    assert observations(replayed) == observations(recorded)
    verdicts = [[s.scores[k].value for k in s.scores] for s in recorded.samples]
    assert [[s.scores[k].value for k in s.scores] for s in replayed.samples] == verdicts
    assert replayed.eval.metadata[WORLD_METADATA]["digest"] == digest


def test_a_long_garbage_line_in_the_world_leaves_the_replay_its_intact_entries(tmp_path):
    world = tmp_path / "world"
    recorded = run_task(tmp_path / "a", roles=roles(Counted()), world=str(world))
    close_shared_worlds()
    (written,) = (world / "segments").iterdir()
    insert_long_line(written, after=1)  # past the 16 MiB line bound: skipped, reported
    with written.open("ab") as out:
        out.write(b"x\n")  # and a short junk line: together still far from mostly junk

    second = Counted()
    replayed = run_task(tmp_path / "b", roles=roles(second), world=str(world), world_mode="replay")
    assert second.calls == 0 and all(s.error is None for s in replayed.samples)
    assert {x for row in sources(replayed) for x in row} == {ObservationSource.WORLD}
    assert observations(replayed) == observations(recorded)
    close_shared_worlds()


def test_a_replay_that_leaves_the_recorded_paths_is_an_infrastructure_error(tmp_path):
    world = tmp_path / "world"
    run_task(tmp_path / "a", roles=roles(Counted()), world=str(world), task_ids=[11])
    close_shared_worlds()
    agent = strayed()
    counter = Counted()
    log = run_task(
        tmp_path / "b",
        agent=agent,
        roles=roles(counter),
        world=str(world),
        world_mode="replay",
        task_ids=[11],
    )
    (sample,) = log.samples
    assert counter.calls == 0
    assert sample.error is not None
    assert error_source(sample.error.traceback, PROVIDER_PACKAGES) is ErrorSource.WORLD
    assert "task 11: step 1 ('get_patient_vitals') is not in the world" in sample.error.message


def test_replay_live_answers_the_rest_live_and_records_nothing(tmp_path):
    world = tmp_path / "world"
    run_task(tmp_path / "a", roles=roles(Counted()), world=str(world), task_ids=[11])
    close_shared_worlds()
    keys = len(World.open(world, writable=False).keys())
    agent = strayed()
    counter = Counted()
    log = run_task(
        tmp_path / "b",
        agent=agent,
        roles=roles(counter),
        world=str(world),
        world_mode="replay-live",
        task_ids=[11],
    )
    (sample,) = log.samples
    assert sample.error is None and counter.calls > 0
    assert {x for row in sources(log) for x in row} == {ObservationSource.LIVE}
    close_shared_worlds()
    assert len(World.open(world, writable=False).keys()) == keys


def test_epochs_share_the_world_unless_each_has_its_variant(tmp_path):
    shared, apart = Counted(), Counted()
    run_task(
        tmp_path / "a",
        roles=roles(shared),
        world=str(tmp_path / "w1"),
        eval_args={"epochs": 2},
        task_ids=[11],
    )
    run_task(
        tmp_path / "b",
        roles=roles(apart),
        world=str(tmp_path / "w2"),
        world_variant="epoch",
        eval_args={"epochs": 2},
        task_ids=[11],
    )
    close_shared_worlds()
    assert apart.calls == 2 * shared.calls
    contexts = World.open(tmp_path / "w2", writable=False).contexts().values()
    assert sorted(c.variant for c in contexts) == [0, 1]
