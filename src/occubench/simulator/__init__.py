"""The Language Environment Simulator (LES): prompt, parsing, history."""

from occubench.simulator._layout import (
    LAYOUTS,
    OccubenchLayout,
    PaperLayout,
    ParsedObservation,
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
from occubench.simulator._simulator import (
    Observation,
    Reading,
    SimStep,
    Simulator,
    SimulatorError,
)
from occubench.simulator._state import (
    STATE_CONTRACT,
    PatchedState,
    PatchError,
    StateMode,
    apply_reply_patch,
)

__all__ = [
    "LAYOUTS",
    "SIM_CHECK_CONTRACT",
    "Observation",
    "OccubenchLayout",
    "PaperLayout",
    "ParsedObservation",
    "PatchedState",
    "Reading",
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
    "apply_reply_patch",
    "normalize_braces",
    "parse_observation",
    "render_system_prompt",
]
