"""A model endpoint for agent programs, answered through Inspect's model layer.

An agent program is given this endpoint's base URLs (``/v1`` beside the sample's
``/mcp``; see ``ProgramInputs``) and the sample's token, the one its MCP endpoint takes:
both are served behind one guard, ``http_app``, which checks it (as ``Authorization:
Bearer`` or ``x-api-key``) and bounds each request's size and depth. It speaks three
wires:

- OpenAI chat completions, ``POST /v1/chat/completions`` (streamed or not: what the
  agent frameworks' chat models send);
- OpenAI Responses, ``POST /v1/responses`` (streamed or not: what Codex sends);
- Anthropic Messages, ``POST /v1/messages`` (streamed or not: what Claude Code sends)
  and ``POST /v1/messages/count_tokens``;

and ``GET /v1/models``. Each generation is handed to Inspect's agent bridge
(``inspect_ai.agent.agent_bridge``, which converts each wire's request to Inspect
messages and the output back) as a request for the model ``inspect``, which is the run's
agent model: the generation goes through Inspect (its retries, rate limits, cache
policy), and its tokens and cost land in the sample's log like the built-in loop's; the
wire it came by and the tokens that wire's answer reported are told to ``on_call``
(``BridgedCall``, kept in the sample's store). The bridge answers whole; a streaming
request gets that answer as the wire's event stream (``occubench.providers``).
The reasoning of each answer (Anthropic thinking blocks, Responses reasoning) is kept
for the sample and put back into a later request that sends the answer's turn without
it, as the provider requires (``occubench.serving._reasoning``).

The handlers run in tasks started inside the sample (and inside ``agent_bridge``), so
Inspect's per-sample context, which the bridge and the usage accounting read, is theirs.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from anthropic import AsyncAnthropic
from anthropic.types import Message, MessageParam, MessageTokensCount
from anthropic.types.beta import BetaMessage
from inspect_ai.model import get_model, messages_from_anthropic
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletion
from openai.types.responses import Response as ResponsesResponse
from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from occubench.providers import (
    Event,
    Wire,
    completion_chunks,
    message_events,
    response_events,
    sse,
    usage_asked,
)
from occubench.serving._access import ErrorKind, api_error
from occubench.serving._reasoning import ReasoningMemory
from occubench.serving._record import BridgedCall
from occubench.text import loads

BRIDGED_MODEL = "inspect"
"""Model name the bridge routes to the run's agent model (any name a program sends is
replaced by it)."""

_UNREACHED_URL = "http://127.0.0.1:9"
"""Base URL of the in-process clients; the bridge answers before any request is sent."""
_STREAM_KEYS = ("stream", "stream_options")
"""Request members about streaming, taken out before the bridge sees the request."""


_Answer = TypeVar("_Answer", bound=BaseModel)


@dataclass(frozen=True)
class _Route(Generic[_Answer]):
    """How one model route reads a request and answers it."""

    path: str
    conversation: str
    """The member holding the conversation (``messages``, ``input``)."""
    produce: Callable[[dict[str, Any], Request], Awaitable[_Answer]]
    """Answers a request's body (its model already replaced)."""
    events: Callable[[_Answer, dict[str, Any]], Iterator[Event]] | None
    """The answer as an event stream, given the request as sent; None: streaming is
    refused."""
    wire: Wire | None
    """The wire of a generation; None: the route generates nothing."""
    text_conversation: bool = False
    """Whether the conversation may be one string (the Responses API's ``input``)."""


def _bad_request(message: str) -> JSONResponse:
    return api_error(400, ErrorKind.INVALID_REQUEST, message)


def _system_text(system: Any) -> str | None:
    """A Messages request's ``system`` as text.

    It is a string or text blocks (anthropic SDK: ``types/message_create_params.py``).
    """
    if isinstance(system, list):
        return "\n".join(b.get("text", "") for b in system if isinstance(b, dict)) or None
    return system if isinstance(system, str) and system else None


async def count_tokens(body: dict[str, Any]) -> MessageTokensCount:
    """The agent model's estimate of a Messages request's input tokens.

    Its messages, system and tools, counted by ``Model.count_tokens`` (anthropic SDK:
    ``types/message_count_tokens_params.py``); nothing is generated.
    """
    messages: list[MessageParam] = body["messages"]
    model = get_model()
    counted = await model.count_tokens(
        await messages_from_anthropic(messages, _system_text(body.get("system")))
    )
    if body.get("tools"):
        counted += await model.count_tokens(json.dumps(body["tools"]))
    return MessageTokensCount(input_tokens=counted)


_USAGE_KEYS = {
    Wire.OPENAI_CHAT: (("prompt_tokens",), "completion_tokens"),
    Wire.OPENAI_RESPONSES: (("input_tokens",), "output_tokens"),
    Wire.ANTHROPIC: (
        ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"),
        "output_tokens",
    ),
}
"""Where each wire's answer reports its usage: the input members (summed), the output one
(openai SDK: ``CompletionUsage``, ``ResponseUsage``; anthropic SDK: ``Usage``)."""


def bridged_call(
    wire: Wire, streamed: bool, answer: dict[str, Any], restored: int = 0
) -> BridgedCall:
    """The record of one generation, from its answer (as JSON data) on its wire.

    ``restored``: the request's assistant turns whose reasoning the bridge put back.
    """
    usage = answer.get("usage") or {}
    inputs, output = _USAGE_KEYS[wire]
    return BridgedCall(
        wire=wire,
        streamed=streamed,
        input_tokens=sum(usage.get(key) or 0 for key in inputs),
        output_tokens=usage.get(output) or 0,
        restored_reasoning=restored,
    )


def _model_routes() -> list[_Route[Any]]:
    """The model routes.

    Each generation is asked of an in-process SDK client that ``agent_bridge``
    intercepts (its patch answers a request for the model ``inspect``).
    """
    openai = AsyncOpenAI(api_key="occubench-bridge", base_url=f"{_UNREACHED_URL}/v1", max_retries=0)
    anthropic = AsyncAnthropic(api_key="occubench-bridge", base_url=_UNREACHED_URL, max_retries=0)

    async def chat(body: dict[str, Any], request: Request) -> ChatCompletion:
        return await openai.post("/chat/completions", body=body, cast_to=ChatCompletion)

    def chunks(completion: ChatCompletion, asked: dict[str, Any]) -> Iterator[Event]:
        return completion_chunks(completion, usage_asked(asked))

    async def responses(body: dict[str, Any], request: Request) -> ResponsesResponse:
        return await openai.post("/responses", body=body, cast_to=ResponsesResponse)

    async def messages(body: dict[str, Any], request: Request) -> Message | BetaMessage:
        # a beta request (Claude Code's ?beta=true) is answered with the beta types
        if request.query_params.get("beta") == "true":
            return await anthropic.post("/v1/messages", body=body, cast_to=BetaMessage)
        return await anthropic.post("/v1/messages", body=body, cast_to=Message)

    async def tokens(body: dict[str, Any], request: Request) -> MessageTokensCount:
        return await count_tokens(body)

    return [
        _Route("/v1/chat/completions", "messages", chat, chunks, Wire.OPENAI_CHAT),
        _Route(
            "/v1/responses",
            "input",
            responses,
            lambda response, asked: response_events(response),
            Wire.OPENAI_RESPONSES,
            text_conversation=True,
        ),
        _Route(
            "/v1/messages",
            "messages",
            messages,
            lambda message, asked: message_events(message),
            Wire.ANTHROPIC,
        ),
        _Route("/v1/messages/count_tokens", "messages", tokens, None, None),
    ]


def bridge_routes(
    on_failure: Callable[[BaseException], None],
    on_call: Callable[[BridgedCall], None] = lambda call: None,
) -> list[Route]:
    """The endpoint's routes: the model routes of each wire, and ``/v1/models``.

    Served behind the guard of ``http_app`` (token, hosts, bounded bodies), never alone.
    Every model route answers the same way: a body that is not a JSON object with its
    conversation is a 400; a request the bridge cannot convert is a 400; a model failure
    (after Inspect's retries) is a 502, and the sample is told. The reasoning of the
    answers is kept for these routes' life (one sample) and restored into the requests
    that dropped it (``ReasoningMemory``).

    Args:
        on_failure: Told of a model failure (an infrastructure error of the sample);
            the program gets a 502 answer.
        on_call: Told of each generation answered (its wire and usage).
    """
    memory = ReasoningMemory()

    def handler(route: _Route[Any]) -> Callable[[Request], Awaitable[Response]]:
        async def answer(request: Request) -> Response:
            try:
                body: Any = loads((await request.body()).decode("utf-8"))
            except ValueError as e:  # not UTF-8, not JSON, an integer too long to convert
                return _bad_request(f"request body is not JSON: {e}")
            conversation = body.get(route.conversation) if isinstance(body, dict) else None
            if not isinstance(conversation, list) and not (
                route.text_conversation and isinstance(conversation, str)
            ):
                return _bad_request(f"expected a request with {route.conversation}")
            streamed = bool(body.get("stream"))
            if streamed and route.events is None:
                return _bad_request(f"{route.path} does not stream: set stream=false")
            asked = body
            body = {k: v for k, v in body.items() if k not in _STREAM_KEYS}
            body["model"] = BRIDGED_MODEL
            restored = memory.restore(route.wire, body) if route.wire is not None else 0
            try:
                result = await route.produce(body, request)
            except (ValueError, TypeError, KeyError) as bad:  # one the bridge cannot convert
                return _bad_request(f"the request could not be read: {bad}")
            except Exception as failed:  # the model failed after Inspect's retries: an error
                on_failure(failed)
                failure = f"the model failed: {type(failed).__name__}"
                return api_error(502, ErrorKind.API_ERROR, failure)
            data = result.model_dump(mode="json", exclude_none=True)
            if route.wire is not None:
                memory.remember(route.wire, data)
                on_call(bridged_call(route.wire, streamed, data, restored))
            if streamed and route.events is not None:
                events = sse(route.events(result, asked))
                return StreamingResponse(events, media_type="text/event-stream")
            return JSONResponse(data)

        return answer

    async def models(request: Request) -> JSONResponse:
        entry = {"id": BRIDGED_MODEL, "object": "model", "created": 0, "owned_by": "occubench"}
        return JSONResponse({"object": "list", "data": [entry]})

    return [
        *(Route(r.path, handler(r), methods=["POST"]) for r in _model_routes()),
        Route("/v1/models", models, methods=["GET"]),
    ]
