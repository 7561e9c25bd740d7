"""Verdict flips between epochs and runs, split by where the trajectories first differ."""

import math

import pytest

from conftest import sample_row
from occubench.analysis import FlipCause, first_difference, verdict_flips

READ = ["a:read", "o:record", "f:answer"]


@pytest.mark.parametrize(
    ("a", "b", "cause"),
    [
        (READ, ["a:write", "o:record", "f:answer"], FlipCause.AGENT),  # another action
        (READ, ["a:read", "o:busy", "a:read", "o:record", "f:answer"], FlipCause.SIMULATOR),
        (READ, ["a:read", "o:record", "f:other"], FlipCause.AGENT),  # another final answer
        (READ, ["f:gave up"], FlipCause.AGENT),  # answered instead of calling
        (READ, list(READ), FlipCause.VERIFIER),  # the same trajectory, graded unlike
        (READ, [], FlipCause.UNKNOWN),  # not recorded
        (READ, READ[:2], FlipCause.UNKNOWN),  # its answer not recorded
    ],
)
def test_the_first_difference_names_the_cause(a, b, cause):
    assert first_difference(a, b) is cause
    assert first_difference(b, a) is cause


def rows_of(task, verdicts_and_trajectories, **fields):
    return [
        sample_row(task_id=task, epoch=i, passed=passed, trajectory=trajectory, **fields)
        for i, (passed, trajectory) in enumerate(verdicts_and_trajectories, start=1)
    ]


def test_flips_count_tasks_and_split_their_discordant_pairs():
    busy = ["a:read", "o:busy", "f:gave up"]
    rows = [
        # task 1: pass, fail (simulator), pass (same as the first) -> flipped
        *rows_of(1, [(True, READ), (False, busy), (True, READ)]),
        # task 2: pass, fail on the same trajectory -> flipped, verifier
        *rows_of(2, [(True, READ), (False, READ)]),
        # task 3: always fails, whatever the agent did -> not flipped
        *rows_of(3, [(False, READ), (False, ["f:x"])]),
        # task 4: one verdict and an error: not a unit
        *rows_of(4, [(True, READ), (None, [])]),
    ]
    (flip,) = verdict_flips(rows)
    assert (flip.tasks, flip.samples, flip.flipped) == (3, 7, 2)
    assert flip.rate == pytest.approx(2 / 3)
    # task 1: (1,2) and (2,3) discordant, both at the observation; task 2: one pair
    assert (flip.pairs, flip.simulator_pairs, flip.verifier_pairs, flip.agent_pairs) == (3, 2, 1, 0)
    assert flip.share(FlipCause.SIMULATOR) == pytest.approx(2 / 3)
    assert flip.regraded is None and flip.replayed == 0


def test_runs_of_one_setup_pool_and_modes_and_setups_stay_apart():
    rows = [
        sample_row(run_id="r1", task_id=1, epoch=1, passed=True, trajectory=READ),
        sample_row(run_id="r2", task_id=1, epoch=1, passed=False, trajectory=READ),
        sample_row(run_id="r3", task_id=1, epoch=1, passed=True, env_mode="E1"),
        sample_row(agent_model="a/two", task_id=1, epoch=1, passed=True),
    ]
    (flip,) = verdict_flips(rows)  # two runs of a/one in E0; the rest ran once
    assert (flip.agent, flip.env_mode, flip.flipped, flip.verifier_pairs) == ("a/one", "E0", 1, 1)


def test_replayed_samples_are_counted():
    world = {"world_hits": 2, "simulator_calls": 0}
    rows = rows_of(1, [(True, READ), (True, READ)], **world)
    (flip,) = verdict_flips(rows)
    assert (flip.flipped, flip.pairs, flip.replayed) == (0, 0, 2)
    assert math.isnan(flip.share(FlipCause.AGENT))


def test_a_regraded_sample_is_compared_with_its_original_grading():
    original = [
        sample_row(run_id="src", task_id=t, epoch=1, passed=p) for t, p in [(1, True), (2, True)]
    ]
    regraded = [
        sample_row(run_id="new", regraded_from_run="src", task_id=t, epoch=1, passed=p)
        for t, p in [(1, True), (2, False)]
    ]
    (flip,) = verdict_flips(regraded, original + regraded)
    assert (flip.tasks, flip.regraded, flip.regrade_flips) == (0, 2, 1)
    assert math.isnan(flip.rate)
    assert verdict_flips(regraded) == []  # its original not given: nothing to say
