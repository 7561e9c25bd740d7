"""The Language Environment Simulator (LES): prompt, parsing, history."""

from occubench.simulator._parse import ObservationParseError, parse_observation
from occubench.simulator._prompt import (
    SIM_CHECK_CONTRACT,
    action_message,
    normalize_braces,
    observation_message,
    render_system_prompt,
)
from occubench.simulator._simulator import SimStep, Simulator, SimulatorError
from occubench.simulator._state import (
    STATE_CONTRACT,
    PatchError,
    StateMode,
    apply_reply_patch,
    state_action,
)

__all__ = [
    "SIM_CHECK_CONTRACT",
    "STATE_CONTRACT",
    "ObservationParseError",
    "PatchError",
    "SimStep",
    "Simulator",
    "SimulatorError",
    "StateMode",
    "action_message",
    "apply_reply_patch",
    "normalize_braces",
    "observation_message",
    "parse_observation",
    "render_system_prompt",
    "state_action",
]
