"""The lean path for Inspect's own OpenAI-compatible models: ``openai-api/...``, ``vllm/...``.

A run's models are named as Inspect names them, and the README's examples (and most
users) name an OpenAI-compatible endpoint ``openai-api/<service>/<model>`` or a vLLM
server ``vllm/<model>``: Inspect's providers, whose every request goes through the
OpenAI SDK's recursive request transform (about half of the harness's CPU per call).
``fast_path`` gives such a model the lean provider's chat path in place, keeping
everything else it is: its name (so logs, reports and resumed runs see the same model),
configuration, credentials, connection pool, retry classification and, for vLLM, its
own request preparation (a managed server's start, message folding), which runs first
and then hands the request to the lean path. The body it posts is the SDK's, byte for
byte, with the SDK's headers (``tests/providers/``: the same bytes on the wire, the same
outputs, errors and logs as Inspect's path).

What keeps Inspect's path: a model that asked for streaming, the Responses API or tool
emulation (the lean path builds none of them), any model under Inspect's trio backend
(the lean path's aiohttp runs on asyncio only), every other provider (``openai/...``
included: its request builder differs with the model, and current OpenAI models use the
Responses API), and any model when the run's ``fast_path`` option is off.
"""

from __future__ import annotations

from inspect_ai.model import Model
from inspect_ai.model._providers.openai_compatible import OpenAICompatibleAPI

from occubench.providers._lean_openai import UNSUPPORTED, LeanOpenAIAPI, on_asyncio

LEAN_PROVIDERS = {
    ("inspect_ai.model._providers.openai_compatible", "OpenAICompatibleAPI"),
    ("inspect_ai.model._providers.vllm", "VLLMAPI"),
}
"""Inspect's provider classes (module, name) whose chat requests the lean path sends:
``openai-api`` and ``vllm``."""

_lean_classes: dict[type, type[LeanOpenAIAPI]] = {}


def lean_class(provider: type[OpenAICompatibleAPI]) -> type[LeanOpenAIAPI]:
    """The provider class on the lean chat path (one class per provider class).

    Its own methods come first, then the lean provider's, then Inspect's
    OpenAI-compatible base's; it keeps the provider's class name, so Inspect's
    connection pools and limits are the ones the model had.
    """
    if issubclass(provider, LeanOpenAIAPI):
        return provider
    found = _lean_classes.get(provider)
    if found is None:
        bases = (LeanOpenAIAPI,) if provider is OpenAICompatibleAPI else (provider, LeanOpenAIAPI)
        found = type(
            provider.__name__,
            bases,
            {"__module__": __name__, "__doc__": f"{provider.__name__} on the lean chat path."},
        )
        _lean_classes[provider] = found
    return found


def fast_path(model: Model) -> bool:
    """Put an ``openai-api`` or ``vllm`` model on the lean path, in place; whether it is on it.

    Only for a model this process built for itself (its provider object is changed, not
    copied). A model of another provider, one that asked for what the lean path does
    not send (``stream``, ``responses_api``, ``emulate_tools``), or any under Inspect's
    trio backend, is left as it is.
    """
    api = model.api
    if isinstance(api, LeanOpenAIAPI):
        return True
    provider = type(api)
    if (provider.__module__, provider.__name__) not in LEAN_PROVIDERS:
        return False
    assert issubclass(provider, OpenAICompatibleAPI)
    if any(getattr(api, name, None) not in (None, False) for name in UNSUPPORTED):
        return False
    if not on_asyncio():
        return False
    api.__class__ = lean_class(provider)
    assert isinstance(api, LeanOpenAIAPI)
    api.start_lean_path()
    return True
