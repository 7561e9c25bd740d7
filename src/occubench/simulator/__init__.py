"""The Language Environment Simulator (LES): prompt, parsing, history.

The names load with their module when first used (``__getattr__``): a command that reads
only the settings (``StateMode``) imports neither Inspect nor the model calls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from occubench.lazy import lazy_names

if TYPE_CHECKING:
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
        running_sample,
    )
    from occubench.simulator._state import (
        STATE_CONTRACT,
        PatchedState,
        PatchError,
        StateMode,
        apply_reply_patch,
    )
    from occubench.simulator._world import (
        PERSON_PROVIDER,
        WorldMiss,
        WorldUse,
        attach_world,
        model_author,
        world_context,
    )

_MODULES = {
    "LAYOUTS": "_layout",
    "Observation": "_simulator",
    "ObservationParseError": "_parse",
    "OccubenchLayout": "_layout",
    "PaperLayout": "_layout",
    "ParsedObservation": "_layout",
    "PatchedState": "_state",
    "Reading": "_simulator",
    "PatchError": "_state",
    "SIM_CHECK_CONTRACT": "_prompt",
    "STATE_CONTRACT": "_state",
    "SimStep": "_simulator",
    "Simulator": "_simulator",
    "SimulatorError": "_simulator",
    "running_sample": "_simulator",
    "SimulatorLayout": "_layout",
    "StateMode": "_state",
    "apply_reply_patch": "_state",
    "embeds_state": "_prompt",
    "failed_observation": "_prompt",
    "normalize_braces": "_prompt",
    "parse_observation": "_parse",
    "render_system_prompt": "_prompt",
    "PERSON_PROVIDER": "_world",
    "WorldMiss": "_world",
    "WorldUse": "_world",
    "attach_world": "_world",
    "model_author": "_world",
    "world_context": "_world",
}
"""The module of each public name."""


__getattr__ = lazy_names(__name__, _MODULES)


__all__ = [
    "LAYOUTS",
    "SIM_CHECK_CONTRACT",
    "Observation",
    "OccubenchLayout",
    "PERSON_PROVIDER",
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
    "WorldMiss",
    "WorldUse",
    "apply_reply_patch",
    "attach_world",
    "model_author",
    "normalize_braces",
    "parse_observation",
    "render_system_prompt",
    "running_sample",
    "world_context",
]
