"""Inspect entry points: the ``occubench/occubench`` task and the model providers.

``occubench/<name>``: offline scripted models; ``occubench-openai/<service>/<model>``:
the lean OpenAI-compatible provider (``occubench.providers``).
"""

from inspect_ai.model import modelapi

from occubench.task import occubench


@modelapi(name="occubench")
def scripted_models() -> type:
    """Offline scripted models (``occubench/schema-agent``, ``occubench/replay``, ...)."""
    from occubench.scripted._provider import ScriptedAPI

    return ScriptedAPI


@modelapi(name="occubench-openai")
def lean_openai() -> type:
    """Any OpenAI-compatible server, posting JSON without the OpenAI SDK's request transform."""
    from occubench.providers import LeanOpenAIAPI

    return LeanOpenAIAPI


__all__ = ["lean_openai", "occubench", "scripted_models"]
