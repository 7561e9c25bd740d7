"""The Language Environment Simulator (LES): prompt, parsing, history."""

from occubench.simulator._layout import (
    LAYOUTS,
    OccubenchLayout,
    PaperLayout,
    SimulatorLayout,
)
from occubench.simulator._parse import ObservationParseError, parse_observation
from occubench.simulator._prompt import (
    SIM_CHECK_CONTRACT,
    embeds_state,
    failed_observation,
    normalize_braces,
    render_system_prompt,
)
from occubench.simulator._simulator import Observation, SimStep, Simulator, SimulatorError
from occubench.simulator._state import STATE_CONTRACT, PatchError, StateMode, apply_reply_patch
from occubench.simulator._world import (
    PERSON_PROVIDER,
    WorldMiss,
    WorldUse,
    attach_world,
    model_author,
    world_context,
)

__all__ = [
    "LAYOUTS",
    "SIM_CHECK_CONTRACT",
    "Observation",
    "OccubenchLayout",
    "PERSON_PROVIDER",
    "PaperLayout",
    "SimulatorLayout",
    "embeds_state",
    "failed_observation",
    "STATE_CONTRACT",
    "ObservationParseError",
    "PatchError",
    "SimStep",
    "Simulator",
    "SimulatorError",
    "StateMode",
    "WorldMiss",
    "WorldUse",
    "apply_reply_patch",
    "attach_world",
    "model_author",
    "normalize_braces",
    "parse_observation",
    "render_system_prompt",
    "world_context",
]
