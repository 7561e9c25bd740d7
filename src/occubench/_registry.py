"""Inspect entry points: the occubench tasks and the model providers.

Tasks: ``occubench/occubench`` (the benchmark), ``occubench/fidelity_audit``,
``occubench/serve`` (one task's environment over MCP) and ``occubench/diagnose`` (why
agents failed). Models: ``occubench/<name>``, the offline scripted models;
``occubench-openai/<service>/<model>``, the lean OpenAI-compatible provider
(``occubench.providers``); ``human/<name>``, a person playing the agent (``occubench play``).
"""

from inspect_ai.model import modelapi

from occubench.diagnosis import diagnose
from occubench.task import fidelity_audit, occubench, serve


@modelapi(name="occubench")
def scripted_models() -> type:
    """Offline scripted models (``occubench/schema-agent``, ``occubench/replay``, ...)."""
    from occubench.scripted import ScriptedAPI

    return ScriptedAPI


@modelapi(name="occubench-openai")
def lean_openai() -> type:
    """Any OpenAI-compatible server, posting JSON without the OpenAI SDK's request transform."""
    from occubench.providers import LeanOpenAIAPI

    return LeanOpenAIAPI


@modelapi(name="human")
def human_players() -> type:
    """A person as the agent (``human/<name>``), answering at ``occubench play``'s desk."""
    from occubench.play import HumanAPI

    return HumanAPI


__all__ = [
    "diagnose",
    "fidelity_audit",
    "human_players",
    "lean_openai",
    "occubench",
    "scripted_models",
    "serve",
]
