"""A task with a user through a world (recorded, then replayed with no user call) and faults."""

from conftest import run_task
from occubench.agent import episode_in
from occubench.worlds import ObservationSource, close_shared_worlds
from user_fixtures import user_dataset
from world_fixtures import Counted


def counted_roles():
    sim, user = Counted("echo-simulator"), Counted("user-cooperative")
    roles = {"simulator": sim.model(), "user": user.model()}
    return roles, sim, user


def world_run(log_dir, agent, data, world, **task_args):
    """The user dataset's task run by ``agent`` in ``world`` (recorded unless ``world_mode``
    says otherwise), the simulator and the user counted; the shared worlds closed after it.
    Returns the log, the simulator and the user."""
    roles, sim, user = counted_roles()
    log = run_task(
        log_dir, agent=agent, roles=roles, dataset=str(data), world=str(world), **task_args
    )
    close_shared_worlds()
    return log, sim, user


def test_a_replay_from_a_world_makes_no_user_model_call(tmp_path):
    data, world = user_dataset(tmp_path / "data"), tmp_path / "world"
    first, _, user = world_run(tmp_path / "a", "occubench/asking", data, world)
    recorded = episode_in(first.samples[0].store)
    assert user.calls == 3 and [t.attempts for t in recorded.user_turns] == [1, 1, 1]
    assert {t.source for t in recorded.user_turns} == {ObservationSource.SIMULATOR}

    second, sim, user = world_run(
        tmp_path / "b", "occubench/asking", data, world, world_mode="replay"
    )
    replayed = episode_in(second.samples[0].store)
    assert second.samples[0].error is None
    assert user.calls == 0 and sim.calls == 0
    assert "user" not in (second.samples[0].role_usage or {})
    assert {t.source for t in replayed.user_turns} == {ObservationSource.WORLD}
    assert [t.attempts for t in replayed.user_turns] == [0, 0, 0]
    assert [t.reply for t in replayed.user_turns] == [t.reply for t in recorded.user_turns]
    assert second.samples[0].scores["occubench_scorer"].value == "C"


def test_a_replay_that_strays_from_the_recorded_conversation_is_a_world_miss(tmp_path):
    data, world = user_dataset(tmp_path / "data"), tmp_path / "world"
    world_run(tmp_path / "a", "occubench/asking", data, world)
    strayed, _, user = world_run(
        tmp_path / "b", "occubench/non-asking", data, world, world_mode="replay"
    )
    assert user.calls == 0
    assert strayed.samples[0].error is not None


def test_faults_hit_the_tools_never_the_user(tmp_path):
    data = user_dataset(tmp_path / "data")
    turns, faulted = {}, 0
    for mode in ("E0", "E1", "E2", "E3"):
        roles, _, user = counted_roles()
        log = run_task(
            tmp_path / mode,
            agent="occubench/asking",
            roles=roles,
            dataset=str(data),
            env_mode=mode,
            fault_count=1,
        )
        episode = episode_in(log.samples[0].store)
        faulted += len(episode.fault_log)
        assert all(f.tool == "file_claim" for f in episode.fault_log)
        turns[mode] = [(t.asked, t.reply, t.problems) for t in episode.user_turns]
    assert faulted > 0
    replies = {mode: [reply for _, reply, _ in said] for mode, said in turns.items()}
    assert replies["E0"] == replies["E1"] == replies["E2"] == replies["E3"]
    assert all(problems == [] for said in turns.values() for _, _, problems in said)
