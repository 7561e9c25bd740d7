"""Inspect entry points: the ``occubench/occubench`` task and ``occubench/<name>`` models."""

from inspect_ai.model import modelapi

from occubench.task import occubench


@modelapi(name="occubench")
def scripted_models() -> type:
    """Offline scripted models (``occubench/schema-agent``, ``occubench/replay``, ...)."""
    from occubench.scripted._provider import ScriptedAPI

    return ScriptedAPI


__all__ = ["occubench", "scripted_models"]
