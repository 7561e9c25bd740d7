"""``occubench-openai/<service>/<model>``: an OpenAI-compatible provider without the SDK's cost.

Inspect's ``openai-api`` provider hands every request to the OpenAI SDK, whose
recursive transform of the request (every message, every tool schema, every call)
and copies of its options cost about 4.5 ms of CPU per call on a long simulator
prompt: more than the rest of the harness. This provider is Inspect's
OpenAI-compatible provider (same configuration: ``<SERVICE>_BASE_URL`` and
``<SERVICE>_API_KEY``, or ``base_url``/``api_key``; same message and tool conversion,
same choices and output, same retry classification, bad-request handling and
credential refresh) with its own transport: the chat-completions body is built
directly from the request Inspect prepares and posted on an aiohttp session of the
provider's (``occubench.providers._http``: the same bytes as the SDK sends;
``occubench.providers._sessions``: one session per event loop), and the answer is
validated against the SDK's ``ChatCompletion`` model.

It also builds the raw-call record (``ModelEvent.call``) only when the log keeps it:
with ``log_model_api`` off (occubench's default) Inspect drops the record of every
successful call, so it is made only for a failed one, which Inspect always logs.

The headers are the SDK's: those its httpx client sends with every request
(``Accept-Encoding`` less what aiohttp would not decode, ``Connection``), those the SDK
adds (``Accept``, ``Content-Type``, ``User-Agent``, its platform headers, the client's
default headers), the credential, the retry count and read timeout, then the request's
own; names in lower case, a later one replacing an earlier one of any case. The
timeouts are the SDK client's (its connect timeout raised to Inspect's, as Inspect's
client does). The provider's httpx client is kept (the SDK client the base class builds
holds it) but carries no chat request.
Every attempt goes through ``post_chat`` (``occubench.providers._http``): quick retries
as the SDK makes them, and the model's adaptive limit of requests in flight
(``occubench.calls.AdaptiveLimit``, its ceiling the call's ``max_connections``).

Not supported (refused when asked for, at model creation): streaming (``stream``),
the Responses API (``responses_api``), tool emulation (``emulate_tools``), and Inspect's
trio backend (``INSPECT_ASYNC_BACKEND=trio``: aiohttp runs on asyncio only). Requests
are plain JSON: images and audio are sent as Inspect's message conversion encodes
them, untested here. Extra ``-M`` arguments configure the SDK client that the base
class still builds, whose default headers and timeout this transport takes.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

import aiohttp
import httpx2
import openai
from inspect_ai._util._async import configured_async_backend
from inspect_ai._util.http_defaults_httpx2 import default_limits
from inspect_ai.log._samples import set_active_model_event_call
from inspect_ai.log._transcript import transcript
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput
from inspect_ai.model._model_call import ModelCall, as_error_response
from inspect_ai.model._openai import (
    OpenAIResponseError,
    model_output_from_openai,
    openai_chat_tool_choice,
    openai_media_filter,
)
from inspect_ai.model._providers.openai_compatible import OpenAICompatibleAPI
from inspect_ai.model._providers.util.hooks import HttpxHooks
from inspect_ai.tool import ToolChoice, ToolInfo
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletion

from occubench.calls import AdaptiveLimit, limit_for
from occubench.errors import UsageError
from occubench.providers._http import QuickRetry, post_chat, request_body
from occubench.providers._sessions import LoopSessions, accept_encoding, client_timeout

PROVIDER = "occubench-openai"
"""Inspect provider name: models are ``occubench-openai/<service>/<model>``."""
RETRY_COUNT_HEADER = "x-stainless-retry-count"
READ_TIMEOUT_HEADER = "x-stainless-read-timeout"
UNSUPPORTED = ("stream", "responses_api", "emulate_tools")
"""Model arguments this provider refuses when set to a true value."""


def model_calls_kept() -> bool:
    """Whether the running sample's log keeps the raw call of a successful model call.

    False only when the transcript was made with ``log_model_api=False`` (Inspect then
    drops every successful call's record, keeping failed ones). Read from the
    transcript's private ``_log_model_api`` (inspect-ai 0.3.285); when that attribute
    is missing the answer is True, so records are built as Inspect's providers build
    them.
    """
    return getattr(transcript(), "_log_model_api", None) is not False


def on_asyncio() -> bool:
    """Whether Inspect runs its evaluations on asyncio (the lean path's aiohttp needs it)."""
    return configured_async_backend() == "asyncio"


@dataclass(frozen=True)
class Wire:
    """What every request of one SDK client sends: where, its headers and timeouts."""

    client: AsyncOpenAI
    """The SDK client they were read from."""
    url: str
    """The chat-completions URL, without credentials."""
    basic_auth: str | None
    """The ``Authorization`` of credentials in the base URL (``user:password@``), which
    httpx sends in place of the API key's; None when it has none."""
    headers: dict[str, str]
    """Header names in lower case."""
    timeout: aiohttp.ClientTimeout


class LeanOpenAIAPI(OpenAICompatibleAPI):
    """Inspect's OpenAI-compatible provider, posting JSON on its own pooled client."""

    checks_answers = True
    """It reads every answer itself, an unreadable one raised as a 5xx (``read_completion``),
    so ``occubench.calls`` puts no second check on its client."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008 - Inspect's signature
        **model_args: Any,
    ) -> None:
        refused = [name for name in UNSUPPORTED if model_args.get(name) not in (None, False)]
        if not on_asyncio():
            refused.append("the trio async backend")
        if refused:
            raise UsageError(
                f"the {PROVIDER} provider does not support {', '.join(refused)}; "
                "use openai-api/<service>/<model> for that"
            )
        for name in UNSUPPORTED:
            model_args.pop(name, None)
        super().__init__(
            model_name=model_name, base_url=base_url, api_key=api_key, config=config, **model_args
        )
        self.start_lean_path()

    def start_lean_path(self) -> None:
        """Give the provider the lean path's own state: quick retries, HTTP sessions."""
        self.quick_retry = QuickRetry()
        self.sessions = LoopSessions(keepalive=default_limits().keepalive_expiry)

    async def aclose(self) -> None:
        """Close the running loop's HTTP session, then the SDK's client."""
        await self.sessions.aclose()
        await super().aclose()

    def resolve_stream(self, config: GenerateConfig) -> bool:
        """Never stream (not supported by this transport)."""
        return False

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput | tuple[ModelOutput | Exception, ModelCall]:
        """One chat completion: the base class's request, posted here."""
        tools, tool_choice, config = self.resolve_tools(tools, tool_choice, config)
        with self._http_hooks.request() as request_id:
            request = self.completion_params(config=config, tools=bool(tools))
            request["messages"] = await self.messages_to_openai(input)
            if tools:
                request["tools"] = self.tools_to_openai(tools)
                request["tool_choice"] = openai_chat_tool_choice(tool_choice)
            headers = (
                {HttpxHooks.REQUEST_ID_HEADER: request_id}
                | self.request_headers(config)
                | (config.extra_headers or {})
            )
            logged = {**request, "extra_headers": headers}
            kept = model_calls_kept()
            call = set_active_model_event_call(logged, openai_media_filter) if kept else None
            try:
                completion = await self._complete(request_body(request), headers, config)
            except openai.APIStatusError as ex:
                call = self._failed_call(call, logged, ex.body, request_id)
                if ex.status_code in (400, 403, 413, 422):
                    return self.handle_bad_request(ex), call
                raise
            except (openai.APIError, OpenAIResponseError) as ex:
                self._failed_call(call, logged, getattr(ex, "body", None), request_id)
                raise
            if call is not None:
                call.set_response(completion.model_dump(), self._http_hooks.end_request(request_id))
            output = model_output_from_openai(
                completion, self.chat_choices_from_completion(completion, tools)
            )
            return output if call is None else (output, call)

    def _failed_call(
        self, call: ModelCall | None, logged: dict[str, Any], body: object, request_id: str
    ) -> ModelCall:
        """The raw call of a failed request (made now if it was not kept), marked failed."""
        call = call or set_active_model_event_call(logged, openai_media_filter)
        call.set_error(as_error_response(body), self._http_hooks.end_request(request_id))
        return call

    async def _complete(
        self, body: bytes, headers: dict[str, str], config: GenerateConfig
    ) -> ChatCompletion:
        """Post the body (``post_chat``: quick retries, the model's adaptive limit)."""
        wire = self.wire()
        sent = wire.headers | {"authorization": f"Bearer {self.api_key}"}
        sent.update((name.lower(), value) for name, value in headers.items())
        if wire.basic_auth is not None:
            sent["authorization"] = wire.basic_auth
        return await post_chat(
            await self.sessions.session(wire.url),
            wire.url,
            body,
            sent,
            timeout=wire.timeout,
            limit=self.adaptive_limit(config),
            retry=self.quick_retry,
            secret=self.api_key,
            count_header=RETRY_COUNT_HEADER,
            hooks=self._http_hooks,
        )

    def wire(self) -> Wire:
        """The URL, headers and timeouts of the SDK's client (read once per client)."""
        client = self.client
        made: Wire | None = getattr(self, "_wire", None)
        if made is None or made.client is not client:
            url = httpx2.URL(f"{str(self.base_url).rstrip('/')}/chat/completions")
            basic_auth = None
            if url.username or url.password:
                pair = f"{url.username}:{url.password}".encode()
                basic_auth = f"Basic {base64.b64encode(pair).decode()}"
                url = url.copy_with(username=None, password=None)
            headers = {k.lower(): v for k, v in self.http_client.headers.items()}
            if "accept-encoding" in headers:
                headers["accept-encoding"] = accept_encoding(headers["accept-encoding"])
            headers.update(
                (k.lower(), v) for k, v in client.default_headers.items() if isinstance(v, str)
            )
            timeout = client.timeout
            read = timeout.read if isinstance(timeout, httpx2.Timeout) else timeout
            if read is not None:
                headers[READ_TIMEOUT_HEADER] = str(read)
            floor = self.http_client.timeout.connect
            made = self._wire = Wire(
                client, str(url), basic_auth, headers, client_timeout(timeout, floor)
            )
        return made

    def adaptive_limit(self, config: GenerateConfig) -> AdaptiveLimit:
        """This model's adaptive limit: its connection pool's, ceiling ``max_connections``."""
        ceiling = config.max_connections or self.max_connections()
        label = getattr(self, "qualified_model_name", None) or self.model_name
        return limit_for(f"{type(self).__name__}:{self.connection_key()}", label, ceiling)
