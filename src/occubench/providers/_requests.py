"""What Inspect's providers put in a request for a generate config, read from their own code.

A ``ProviderProbe`` per Inspect provider class (``PROBES``): the request fields a config
decides, flattened to dotted paths (``thinking.budget_tokens``), and what the provider's
API refuses before any call (Anthropic's thinking budget out of its range). The wire
fields that carry a reasoning effort or budget are named here too. ``occubench.config``
asks it for its clamp notes; no request is ever made.

Inspect's providers translate ``reasoning_effort`` and ``reasoning_tokens`` per model,
and the translation is their code, not a table (``inspect_ai/model/_providers``):

- anthropic (``anthropic.py``): Claude 4.6+ takes the effort as ``output_config.effort``
  (``effort_from_reasoning_effort``: ``minimal`` becomes ``low``, ``xhigh`` is ``high``
  before Claude 4.7); older Claude gets a thinking budget instead
  (``bridged_reasoning_tokens``: ``reasoning_tokens``, else Inspect's effort-to-tokens
  table, ``_reasoning.effort_to_reasoning_tokens``); Claude 3 and 3.5 get neither;
  Claude 4.7+ refuses ``reasoning_tokens`` before any request (``PrerequisiteError``).
- openai (``openai.py``, ``openai_responses.py``, ``openai_completions.py``): the
  effort as given, ``max`` as ``xhigh`` before gpt-5.6, dropped (with a warning) for a
  model without reasoning options; ``reasoning_tokens`` is never sent.
- google (``google.py``, ``_google_reasoning.py``): Gemini 3+ takes the effort as a
  thinking level (``xhigh`` and ``max`` as ``high``, ``minimal`` as ``low`` where the
  model lacks it), Gemini 2.5 as a thinking budget; ``reasoning_tokens`` is a thinking
  budget unless an effort is given to Gemini 3+.
- deepseek (``deepseek.py``): ``DEEPSEEK_EFFORT_MAP``; OpenAI-compatible providers
  otherwise send ``reasoning_effort`` as is and no ``reasoning_tokens`` (openrouter
  sends it as ``reasoning.max_tokens``, unless an effort is given).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import Enum
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from inspect_ai.model import GenerateConfig, ModelAPI

Request = dict[str, Any]
"""The fields of a request that a generate config decides, flattened to dotted paths."""

ANTHROPIC_MIN_BUDGET = 1024
"""Least ``budget_tokens`` Anthropic takes (anthropic SDK:
types/thinking_config_enabled_param.py, "Must be ≥1024 and less than `max_tokens`")."""

EFFORT_FIELDS = frozenset({"effort", "reasoning_effort", "thinking_level"})
"""Wire fields that carry an effort level: anthropic SDK ``OutputConfigParam.effort``,
OpenAI ``reasoning_effort`` (chat) and ``reasoning.effort`` (Responses), google-genai
``ThinkingConfig.thinking_level``."""
BUDGET_FIELDS = frozenset({"budget_tokens", "thinking_budget", "max_tokens"})
"""Wire fields that carry a thinking budget: anthropic SDK
``ThinkingConfigEnabledParam.budget_tokens``, google-genai
``ThinkingConfig.thinking_budget``, OpenRouter ``reasoning.max_tokens``."""
REASONING_FIELDS = EFFORT_FIELDS | BUDGET_FIELDS
"""Wire fields that carry reasoning: an effort level or a thinking budget."""


class ProviderProbe(NamedTuple):
    """What a provider's requests hold for a config, and what the provider refuses."""

    request: Callable[[ModelAPI, GenerateConfig], Request]
    """The request fields the config decides, flattened (``request_leaves``)."""
    refusal: Callable[[Request], str | None] | None = None
    """Why the provider would refuse the request (None: it would not)."""


def request_leaves(value: Any, path: str = "") -> Request:
    """A request's values by dotted path (``thinking.budget_tokens``), mappings opened."""
    if isinstance(value, Mapping):
        found: Request = {}
        for key, item in value.items():
            found.update(request_leaves(item, f"{path}.{key}" if path else str(key)))
        return found
    return {path: value.value if isinstance(value, Enum) else value}


def _anthropic_request(api: ModelAPI, config: GenerateConfig) -> Request:
    """Inspect's anthropic request fields (``AnthropicAPI.completion_config``)."""
    from inspect_ai.model._providers.anthropic import AnthropicAPI

    assert isinstance(api, AnthropicAPI)
    params, extra_body, _, _ = api.completion_config(config)
    return request_leaves({**params, **extra_body})


def _anthropic_refusal(request: Request) -> str | None:
    """An extended-thinking budget Anthropic refuses with a 400.

    anthropic SDK: types/thinking_config_enabled_param.py, ``budget_tokens``: "Must be
    ≥1024 and less than `max_tokens`". Inspect sends the budget as it is
    (``AnthropicAPI.completion_config``, ``bridged_reasoning_tokens``); its default
    max_tokens is the model's base plus the budget (``max_tokens_for_config``), so only
    a max_tokens the role's calls set can be at or below it.
    """
    if request.get("thinking.type") != "enabled":
        return None
    budget, limit = int(request["thinking.budget_tokens"]), int(request["max_tokens"])
    if ANTHROPIC_MIN_BUDGET <= budget < limit:
        return None
    return (
        f"a thinking budget of {budget} tokens is refused by Anthropic, which takes "
        f"{ANTHROPIC_MIN_BUDGET} or more and less than max_tokens ({limit}); change the "
        "role's reasoning tokens (or the effort they come from) or its max tokens"
    )


def _google_request(api: ModelAPI, config: GenerateConfig) -> Request:
    """Inspect's Gemini thinking config (``GoogleGenAIAPI.chat_thinking_config``)."""
    from inspect_ai.model._providers.google import GoogleGenAIAPI

    assert isinstance(api, GoogleGenAIAPI)
    thinking = api.chat_thinking_config(config)
    dumped = {} if thinking is None else thinking.model_dump(mode="json", exclude_none=True)
    return request_leaves({"thinking_config": dumped})


def _responses_request(model: str, info: Any, config: GenerateConfig) -> Request:
    """Inspect's Responses API request fields (``completion_params_responses``)."""
    from inspect_ai.model._providers.openai_responses import completion_params_responses
    from openai import NOT_GIVEN

    return request_leaves(
        completion_params_responses(
            model,
            model_info=info,
            config=config,
            service_tier=None,
            prompt_cache_key=NOT_GIVEN,
            prompt_cache_retention=NOT_GIVEN,
            safety_identifier=NOT_GIVEN,
            responses_store=None,
            tools=False,
            tool_params=[],
            has_computer_tool=False,
        )
    )


def _openai_request(api: ModelAPI, config: GenerateConfig) -> Request:
    """Inspect's OpenAI request fields, on the API it picks (Responses or chat)."""
    from inspect_ai.model._providers.openai import OpenAIAPI
    from inspect_ai.model._providers.openai_completions import completion_params_completions

    assert isinstance(api, OpenAIAPI)
    if api.uses_responses_api([], config):
        return _responses_request(api.api_model_name(), api, config)
    return request_leaves(completion_params_completions(api, config, False))


def _compatible_request(api: ModelAPI, config: GenerateConfig) -> Request:
    """An OpenAI-compatible provider's request fields (its ``completion_params``)."""
    from inspect_ai.model._providers.openai_compatible import OpenAICompatibleAPI

    assert isinstance(api, OpenAICompatibleAPI)
    if api.uses_responses_api([], config):
        return _responses_request(api.service_model_name(), api.responses_model_info(), config)
    return request_leaves(api.completion_params(config, False))


PROBES: dict[str, ProviderProbe] = {
    "inspect_ai.model._providers.anthropic.AnthropicAPI": ProviderProbe(
        _anthropic_request, _anthropic_refusal
    ),
    "inspect_ai.model._providers.google.GoogleGenAIAPI": ProviderProbe(_google_request),
    "inspect_ai.model._providers.openai.OpenAIAPI": ProviderProbe(_openai_request),
    "inspect_ai.model._providers.openai_compatible.OpenAICompatibleAPI": ProviderProbe(
        _compatible_request
    ),
}
"""Inspect's provider classes (module and name) whose requests the probe reads; a
subclass (deepseek, openrouter, ...) is read through its own overrides."""


def provider_probe(api: ModelAPI) -> ProviderProbe | None:
    """The probe of a provider: of its class or its nearest base that has one."""
    for cls in type(api).__mro__:
        probe = PROBES.get(f"{cls.__module__}.{cls.__qualname__}")
        if probe is not None:
            return probe
    return None
