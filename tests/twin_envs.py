"""What the package twins' own tests (tests/twins/envs) share.

``sample_twin``: a package twin on its config in the public sample (``public_sample``);
``reference_twin``: the twin of a reference-suite environment. ``successes`` runs a plan
and holds every step to the one shape rule (``occubench.twins.shape_problems``), and
``assert_error_fits`` an error to its config's error examples (``error_shapes``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, TypeVar

from occubench.dataset import load_dataset, load_env, reference_suite_dir
from occubench.twins import (
    Outcome,
    Twin,
    TwinStep,
    error_shapes,
    package_twins,
    shape_problems,
    twin_for,
)

T = TypeVar("T", bound=Twin)


def sample_twin(public_sample: Path, kind: type[T]) -> T:
    """A fresh ``kind`` twin on its environment's config in the public sample.

    ``kind`` is asserted the twin the package finds for that environment.
    """
    assert package_twins()[kind.environment] is kind, kind
    return kind(load_env(public_sample, kind.environment))


def assert_task_on(public_sample: Path, task_id: int, twin: Twin) -> None:
    """Task ``task_id`` of the public sample runs in ``twin``'s environment."""
    assert load_dataset(public_sample, task_ids=[task_id]).tasks[0].env_name == twin.environment


def reference_twin(env_name: str) -> Twin:
    """A fresh twin of the reference-suite environment ``env_name`` (the package has one)."""
    twin = twin_for(load_env(reference_suite_dir(), env_name))
    assert twin is not None, env_name
    return twin


def assert_fits(twin: Twin, step: TwinStep) -> TwinStep:
    """``step``, asserted a success whose observation fits its tool's ``example_output``."""
    assert step.outcome is Outcome.SUCCESS, step
    example = twin.specs[step.tool].example_output
    assert shape_problems(step.observation, example, step.free) == [], step
    return step


def successes(twin: Twin, plan: Iterable[tuple[str, dict[str, Any]]]) -> list[TwinStep]:
    """The steps of ``plan`` run on ``twin``, each asserted a success that fits its example."""
    return [assert_fits(twin, step) for step in twin.run(plan)]


def assert_error_fits(twin: Twin, step: TwinStep) -> None:
    """``step`` is an error shaped as one of the error examples its config's prompt gives."""
    assert step.outcome is Outcome.ERROR, step
    shapes = error_shapes(twin.env)
    assert any(shape_problems(step.observation, shape) == [] for shape in shapes), (step, shapes)


def assert_nothing_changed(twin: Twin) -> None:
    """No call so far changed the twin's state: it still holds the config's initial state."""
    assert all(not step.changes for step in twin.steps)
    assert twin.state == twin.env.task_initial_state


def changes(step: TwinStep) -> dict[str, tuple[Any, Any]]:
    """The state changes of ``step``, by JSON Pointer: (before, after)."""
    return {change.path: (change.before, change.after) for change in step.changes}
