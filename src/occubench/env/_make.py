"""Make an episode from a dataset, a task id, the run settings and the models."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai.model import Model

from occubench.calls import named_model, resilient
from occubench.config import ResolvedRun, RunConfig
from occubench.env._episode import EnvEpisode
from occubench.grading import choose_judge


def _model(value: str | Model | None) -> Model | None:
    """The model by name (built afresh) or as given, resilient (``occubench.calls``)."""
    if value is None:
        return None
    return resilient(value) if isinstance(value, Model) else named_model(value, memoize=False)


def make_episode(
    dataset: str | Path,
    task_id: int,
    *,
    simulator: str | Model,
    verifier: str | Model | None = None,
    config: RunConfig | None = None,
    **settings: Any,
) -> EnvEpisode:
    """One task's episode, not yet opened (``await episode.reset()`` opens it).

    Args:
        dataset: Dataset folder, or ``reference`` (the built-in suite).
        task_id: The task.
        simulator: The simulator model (an Inspect model name, or a Model).
        verifier: The judge; default the simulator, except for tasks with checks, which
            their checks grade (the run's combination rule).
        config: Run settings to start from (default: the defaults).
        **settings: ``RunConfig`` fields on top: ``env_mode``, ``fault_count``,
            ``fault_duration``, ``faults``, ``seed``, ``with_plan``, ``state_mode``,
            ``votes``, ``max_tool_calls``, ...

    Raises:
        DatasetError: the dataset is malformed, or has no task ``task_id``.
        ValidationError: a setting is invalid.
    """
    base = (config or RunConfig()).model_dump()
    run = RunConfig.model_validate(
        {**base, **settings, "dataset": str(dataset), "task_ids": [task_id]}
    )
    loaded = run.load_tasks()
    task = loaded.tasks[0]
    sim = _model(simulator)
    assert sim is not None
    return EnvEpisode(
        ResolvedRun.of(run),
        task,
        loaded.env(task),
        simulator=sim,
        judge=choose_judge(bool(task.checks), _model(verifier), sim),
    )
