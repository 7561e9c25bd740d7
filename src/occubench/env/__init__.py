"""The gym-style API: one task's environment as an async episode, and a Gymnasium wrapper."""

from occubench.env._episode import (
    EnvEpisode,
    EpisodeOver,
    EpisodeStart,
    StepResult,
    ToolCallAction,
    ToolSpecView,
)

__all__ = [
    "EnvEpisode",
    "EpisodeOver",
    "EpisodeStart",
    "StepResult",
    "ToolCallAction",
    "ToolSpecView",
]
