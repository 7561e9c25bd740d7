"""The gym-style API: one task's environment as an async episode, and a Gymnasium wrapper.

``make_episode(dataset, task_id, simulator=..., **settings)`` gives an ``EnvEpisode``:
``await reset()`` (instruction, tools), ``await step(ToolCallAction(...))`` (the
observation, faults applied and logged), ``await grade(answer)`` (the verdict, with its
votes and checks). ``OccuBenchEnv`` (``occubench.env.gymnasium``; needs the ``gym``
extra) wraps it for Gymnasium.
"""

from occubench.env._episode import (
    EnvEpisode,
    EpisodeOver,
    EpisodeStart,
    StepResult,
    ToolCallAction,
    ToolSpecView,
)
from occubench.env._make import make_episode

__all__ = [
    "EnvEpisode",
    "EpisodeOver",
    "EpisodeStart",
    "StepResult",
    "ToolCallAction",
    "ToolSpecView",
    "make_episode",
]
