"""Clamp notes: where a role's reasoning setting is not what its provider is sent.

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

Rather than a copy of these rules, ``clamp_notes`` builds the role's model as Inspect
does (no request is made) and asks its provider's own request builder what the request
holds with the setting and without it; what the setting changes is what is sent.
Providers without a request builder known here (bedrock, grok, mistral, occubench's
scripted models, ...) get no notes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from enum import Enum
from typing import TYPE_CHECKING, Any, NamedTuple

from pydantic import BaseModel, Field

from occubench.config._generate import role_settings
from occubench.errors import UsageError
from occubench.roles import Role

if TYPE_CHECKING:
    from inspect_ai.model import GenerateConfig, ModelAPI

    from occubench.config._protocol import ProtocolPoints

Request = dict[str, Any]
"""The fields of a request that a generate config decides, flattened to dotted paths."""

PROBE_API_KEY = "occubench-clamp-probe"
"""Key the probe builds a model with: no request is made, and a missing key is the
preflight's to report."""

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


class ReasoningSetting(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """A ``GenerateConfig`` field a provider may not send as asked."""

    REASONING_EFFORT = "reasoning_effort"
    """``--reasoning-effort``: none, minimal, low, medium, high, xhigh, max."""
    REASONING_TOKENS = "reasoning_tokens"
    """``--reasoning-tokens``: the thinking budget in tokens."""

    @property
    def words(self) -> str:
        """The setting as a note names it (``reasoning effort``)."""
        return self.value.replace("_", " ")


class ClampNote(BaseModel):
    """A role's setting that its provider is sent otherwise, or not at all."""

    role: Role = Field(description="The role whose model is asked.")
    model: str = Field(description="The role's Inspect model name.")
    setting: ReasoningSetting = Field(description="The GenerateConfig field.")
    asked: str = Field(description="The value the run asks for.")
    sent: str | None = Field(
        description="What the request carries instead (wire field and value where it is "
        "not an effort level); None: nothing, the setting is dropped."
    )
    why: str = Field(description="Who changes it, in a few words.")

    def line(self) -> str:
        """The note as one line, e.g. ``agent deepseek/x: reasoning effort xhigh sent as max``."""
        outcome = "not sent" if self.sent is None else f"sent as {self.sent}"
        return (
            f"{self.role.value} {self.model}: {self.setting.words} {self.asked} {outcome} "
            f"({self.why})"
        )


def clamp_notes(role: Role, model: str, config: GenerateConfig) -> list[ClampNote]:
    """The clamp notes of one role's model under its generate config.

    ``config`` is what the role's calls carry (its ``max_tokens`` too, if the run sets
    one; else the provider's default for the config is taken, as Inspect does). A model
    Inspect cannot build (an unknown provider, a missing SDK) gets no notes: the
    preflight reports it.

    Raises:
        UsageError: a setting Inspect or the provider refuses for this model, said
            before any request: Inspect's ``PrerequisiteError`` (``reasoning_tokens`` on
            Claude 4.7+), and Anthropic's thinking budget out of its documented range.
    """
    asked = {
        setting: value
        for setting in ReasoningSetting
        if (value := getattr(config, setting.value)) is not None
    }
    if not asked:
        return []
    from inspect_ai._util.error import PrerequisiteError

    provider = model.split("/", 1)[0]
    notes = []
    with _quietly():
        api = _built(model, config)
        probe = None if api is None else _probe_of(api)
        if api is None or probe is None:
            return []
        if config.max_tokens is None:  # as Inspect's Model.generate fills it in
            config = config.model_copy(
                update={"max_tokens": api.max_tokens_for_config(config) or api.max_tokens()}
            )
        try:
            request = probe.request(api, config)
            if probe.refusal is not None and (refused := probe.refusal(request)) is not None:
                raise UsageError(f"{role.value} {model}: {refused}")
            for setting, value in asked.items():
                without = probe.request(api, config.model_copy(update={setting.value: None}))
                note = _note(str(value), _changed(request, without))
                if note is not None:
                    sent, why = note
                    notes.append(
                        ClampNote(
                            role=role,
                            model=model,
                            setting=setting,
                            asked=str(value),
                            sent=sent,
                            why=f"Inspect's {provider} provider {why}",
                        )
                    )
        except PrerequisiteError as e:
            raise UsageError(f"{role.value} {model}: {' '.join(str(e).split())}") from None
    return notes


def run_clamp_notes(
    models: Mapping[Role, str],
    generate: Callable[[Role], GenerateConfig],
    points: ProtocolPoints,
) -> list[ClampNote]:
    """The clamp notes of a run: each role's model, settings and max_tokens (``points``).

    Raises:
        UsageError: a setting refused for a role's model (``clamp_notes``).
    """
    settings = role_settings(models, generate, points)
    return [
        note for role, model in models.items() for note in clamp_notes(role, model, settings[role])
    ]


class _Probe(NamedTuple):
    """What a provider's requests hold for a config, and what the provider refuses."""

    request: Callable[[ModelAPI, GenerateConfig], Request]
    """The request fields the config decides, flattened (``_leaves``)."""
    refusal: Callable[[Request], str | None] | None = None
    """Why the provider would refuse the request (None: it would not)."""


def _built(model: str, config: GenerateConfig) -> ModelAPI | None:
    """The provider of ``model`` as Inspect builds it (None: it cannot be built here)."""
    from inspect_ai._util.error import PrerequisiteError
    from inspect_ai.model import get_model

    try:
        return get_model(model, config=config, memoize=False, api_key=PROBE_API_KEY).api
    except (PrerequisiteError, ValueError, ImportError):
        return None


def _leaves(value: Any, path: str = "") -> Request:
    """A request's values by dotted path (``thinking.budget_tokens``), mappings opened."""
    if isinstance(value, Mapping):
        found: Request = {}
        for key, item in value.items():
            found.update(_leaves(item, f"{path}.{key}" if path else str(key)))
        return found
    return {path: value.value if isinstance(value, Enum) else value}


def _changed(request: Request, without: Request) -> Request:
    """The paths whose values a setting changes (None: a field it removes)."""
    return {
        path: request.get(path)
        for path in request.keys() | without.keys()
        if request.get(path) != without.get(path)
    }


def _note(asked: str, changed: Request) -> tuple[str | None, str] | None:
    """What was sent for ``asked`` and why, when it is not ``asked`` itself (None: it is).

    Nothing changed: the setting is dropped, unless it asks for no reasoning (``none``),
    which a request without reasoning fields grants where the model does not reason by
    default. Otherwise the reasoning fields it changed say what is sent.
    """
    if not changed:
        return None if asked == "none" else (None, "drops it")
    wire = {  # the reasoning fields it sets (one it displaces is no part of what is sent)
        _field(p): v
        for p, v in sorted(changed.items())
        if _field(p) in REASONING_FIELDS and v is not None
    }
    if asked == "none" or not wire:  # sent in another shape (thinking disabled, ...)
        return None
    if any(str(v).lower() == asked.lower() for v in wire.values()):
        return None
    if len(wire) == 1 and next(iter(wire)) in EFFORT_FIELDS:
        return str(next(iter(wire.values()))).lower(), "maps it"
    return ", ".join(f"{field}={v}" for field, v in wire.items()), "maps it"


def _field(path: str) -> str:
    """The wire field a dotted path ends in (``thinking.budget_tokens``: ``budget_tokens``)."""
    return path.rsplit(".", 1)[-1]


@contextmanager
def _quietly() -> Iterator[None]:
    """Inspect's output left for the run itself: nothing is printed while probing.

    Its console is quiet (the hooks banner of the first model built, which the run does
    not show either), and its providers' warnings are not logged nor marked as given
    (``inspect_ai._util.logger.warn_once`` warns once per process: a probe's warning would
    otherwise be printed now and never in the run's own log).
    """
    import rich
    from inspect_ai._util import logger as inspect_logger

    console = rich.get_console()
    warned, quiet = list(inspect_logger._warned), console.quiet
    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)
    console.quiet = True
    try:
        yield
    finally:
        console.quiet = quiet
        logging.disable(previous)
        inspect_logger._warned[:] = warned


def _anthropic_request(api: ModelAPI, config: GenerateConfig) -> Request:
    """Inspect's anthropic request fields (``AnthropicAPI.completion_config``)."""
    from inspect_ai.model._providers.anthropic import AnthropicAPI

    assert isinstance(api, AnthropicAPI)
    params, extra_body, _, _ = api.completion_config(config)
    return _leaves({**params, **extra_body})


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
    return _leaves({"thinking_config": dumped})


def _responses_request(model: str, info: Any, config: GenerateConfig) -> Request:
    """Inspect's Responses API request fields (``completion_params_responses``)."""
    from inspect_ai.model._providers.openai_responses import completion_params_responses
    from openai import NOT_GIVEN

    return _leaves(
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
    return _leaves(completion_params_completions(api, config, False))


def _compatible_request(api: ModelAPI, config: GenerateConfig) -> Request:
    """An OpenAI-compatible provider's request fields (its ``completion_params``)."""
    from inspect_ai.model._providers.openai_compatible import OpenAICompatibleAPI

    assert isinstance(api, OpenAICompatibleAPI)
    if api.uses_responses_api([], config):
        return _responses_request(api.service_model_name(), api.responses_model_info(), config)
    return _leaves(api.completion_params(config, False))


_PROBES = {
    "inspect_ai.model._providers.anthropic.AnthropicAPI": _Probe(
        _anthropic_request, _anthropic_refusal
    ),
    "inspect_ai.model._providers.google.GoogleGenAIAPI": _Probe(_google_request),
    "inspect_ai.model._providers.openai.OpenAIAPI": _Probe(_openai_request),
    "inspect_ai.model._providers.openai_compatible.OpenAICompatibleAPI": _Probe(
        _compatible_request
    ),
}
"""Inspect's provider classes (module and name) whose requests the probe reads; a
subclass (deepseek, openrouter, ...) is read through its own overrides."""


def _probe_of(api: ModelAPI) -> _Probe | None:
    """The probe of a provider: of its class or its nearest base that has one."""
    for cls in type(api).__mro__:
        probe = _PROBES.get(f"{cls.__module__}.{cls.__qualname__}")
        if probe is not None:
            return probe
    return None
