"""The run configuration (what a run computes) and the eval options (how it is run)."""

from occubench.config._eval_options import EvalOptions
from occubench.config._generate import GENERATE_ROLES, checked_generate, role_values
from occubench.config._protocol import PRESETS, ProtocolPoints
from occubench.config._release_prompts import PromptsError, ReleasePrompts
from occubench.config._run import (
    CONFIG_METADATA,
    NO_AGENT_MODEL,
    POINTS_METADATA,
    RELEASE_METADATA,
    RunConfig,
    split_list,
)

__all__ = [
    "GENERATE_ROLES",
    "CONFIG_METADATA",
    "NO_AGENT_MODEL",
    "POINTS_METADATA",
    "RELEASE_METADATA",
    "PRESETS",
    "EvalOptions",
    "PromptsError",
    "ProtocolPoints",
    "ReleasePrompts",
    "RunConfig",
    "checked_generate",
    "role_values",
    "split_list",
]
