"""A simulator's world: the context its answers are keyed under, and how it uses the world.

``world_context`` says what decides a simulator's answers apart from the path (the env,
the rendered system prompt, the layout, the model and its settings, the state mode, the
online checks, ``pass_raw``, the retries, the variant). ``WorldUse`` is a world bound to
one simulator: the context's digest, the mode and the task named in a replay miss.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from inspect_ai.model import GenerateConfig, Model

from occubench.calls import TRANSPORT_SETTINGS
from occubench.dataset import EnvConfig
from occubench.errors import ErrorSource, InfrastructureError
from occubench.simchecks import ObservationChecker
from occubench.simulator._layout import SimulatorLayout
from occubench.worlds import (
    EntrySource,
    World,
    WorldContext,
    WorldMode,
    env_digest,
    shared_world,
    text_digest,
)

PERSON_PROVIDER = "human"
"""The provider of a model whose answers a person gives (``human/<name>``, ``occubench.play``):
its world entries are a person's (``EntrySource.PERSON``, ``author``: the name)."""


class WorldMiss(InfrastructureError):
    """A replayed run met a path its world does not hold (never the agent's failure)."""

    source = ErrorSource.WORLD


class WorldSimulator(Protocol):
    """What a world needs of a simulator (``Simulator`` is one): its context, and the binding."""

    model: Model
    system_prompt: str
    layout: SimulatorLayout
    explicit: bool
    checker: ObservationChecker | None
    check_model: Model | None
    config: GenerateConfig
    pass_raw: bool
    max_retries: int

    def use_world(
        self, world: World, context: WorldContext, mode: WorldMode, *, task: str = ""
    ) -> str:
        """Answer from ``world`` from now on; the context's digest."""
        ...


def model_author(model: Model) -> tuple[EntrySource, str]:
    """Who a model's world entries are by: a person (``human/<name>``) or the model."""
    if str(model).split("/", 1)[0] == PERSON_PROVIDER:
        return EntrySource.PERSON, model.name
    return EntrySource.SIMULATOR, str(model)


def generate_settings(simulator: WorldSimulator) -> dict[str, Any]:
    """The generate settings that reach the simulator's calls (the model's own, then the run's)."""
    merged = simulator.model.config.merge(simulator.config)
    settings = merged.model_dump(mode="json", exclude_none=True)
    return {k: v for k, v in settings.items() if k not in TRANSPORT_SETTINGS}


def world_context(simulator: WorldSimulator, env: EnvConfig, *, variant: int = 0) -> WorldContext:
    """The context a simulator's answers are keyed under in a world.

    Args:
        simulator: The simulator as the sample asks it (prompt, layout, model, settings,
            state mode, online checks, re-asks).
        env: The env config it simulates.
        variant: The world's variant (``--world-variant``; independent samples).
    """
    return WorldContext(
        env_digest=env_digest(env),
        system_prompt_digest=text_digest(simulator.system_prompt),
        layout=simulator.layout.style,
        model=str(simulator.model),
        generate=generate_settings(simulator),
        state_mode="explicit" if simulator.explicit else "history",
        sim_checks=simulator.checker is not None,
        check_model=None if simulator.check_model is None else str(simulator.check_model),
        pass_raw=simulator.pass_raw,
        retries=simulator.max_retries,
        variant=variant,
    )


@dataclass(frozen=True)
class WorldUse:
    """A world bound to one simulator (``Simulator.use_world``)."""

    world: World
    mode: WorldMode
    context_digest: str
    task: str
    """The task named when a replay meets a path the world does not hold."""


def attach_world(
    simulator: WorldSimulator,
    env: EnvConfig,
    path: str,
    mode: WorldMode,
    *,
    variant: int = 0,
    task: str = "",
) -> World:
    """Bind the world at ``path`` (opened once per process) to a simulator; the world.

    Args:
        simulator: A simulator before its first step.
        env: The env config it simulates.
        path: The world (a folder, or a packed file for the replay modes).
        mode: How the simulator uses it.
        variant: The world's variant.
        task: The task named when a replay meets an unrecorded path.

    Raises:
        UsageError: the world cannot be opened as ``mode`` needs.
    """
    world = shared_world(path, writable=mode is WorldMode.RECORD)
    simulator.use_world(world, world_context(simulator, env, variant=variant), mode, task=task)
    return world
