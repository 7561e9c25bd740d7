"""``ResilientModel``: an Inspect model whose calls survive unreadable answers and restarts.

It is Inspect's ``Model`` (same provider object, configuration, role and arguments)
with two additions, both at the call:

- ``should_retry``: Inspect's decision, plus unreadable answers (``is_unreadable``), so
  they are retried inside Inspect's own retry loop: the same exponential backoff,
  ``max_retries`` and ``timeout`` as a 5xx (``occubench.calls._answers``);
- ``generate``: inside a sample, answered from the record of the sample's earlier
  attempt when the same request was made there, or from the journal an interrupted
  run left for the sample, else asked, recorded and journaled
  (``occubench.calls._replay``, ``occubench.calls._journal``); else made once it
  passes the gate installed for the run, if any (``gated_calls``: the spending
  limit's); on OpenAI's own API with a prompt cache key of the sample's
  (``sample_cache_key``), so that the sample's growing prompts meet the cache that
  holds their prefix. Caching changes the price, never the content: the key is left
  out of the replay key and of a world's context.

``resilient`` makes one from any model; every model occubench builds or is given for a
run goes through it (the runner, the gym API, synthesis, the audit). ``named_model``
builds one from a name the user gave.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from typing import Any, TypeGuard

from inspect_ai.log import transcript
from inspect_ai.model import (
    CachePolicy,
    ChatMessage,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ModelOutput,
    StreamHandler,
    get_model,
)
from inspect_ai.tool import Tool, ToolChoice, ToolDef, ToolInfo, ToolSource
from inspect_ai.util import store_as

from occubench.calls._answers import CallCounts, count_unreadable, is_unreadable, watch_answers
from occubench.calls._journal import count_resumed
from occubench.calls._replay import current_chain, request_key, tool_info
from occubench.errors import UsageError

NOT_GIVEN: Any = inspect.signature(Model.generate).parameters["cache"].default
"""Inspect's "not given" default of ``cache`` (its sentinel, taken from its signature)."""

CallGate = Callable[
    [Model, list[ChatMessage], list[ToolInfo], GenerateConfig], AbstractAsyncContextManager[None]
]
"""What a call passes before it is made: given the model, the messages, the tools'
definitions and the call's settings, it is entered before the request and left after
it (it may wait, or raise to refuse the call)."""

_gate: CallGate | None = None


@contextmanager
def gated_calls(gate: CallGate) -> Iterator[None]:
    """Every call of a ``ResilientModel`` passes ``gate`` while the block runs (one at a time).

    Raises:
        RuntimeError: a gate is installed already.
    """
    global _gate
    if _gate is not None:
        raise RuntimeError("the model calls of this process are gated already")
    _gate = gate
    try:
        yield
    finally:
        _gate = None


TRANSPORT_SETTINGS = frozenset(
    {
        "max_retries",
        "timeout",
        "attempt_timeout",
        "max_connections",
        "cache_prompt",
        "batch",
        "max_tool_output",
        "reasoning_summary",
    }
)
"""Generate settings that change how a call is carried out, not what it answers: left out
of a world's context (``occubench.simulator``), so that runs with other concurrency or
timeouts share answers (a reasoning summary is a side output, never the observation:
worlds recorded before every role set it to ``none`` still answer), and of the settings a
preflight failure names."""

CACHE_KEY_FIELD = "prompt_cache_key"
"""OpenAI's request field that routes requests to the cache that holds their prefix
(docs: Prompt caching; Inspect sends it from ``extra_body`` on both of OpenAI's APIs)."""

CACHED_PROVIDERS = frozenset({"OpenAIAPI"})
"""Inspect's provider classes for OpenAI's own API (an OpenAI-compatible endpoint may
refuse a field it does not know, so it is sent none)."""


def sample_cache_key(model: Model, config: GenerateConfig) -> GenerateConfig:
    """``config`` with the current sample's prompt cache key, where the provider takes one.

    The key is the task's id and the epoch (one cache per sample, for every role); a key
    the run's settings give is kept. Outside a sample, or on another provider, ``config``.
    """
    from inspect_ai.log._samples import sample_active  # Inspect's current sample

    if not CACHED_PROVIDERS.intersection(cls.__name__ for cls in type(model.api).__mro__):
        return config
    active = sample_active()
    extra = model.config.merge(config).extra_body or {}
    if active is None or active.sample.id is None or CACHE_KEY_FIELD in extra:
        return config
    key = f"occubench-{active.sample.id}-{active.epoch}"
    return config.merge(GenerateConfig(extra_body={**extra, CACHE_KEY_FIELD: key}))


class ResilientModel(Model):
    """Inspect's model with call-level retry of unreadable answers and replay (module doc)."""

    replay: bool = True
    """Whether a restarted sample's calls are answered from its record (else: paid again)."""

    @property
    def label(self) -> str:
        """``provider/model`` (the bare model name for a model built by hand)."""
        return getattr(self.api, "qualified_model_name", None) or self.name

    def should_retry(self, ex: BaseException) -> bool:
        """Inspect's retry decision, and unreadable answers too (counted when not yet)."""
        if super().should_retry(ex):
            return True
        if is_unreadable(ex):
            count_unreadable(f"{type(ex).__name__}: {ex}", self.label)
            return True
        return False

    async def generate(
        self,
        input: str | list[ChatMessage],
        tools: Sequence[Tool | ToolDef | ToolInfo | ToolSource] | ToolSource = [],  # noqa: B006
        tool_choice: ToolChoice | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008
        cache: bool | CachePolicy | Any = NOT_GIVEN,
        on_stream: StreamHandler | None = None,
    ) -> ModelOutput:
        """Generate as Inspect does, replaying a restarted sample's recorded answers."""
        watch_answers(self.api)  # cheap; a client rebuilt by the provider gets it again
        chain = current_chain() if self.replay else None
        key = (
            request_key(self.label, self.role, input, tools, tool_choice, config, chain.parts)
            if chain is not None
            else None
        )
        if chain is not None and key is not None:
            taken = chain.take(key)
            if taken is not None:
                recorded, journaled = taken
                counts = store_as(CallCounts)
                counts.replayed += 1
                if journaled:
                    counts.resumed += 1
                    count_resumed()
                transcript().info(
                    {
                        "replayed_call": {
                            "model": self.label,
                            "role": self.role,
                            "from": "journal" if journaled else "attempt",
                        }
                    },
                    source="occubench",
                )
                return recorded
        elif chain is not None and chain.journal is not None:
            chain.journal.close_reading()  # a call that cannot be keyed: paid from here
        config = sample_cache_key(self, config)
        try:
            async with self._gated(input, tools, config):
                output = await super().generate(input, tools, tool_choice, config, cache, on_stream)
        except Exception:
            if chain is not None:
                chain.call_failed = True
            raise
        if chain is not None and key is not None:
            chain.put(key, output)
        return output

    @asynccontextmanager
    async def _gated(
        self,
        input: str | list[ChatMessage],
        tools: Sequence[Tool | ToolDef | ToolInfo | ToolSource] | ToolSource,
        config: GenerateConfig,
    ) -> AsyncIterator[None]:
        """The installed gate around the call (none: the call is made at once)."""
        gate = _gate
        if gate is None:
            yield
            return
        messages: list[ChatMessage] = (
            [ChatMessageUser(content=input)] if isinstance(input, str) else input
        )
        async with gate(self, messages, await _described(tools), config):
            yield


async def _described(
    tools: Sequence[Tool | ToolDef | ToolInfo | ToolSource] | ToolSource,
) -> list[ToolInfo]:
    """The definitions of a call's tools (a tool source is asked for its tools).

    Raises:
        TypeError: a tool that has no definition (Inspect refuses the call too).
    """
    infos = []
    for item in tools if isinstance(tools, Sequence) else [tools]:
        listed = await item.tools() if _is_source(item) else [item]
        for tool in listed:
            info = tool_info(tool)
            if info is None:
                raise TypeError(f"the tool {tool!r} has no definition")
            infos.append(info)
    return infos


def _is_source(item: object) -> TypeGuard[ToolSource]:
    """Whether a tools entry is a tool source (not a tool, its definition or its info)."""
    return (
        not isinstance(item, ToolInfo | ToolDef) and not callable(item) and hasattr(item, "tools")
    )


def quiet_startup() -> None:
    """Inspect's hooks loaded now, with its console quiet: no banner on occubench's output.

    Inspect loads the hooks of its entry points (occubench's replay and redaction among
    them) as the first model of a process is built, and prints a banner naming them. It
    says nothing occubench's own commands and library calls need; loaded once here, the
    hooks are not loaded (nor announced) again.
    """
    import rich
    from inspect_ai.hooks._startup import init_hooks

    console = rich.get_console()
    quiet, console.quiet = console.quiet, True
    try:
        init_hooks()
    finally:
        console.quiet = quiet


def resilient(model: Model, replay: bool = True) -> ResilientModel:
    """The model as a ``ResilientModel`` (itself if it is one).

    A shallow copy of the same class family: the same provider object, configuration,
    role and arguments; its httpx client's answers checked. ``replay=False``: a restarted
    sample pays for its calls again.
    """
    if isinstance(model, ResilientModel) and model.replay == replay:
        return model
    made = copy.copy(model)
    made.__class__ = ResilientModel
    assert isinstance(made, ResilientModel)
    made.replay = replay
    watch_answers(made.api)
    return made


def named_model(
    name: str,
    config: GenerateConfig | None = None,
    *,
    memoize: bool = True,
    replay: bool = True,
    prepare: Callable[[Model], object] | None = None,
    model_args: Mapping[str, Any] | None = None,
) -> ResilientModel:
    """The model of a name the user gave (``provider/model``), built by Inspect, resilient.

    ``prepare`` is called on the built model before it is made resilient (the runner's
    fast path, which changes its provider in place); ``model_args`` are its provider's
    arguments (Inspect's ``-M``).

    Raises:
        UsageError: Inspect refuses the name or its arguments (an unknown provider, a
            model its provider does not know).
    """
    quiet_startup()
    try:
        built = get_model(
            name, config=config or GenerateConfig(), memoize=memoize, **dict(model_args or {})
        )
    except ValueError as e:
        raise UsageError(str(e)) from e
    if prepare is not None:
        prepare(built)
    return resilient(built, replay=replay)
