"""Offline scripted models: behaviours and their Inspect provider."""

from occubench.scripted._behaviours import BEHAVIOURS
from occubench.scripted._null import SCRIPTED_PROVIDER, NullAgent
from occubench.scripted._provider import ScriptedAPI
from occubench.scripted._reply import Behaviour, Reply

__all__ = [
    "BEHAVIOURS",
    "Behaviour",
    "NullAgent",
    "Reply",
    "SCRIPTED_PROVIDER",
    "ScriptedAPI",
]
