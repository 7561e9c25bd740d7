"""Inspect entry points: the occubench tasks and the ``occubench/<name>`` scripted models.

Tasks: ``occubench/occubench`` (the benchmark), ``occubench/fidelity_audit``,
``occubench/serve`` (one task's environment over MCP) and ``occubench/diagnose`` (why
agents failed).
"""

from inspect_ai.model import modelapi

from occubench.diagnosis import diagnose
from occubench.task import fidelity_audit, occubench, serve


@modelapi(name="occubench")
def scripted_models() -> type:
    """Offline scripted models (``occubench/schema-agent``, ``occubench/replay``, ...)."""
    from occubench.scripted._provider import ScriptedAPI

    return ScriptedAPI


__all__ = ["diagnose", "fidelity_audit", "occubench", "scripted_models", "serve"]
