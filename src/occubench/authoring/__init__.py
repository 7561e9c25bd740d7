"""Writing an environment: a skeleton to fill, a check before any model call, one call tried.

``new_env`` writes a new env and its first task in the release layout (with FIELDS.md),
``check_envs`` reports every problem of a dataset folder at once with each env's prompt
size, and ``try_call`` shows the simulator's request for one tool call and what it made
of it.
"""

from occubench.authoring._check import LARGE_PROMPT_TOKENS, EnvCheck, EnvSize, check_envs
from occubench.authoring._skeleton import (
    ENV_NAME,
    FIELDS_FILE,
    NewEnv,
    fields_markdown,
    new_env,
    skeleton_env,
    skeleton_task,
)
from occubench.authoring._try import SentMessage, SimulatorExchange, TryResult, try_call

__all__ = [
    "ENV_NAME",
    "FIELDS_FILE",
    "LARGE_PROMPT_TOKENS",
    "EnvCheck",
    "EnvSize",
    "NewEnv",
    "SentMessage",
    "SimulatorExchange",
    "TryResult",
    "check_envs",
    "fields_markdown",
    "new_env",
    "skeleton_env",
    "skeleton_task",
    "try_call",
]
