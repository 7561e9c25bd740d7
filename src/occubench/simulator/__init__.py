"""The Language Environment Simulator (LES): prompt, parsing, history."""

from occubench.simulator._parse import ObservationParseError, parse_observation
from occubench.simulator._prompt import normalize_braces, render_system_prompt
from occubench.simulator._simulator import SimStep, Simulator, SimulatorError

__all__ = [
    "ObservationParseError",
    "SimStep",
    "Simulator",
    "SimulatorError",
    "normalize_braces",
    "parse_observation",
    "render_system_prompt",
]
