"""The noisy simulator: its seed decides which answers are transient errors."""

from inspect_ai.model import get_model

from conftest import run_task
from occubench.agent import episode_in
from occubench.dataset import reference_suite_dir


def busy_steps(log):
    return [
        [
            i
            for i, s in enumerate(episode_in(sample.store).steps)
            if "UNAVAILABLE" in str(s.model_dump(exclude_none=True))
        ]
        for sample in sorted(log.samples, key=lambda s: s.id)
    ]


def run(tmp_path, seed):
    return run_task(
        tmp_path,
        agent="occubench/no-retry",
        roles={"simulator": get_model("occubench/noisy", memoize=False)},
        dataset=str(reference_suite_dir()),
        with_plan=True,
        simulator_seed=seed,
    )


def test_seeds_give_different_environments_and_a_seed_gives_the_same_again(tmp_path):
    first, again, other = run(tmp_path / "a", 0), run(tmp_path / "b", 0), run(tmp_path / "c", 1)
    assert busy_steps(first) == busy_steps(again)
    assert busy_steps(first) != busy_steps(other)
    assert any(busy_steps(first)) and any(busy_steps(other))
    passed = [
        sum(s.scores["occubench_scorer"].value == "C" for s in log.samples)
        for log in (first, other)
    ]
    assert all(0 < p < 10 for p in passed)  # no-retry fails where the simulator was busy


def by_epoch(log):
    """Busy steps per task, one list per epoch."""
    out = {}
    for sample in sorted(log.samples, key=lambda s: (s.id, s.epoch)):
        steps = sample.store["Episode:steps"]
        out.setdefault(sample.id, []).append(
            [i for i, s in enumerate(steps) if "UNAVAILABLE" in str(s)]
        )
    return out


def test_a_seed_per_epoch_makes_each_epoch_its_own_simulator_sample(tmp_path):
    from occubench.config import RunConfig

    assert [RunConfig(simulator_seed=3).epoch_simulator_seed(e) for e in (1, 2)] == [3, 3]
    seeded = RunConfig(simulator_seed=3, simulator_seed_by_epoch=True)
    assert [seeded.epoch_simulator_seed(e) for e in (1, 2, 3)] == [3, 4, 5]
    assert RunConfig(simulator_seed_by_epoch=True).epoch_simulator_seed(2) == 1

    def epochs(folder, seed=0, count=3, **settings):
        return by_epoch(
            run_task(
                tmp_path / folder,
                agent="occubench/no-retry",
                roles={"simulator": get_model("occubench/noisy", memoize=False)},
                dataset=str(reference_suite_dir()),
                with_plan=True,
                task_ids=[1001, 1002, 1003],
                simulator_seed=seed,
                eval_args={"epochs": count},
                **settings,
            )
        )

    alike, apart = epochs("alike"), epochs("apart", simulator_seed_by_epoch=True)
    assert all(runs == [runs[0]] * 3 for runs in alike.values())  # one sample, three times
    assert any(len({str(r) for r in runs}) > 1 for runs in apart.values())
    second = epochs("seed-1", seed=1, count=1)  # epoch 2 generates with seed 0 + 1
    assert {t: runs[1] for t, runs in apart.items()} == {t: runs[0] for t, runs in second.items()}
