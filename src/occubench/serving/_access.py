"""What a served environment accepts: its token, the names it is addressed by, bounded messages.

Over HTTP (``http_app``) every request passes a guard before the MCP SDK or the
OpenAI-compatible endpoint sees it, in this order:

- the Host header must name one of the endpoint's hosts, and an Origin header, when
  sent, one of them too (a web page elsewhere cannot reach the server by DNS
  rebinding): otherwise 421 or 403;
- the endpoint's token must come as ``Authorization: Bearer <token>`` or as
  ``x-api-key: <token>`` (how the Anthropic SDK sends a key), each credential sent
  compared in constant time and every one of them right: otherwise 401, and nothing of
  the task;
- a request body is read at most ``max_bytes`` bytes (an MCP message;
  ``DEFAULT_MAX_BRIDGE_BYTES`` on the OpenAI-compatible routes), and its JSON nesting is
  measured before anything parses it: a larger or deeper MCP message gets a JSON-RPC
  error (its id when it leads the message, else null) and never reaches the session,
  which goes on serving;
- a path ``http_app`` does not serve is answered 404 with the routes it offers (a
  client told so does not retry blindly).

On stdio the transport applies ``too_large`` and ``too_deep`` to each line.
"""

from __future__ import annotations

import hmac
import json
import re
from collections.abc import Collection, Sequence
from enum import Enum
from typing import Any
from urllib.parse import urlsplit

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import BaseModel, ConfigDict, Field, SecretStr
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from occubench.defaults import (
    DEFAULT_MAX_BRIDGE_BYTES,
    DEFAULT_MAX_MESSAGE_BYTES,
    DEFAULT_MAX_MESSAGE_DEPTH,
)
from occubench.text import nests_deeper
from occubench.webapp import BodyTooLarge, capped, host_allowed, host_name

MCP_PATH = "/mcp"
"""Where the MCP endpoint of an HTTP server is."""

_LEADING_ID = re.compile(
    rb'\s*\{\s*(?:"(?:jsonrpc|method)"\s*:\s*"[^"\\]{0,64}"\s*,\s*){0,2}'
    rb'"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,128}")\s*[,}]'
)
"""A request id among the first members of a message (where clients put it)."""
_ID_WINDOW = 512
"""Bytes of a refused message searched for its id."""


class Access(BaseModel):
    """Who may use an HTTP endpoint: the holder of its token, naming one of its hosts."""

    model_config = ConfigDict(frozen=True)

    token: SecretStr = Field(description="The bearer token every request must carry.")
    hosts: frozenset[str] = Field(
        description="Host names (lower case, IPv6 without brackets) requests may address."
    )

    @classmethod
    def of(cls, token: str, hosts: Collection[str]) -> Access:
        """Access for ``token`` and ``hosts`` as a user writes them (``[::1]``, any case)."""
        return cls(token=SecretStr(token), hosts=frozenset(host_name(h) for h in hosts))


def leading_id(head: bytes) -> int | str | None:
    """The id of a JSON-RPC message when one of its first members is, else None."""
    found = _LEADING_ID.match(head[:_ID_WINDOW])
    if found is None:
        return None
    value = json.loads(found.group(1))
    return value if isinstance(value, int | str) else None


def refusal(head: bytes, message: str) -> types.JSONRPCError:
    """A JSON-RPC error (invalid request) for a message refused unparsed."""
    return types.JSONRPCError(
        jsonrpc="2.0",
        id=leading_id(head),
        error=types.ErrorData(code=types.INVALID_REQUEST, message=message),
    )


def too_large(head: bytes, limit: int) -> types.JSONRPCError:
    """The error for a message longer than ``limit`` bytes (``head``: its first bytes)."""
    return refusal(head, f"message longer than {limit} bytes: not read")


def too_deep(data: bytes, limit: int) -> types.JSONRPCError | None:
    """The error for a message nested deeper than ``limit``; None if it is not.

    A message with no more opening brackets than ``limit`` (every real one) is not
    scanned.
    """
    if not nests_deeper(data, limit):
        return None
    return refusal(data, f"message nested deeper than {limit} levels: not parsed")


def wire_text(error: types.JSONRPCError) -> str:
    """A JSON-RPC error as it is sent."""
    return error.model_dump_json(by_alias=True, exclude_unset=True)


def origin_allowed(value: str | None, hosts: Collection[str]) -> bool:
    """Whether an Origin header is absent or an http(s) origin on one of ``hosts``."""
    if value is None:
        return True
    try:
        parts = urlsplit(value)
        name = parts.hostname
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and name is not None and name in hosts


def bearer_matches(header: bytes | None, token: SecretStr) -> bool:
    """Whether an Authorization header is ``Bearer <token>`` (constant-time comparison)."""
    scheme, _, credential = (header or b"").strip().partition(b" ")
    expected = token.get_secret_value().encode()
    return hmac.compare_digest(credential.strip(), expected) and scheme.lower() == b"bearer"


def key_matches(header: bytes, token: SecretStr) -> bool:
    """Whether an ``x-api-key`` header is the token (constant-time comparison)."""
    return hmac.compare_digest(header.strip(), token.get_secret_value().encode())


def credentials_match(headers: Headers, token: SecretStr) -> bool:
    """Whether the request carries the token, and no wrong credential beside it.

    Accepted: ``Authorization: Bearer <token>`` (the OpenAI SDK, MCP clients, the
    Anthropic SDK's ``auth_token``) and ``x-api-key: <token>`` (the Anthropic SDK's
    ``api_key``; anthropic SDK: ``_client.py``, ``api_key_auth``). A client given both
    sends both: each must be the token.
    """
    checks = [bearer_matches(v.encode("latin-1"), token) for v in headers.getlist("authorization")]
    checks += [key_matches(v.encode("latin-1"), token) for v in headers.getlist("x-api-key")]
    return bool(checks) and all(checks)


async def _bounded_body(receive: Receive, limit: int) -> tuple[bytes, bool]:
    """The request body; or, once it passes ``limit``, its first bytes and True.

    The rest of a longer body is read and dropped, so the client gets the answer.
    """
    body = bytearray()
    read = capped(receive, limit)
    try:
        while True:
            message = await read()
            if message["type"] != "http.request":
                break
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
    except BodyTooLarge as past:
        head = bytes(body[:_ID_WINDOW] + past.chunk[:_ID_WINDOW])[:_ID_WINDOW]
        more = past.more
        while more:
            message = await receive()
            more = message["type"] == "http.request" and message.get("more_body", False)
        return head, True
    return bytes(body), False


class _AccessChecks:
    """The checks of the module doc, in front of an ASGI app."""

    def __init__(self, app: ASGIApp, access: Access, max_bytes: int, max_depth: int) -> None:
        self.app = app
        self.access = access
        self.max_bytes = max_bytes
        self.max_depth = max_depth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # no websocket endpoint
            await send({"type": "websocket.close", "code": 1008})
            return
        headers = Headers(scope=scope)
        refused = self._refused(scope, headers)
        if refused is not None:
            await refused(scope, receive, send)
            return
        if scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        mcp = scope["path"].rstrip("/") == MCP_PATH
        limit = self.max_bytes if mcp else DEFAULT_MAX_BRIDGE_BYTES
        body, over = await _bounded_body(receive, limit)
        error = too_large(body, limit) if over else too_deep(body, self.max_depth)
        if error is not None:
            status = 413 if over else 400
            if mcp:
                await Response(wire_text(error), status, media_type="application/json")(
                    scope, receive, send
                )
            else:
                kind = ErrorKind.TOO_LARGE if over else ErrorKind.INVALID_REQUEST
                await api_error(status, kind, error.error.message)(scope, receive, send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    def _refused(self, scope: Scope, headers: Headers) -> Response | None:
        hosts = self.access.hosts
        if not host_allowed(headers.get("host"), hosts):
            return JSONResponse({"error": "this server does not answer to that Host"}, 421)
        if not origin_allowed(headers.get("origin"), hosts):
            return JSONResponse({"error": "requests from that Origin are refused"}, 403)
        if not credentials_match(headers, self.access.token):
            return JSONResponse(
                {
                    "error": "this endpoint needs its token: send 'Authorization: Bearer "
                    "<token>' (or 'x-api-key: <token>')"
                },
                401,
                headers={"WWW-Authenticate": "Bearer"},
            )
        return None


class ErrorKind(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """The ``type`` of an error answered on the model routes.

    Anthropic's names (docs: Anthropic API, "Errors", HTTP errors), which OpenAI's
    clients read as well: they take the ``error`` object's ``message``.
    """

    INVALID_REQUEST = "invalid_request_error"
    """400: the request cannot be read or is not one the route answers."""
    NOT_FOUND = "not_found_error"
    """404: no such route."""
    TOO_LARGE = "request_too_large"
    """413: the body is longer than the endpoint reads."""
    API_ERROR = "api_error"
    """5xx: the model failed."""


def api_error(status: int, kind: ErrorKind, message: str, **extra: Any) -> JSONResponse:
    """An error as both OpenAI's and Anthropic's clients read it.

    ``{"type": "error", "error": {"type": ..., "message": ...}}``: Anthropic's shape
    (anthropic SDK: ``types/error_response.py``), whose ``error`` object is OpenAI's
    (openai SDK: ``_exceptions.py``, ``APIError`` reads ``error.message`` and keeps the
    ``error`` object as its ``body``). ``extra``: more members of the ``error`` object.
    """
    body = {"type": "error", "error": {"type": kind.value, "message": message, **extra}}
    return JSONResponse(body, status)


def _unknown_route(offered: Sequence[str]) -> ASGIApp:
    """The answer to a path no route serves: 404, naming the offered ones."""

    async def unknown(scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope)
        reply = api_error(
            404,
            ErrorKind.NOT_FOUND,
            f"this endpoint does not serve {request.method} {request.url.path}; "
            f"it serves: {', '.join(offered)}",
            routes=list(offered),
        )
        await reply(scope, receive, send)

    return unknown


def offered_routes(routes: Sequence[Route]) -> list[str]:
    """What the endpoint serves, as ``METHOD /path`` (the MCP endpoint named as such)."""
    served = [f"{MCP_PATH} (MCP streamable HTTP)"]
    for route in routes:
        methods = sorted((route.methods or {"ANY"}) - {"HEAD"})
        served += [f"{method} {route.path}" for method in methods]
    return served


def http_app(
    server: Server[Any],
    access: Access,
    routes: Sequence[Route] = (),
    *,
    max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    max_depth: int = DEFAULT_MAX_MESSAGE_DEPTH,
) -> ASGIApp:
    """The server's streamable HTTP app (at ``MCP_PATH``, plus ``routes``) behind the guard.

    Any other path is answered 404 with the list of what is served (``offered_routes``).

    The SDK's own Host check is off: the guard's applies to every route, with the
    hosts of ``access``.
    """
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        max_request_body_size=max_bytes,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        custom_starlette_routes=list(routes) or None,
    )
    app.router.default = _unknown_route(offered_routes(routes))
    return _AccessChecks(app, access, max_bytes, max_depth)
