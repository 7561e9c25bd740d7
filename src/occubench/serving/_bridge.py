"""An OpenAI-compatible endpoint for agent programs, answered through Inspect's model layer.

An agent program that calls an OpenAI-compatible API is given ``OPENAI_BASE_URL`` (this
endpoint, ``/v1`` beside the sample's ``/mcp``) and ``OPENAI_API_KEY`` (the sample's
token, the one its MCP endpoint takes: both are served behind one guard, ``http_app``,
which checks it and bounds each request's size and depth). Each
``POST /v1/chat/completions`` is handed to Inspect's agent bridge
(``inspect_ai.agent.agent_bridge``) as a request for the model ``inspect``, which is the
run's agent model: the generation goes through Inspect (its retries, rate limits,
cache policy), and its tokens and cost land in the sample's log like the built-in
loop's. Streaming requests are refused (the bridge does not stream).

The handlers run in tasks started inside the sample (and inside ``agent_bridge``), so
Inspect's per-sample context, which the bridge and the usage accounting read, is theirs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from openai import AsyncOpenAI
from openai.types.chat import ChatCompletion
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from occubench.text import loads

BRIDGED_MODEL = "inspect"
"""Model name the bridge routes to the run's agent model (any name a program sends is
replaced by it)."""

_UNREACHED_URL = "http://127.0.0.1:9/v1"
"""Base URL of the in-process client; the bridge answers before any request is sent."""


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": "invalid_request_error"}}, status)


def bridge_routes(on_failure: Callable[[BaseException], None]) -> list[Route]:
    """The endpoint's routes: ``/v1/chat/completions`` and ``/v1/models``.

    Served behind the guard of ``http_app`` (token, hosts, bounded bodies), never alone.

    Args:
        on_failure: Told of a model failure (an infrastructure error of the sample);
            the program gets a 502 answer.
    """
    client = AsyncOpenAI(api_key="occubench-bridge", base_url=_UNREACHED_URL, max_retries=0)

    async def completions(request: Request) -> JSONResponse:
        try:
            body: Any = loads((await request.body()).decode("utf-8"))
        except ValueError as e:  # not UTF-8, not JSON, an integer too long to convert
            return _error(400, f"request body is not JSON: {e}")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return _error(400, "expected a chat completions request with messages")
        if body.get("stream"):
            return _error(400, "streaming is not supported by this endpoint: set stream=false")
        body = {k: v for k, v in body.items() if k not in ("stream", "stream_options")}
        body["model"] = BRIDGED_MODEL
        try:
            result = await client.post("/chat/completions", body=body, cast_to=ChatCompletion)
        except (ValueError, TypeError) as bad:  # a request the bridge cannot convert
            return _error(400, f"the request could not be read: {bad}")
        except Exception as failed:  # the model failed after Inspect's retries: an error
            on_failure(failed)
            return _error(502, f"the model failed: {type(failed).__name__}")
        return JSONResponse(result.model_dump(mode="json", exclude_none=True))

    async def models(request: Request) -> JSONResponse:
        entry = {"id": BRIDGED_MODEL, "object": "model", "created": 0, "owned_by": "occubench"}
        return JSONResponse({"object": "list", "data": [entry]})

    return [
        Route("/v1/chat/completions", completions, methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
    ]
