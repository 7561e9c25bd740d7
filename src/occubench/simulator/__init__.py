"""The Language Environment Simulator (LES): prompt, parsing, history."""

from occubench.simulator._parse import ObservationParseError, parse_observation
from occubench.simulator._prompt import normalize_braces, render_system_prompt
from occubench.simulator._simulator import SimStep, Simulator, SimulatorError
from occubench.simulator._state import STATE_CONTRACT, PatchError, StateMode, apply_reply_patch

__all__ = [
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
