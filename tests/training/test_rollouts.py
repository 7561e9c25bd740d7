"""Rollouts at training scale: counts of episodes, simulator calls, world hits, tokens, cost."""

from __future__ import annotations

import asyncio

import pytest

from conftest import make_dataset, tool
from occubench.costs import ModelPrice, PriceTable
from occubench.errors import UsageError
from occubench.training import EpisodeSource, ModelRollout, RolloutReport, run_rollouts
from occubench.training import _rollouts as rollouts_module

AGENT = "occubench/careful"
CANNED = "occubench/canned"
TASKS = [1001, 1002]


def reference(**settings) -> EpisodeSource:
    return EpisodeSource.of("reference", CANNED, None, with_plan=True, **settings)


def play(source: EpisodeSource, agent: str = AGENT, **options) -> RolloutReport:
    return asyncio.run(run_rollouts(source, agent, **options))


def test_every_rollout_is_played_graded_and_counted():
    prices = PriceTable(
        models={m: ModelPrice(input_per_mtok=1.0, output_per_mtok=2.0) for m in (AGENT, CANNED)}
    )
    report = play(reference(), task_ids=TASKS, per_task=3, concurrency=4, prices=prices)
    assert report.episodes == 6 and report.errors == 0 and report.mean_reward == 1.0
    assert [(r.task_id, r.index) for r in report.rollouts] == [
        (t, i) for t in TASKS for i in range(3)
    ]
    for rollout in report.rollouts:
        assert rollout.passed and rollout.exploit_suspected is False
        assert rollout.simulator_calls == rollout.tool_calls > 0 and rollout.world_hits == 0
        assert rollout.turns == rollout.tool_calls + 1  # one call a turn, then the answer
        assert set(rollout.tokens) == {AGENT, CANNED} and all(rollout.tokens.values())
        assert rollout.cost is not None and rollout.cost > 0
    assert report.simulator_calls == sum(r.simulator_calls for r in report.rollouts)
    assert report.cost == pytest.approx(sum(r.cost or 0 for r in report.rollouts))
    assert report.tokens()[AGENT] == sum(r.tokens[AGENT] for r in report.rollouts)


def test_a_world_records_once_and_replays_without_the_simulator(tmp_path):
    world = str(tmp_path / "world")
    recorded = play(reference(world=world), task_ids=TASKS, per_task=4, concurrency=8)
    calls = [r.simulator_calls + r.world_hits for r in recorded.rollouts]
    # every rollout of a task takes the same path: the first answers reach the simulator once
    per_task = {t: calls[i * 4] for i, t in enumerate(TASKS)}
    assert recorded.simulator_calls == sum(per_task.values())
    assert recorded.world_hits == sum(calls) - recorded.simulator_calls
    replayed = play(
        reference(world=world, world_mode="replay"), task_ids=TASKS, per_task=4, concurrency=8
    )
    assert replayed.simulator_calls == 0 and replayed.errors == 0
    assert replayed.world_hits == sum(calls)
    assert [r.reward for r in replayed.rollouts] == [r.reward for r in recorded.rollouts]
    assert all(CANNED not in r.tokens for r in replayed.rollouts)


def test_no_more_rollouts_than_the_concurrency_at_once(monkeypatch):
    running, most = 0, 0

    async def counted(source, models, task_id, index, **options) -> ModelRollout:
        nonlocal running, most
        running += 1
        most = max(most, running)
        for _ in range(5):  # give the others their turn
            await asyncio.sleep(0)
        running -= 1
        return ModelRollout(task_id=task_id, index=index, reward=1.0, passed=True)

    monkeypatch.setattr(rollouts_module, "roll_out_model", counted)
    report = play(reference(), per_task=3, concurrency=4)
    assert report.episodes == 30 and most == 4


@pytest.mark.parametrize("guard, reward", [("off", 1.0), ("flag", 1.0), ("zero", 0.0)])
def test_the_guard_zeroes_an_exploit_in_a_rollout(tmp_path, guard, reward):
    dataset = make_dataset(tmp_path / "dataset", [tool("close_record", note="Why.")])
    source = EpisodeSource.of(
        str(dataset),
        "occubench/gullible-simulator",
        "occubench/gullible-judge",
        exploit_guard=guard,
    )
    (rollout,) = play(source, "occubench/exploit-arguments").rollouts
    assert rollout.reward == reward
    assert rollout.exploit_suspected is (None if guard == "off" else True)


def test_bad_counts_are_refused():
    with pytest.raises(UsageError, match="at least 1"):
        play(reference(), per_task=0)
