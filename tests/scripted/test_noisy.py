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
