"""Inspect entry points: the occubench and diagnose tasks and ``occubench/<name>`` models."""

from inspect_ai.model import modelapi

from occubench.diagnosis import diagnose
from occubench.task import occubench


@modelapi(name="occubench")
def scripted_models() -> type:
    """Offline scripted models (``occubench/schema-agent``, ``occubench/replay``, ...)."""
    from occubench.scripted._provider import ScriptedAPI

    return ScriptedAPI


__all__ = ["diagnose", "occubench", "scripted_models"]
