"""Offline scripted models: behaviours and their Inspect provider."""

from occubench.scripted._behaviours import BEHAVIOURS
from occubench.scripted._null import SCRIPTED_PROVIDER, NullAgent
from occubench.scripted._provider import ScriptedAPI
from occubench.scripted._reply import Behaviour, Reply
from occubench.scripted._twin_sim import (
    FORGET_WRITE,
    TWIN_SIMULATORS,
    check_twin_run,
    is_twin_simulator,
)

__all__ = [
    "BEHAVIOURS",
    "FORGET_WRITE",
    "Behaviour",
    "NullAgent",
    "Reply",
    "SCRIPTED_PROVIDER",
    "ScriptedAPI",
    "TWIN_SIMULATORS",
    "check_twin_run",
    "is_twin_simulator",
]
