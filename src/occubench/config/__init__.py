"""The run configuration (what a run computes) and the eval options (how it is run)."""

from occubench.config._clamps import ClampNote, ReasoningSetting, clamp_notes, run_clamp_notes
from occubench.config._eval_options import EvalOptions
from occubench.config._fields import (
    Cli,
    aliases,
    cli_of,
    default_of,
    keyword_parameters,
    setting_names,
)
from occubench.config._generate import (
    GENERATE_ROLES,
    MAX_TOKENS_POINTS,
    checked_generate,
    role_settings,
    role_values,
)
from occubench.config._protocol import (
    OVERRIDE_NOTE,
    PRESETS,
    ProtocolOverrides,
    ProtocolPoints,
    resolve_points,
)
from occubench.config._release_prompts import PromptsError, ReleasePrompts
from occubench.config._resolved import ResolvedRun, protocol_points
from occubench.config._run import (
    CONFIG_METADATA,
    DATASET_DIGEST_METADATA,
    NO_AGENT_MODEL,
    POINTS_METADATA,
    RELEASE_METADATA,
    MissingField,
    RunConfig,
    split_list,
)

__all__ = [
    "GENERATE_ROLES",
    "MAX_TOKENS_POINTS",
    "CONFIG_METADATA",
    "NO_AGENT_MODEL",
    "OVERRIDE_NOTE",
    "DATASET_DIGEST_METADATA",
    "POINTS_METADATA",
    "RELEASE_METADATA",
    "PRESETS",
    "ClampNote",
    "Cli",
    "EvalOptions",
    "PromptsError",
    "ProtocolOverrides",
    "ProtocolPoints",
    "ReasoningSetting",
    "ReleasePrompts",
    "ResolvedRun",
    "MissingField",
    "RunConfig",
    "aliases",
    "checked_generate",
    "clamp_notes",
    "cli_of",
    "default_of",
    "keyword_parameters",
    "protocol_points",
    "resolve_points",
    "role_settings",
    "role_values",
    "run_clamp_notes",
    "setting_names",
    "split_list",
]
