"""Inspect entry points: the ``occubench/occubench`` and ``occubench/serve`` tasks, models.

Models: ``occubench/<name>``, the offline scripted ones.
"""

from inspect_ai.model import modelapi

from occubench.task import occubench, serve


@modelapi(name="occubench")
def scripted_models() -> type:
    """Offline scripted models (``occubench/schema-agent``, ``occubench/replay``, ...)."""
    from occubench.scripted._provider import ScriptedAPI

    return ScriptedAPI


__all__ = ["occubench", "scripted_models", "serve"]
