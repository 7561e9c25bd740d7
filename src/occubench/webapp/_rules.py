"""The rules every local web app of occubench applies to every request.

What such an app trusts: nothing in a request. It answers only requests addressed to the
hosts it serves (``AllowedHosts``: a page elsewhere cannot reach it through DNS
rebinding); no request body larger than its cap is read (``BoundedBody``); every response
carries ``HEADERS`` (no script runs, no frame, no sniffing, no cache); and one rule guards
every form (``FormGuard``): the form's token must match the app's token cookie
(``SameSite=Strict``, HttpOnly), and a browser's ``Origin`` (or ``Referer``) must be the
app's own. Values an app keeps in a cookie are signed with a key drawn when it starts
(``Signer``): a cookie that does not verify, whatever it holds, is no one's.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Collection, Sequence
from urllib.parse import parse_qs, quote, unquote, urlsplit

from fastapi import FastAPI, Request
from fastapi.responses import PlainTextResponse, Response
from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from occubench.errors import UsageError

HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",  # our own forms' posts carry their Origin
    "Cache-Control": "no-store",
}
"""Sent with every response."""
TOKEN = re.compile(r"[A-Za-z0-9_-]{32}")
"""A form token as the apps draw them (``secrets.token_urlsafe(24)``)."""


def refusal(status: int, text: str) -> Response:
    """An answer that closes the connection (the rest of the request is not read)."""
    return PlainTextResponse(text, status, headers={"Connection": "close"})


def set_cookie(response: Response, name: str, value: str) -> None:
    """Set a cookie as the apps' are: out of scripts' reach, never sent from another site."""
    response.set_cookie(name, value, httponly=True, samesite="strict")


class BodyTooLarge(Exception):
    """A request body went past the cap while it was read.

    Args:
        chunk: The body bytes of the message that crossed the cap.
        more: Whether more of the body follows that message (unread).
    """

    def __init__(self, chunk: bytes = b"", more: bool = False) -> None:
        super().__init__("the request body went past the cap")
        self.chunk = chunk
        self.more = more


def capped(receive: Receive, limit: int) -> Receive:
    """``receive``, raising ``BodyTooLarge`` once the request body passes ``limit`` bytes.

    The one statement of the size rule: every local server reads a body through it.
    """
    read = 0

    async def bounded() -> Message:
        nonlocal read
        message = await receive()
        if message["type"] == "http.request":
            chunk = message.get("body", b"")
            read += len(chunk)
            if read > limit:
                raise BodyTooLarge(chunk, message.get("more_body", False))
        return message

    return bounded


def host_name(host: str) -> str:
    """A host name as requests are matched against it (``[::1]`` is ``::1``, any case)."""
    return host.strip().strip("[]").lower()


def host_allowed(value: str | None, hosts: Collection[str]) -> bool:
    """Whether a Host header (``name`` or ``name:port``) names one of ``hosts``.

    ``hosts`` as ``host_name`` writes them. The one statement of the Host rule (a page
    elsewhere cannot reach a local server by DNS rebinding).
    """
    if not value or any(c in value for c in "@/\\?# \t"):
        return False
    try:
        name = urlsplit(f"//{value}").hostname
    except ValueError:
        return False
    return name is not None and name in hosts


class AllowedHosts:
    """ASGI middleware: a request whose Host names none of ``hosts`` is answered 400."""

    def __init__(self, app: ASGIApp, hosts: Collection[str]) -> None:
        """Wrap ``app``, answering requests addressed to ``hosts`` (as a user writes them)."""
        self.app = app
        self.hosts = frozenset(host_name(h) for h in hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one request, or refuse its Host."""
        if scope["type"] in ("http", "websocket"):
            if not host_allowed(Headers(scope=scope).get("host"), self.hosts):
                await PlainTextResponse("Invalid host header", 400)(scope, receive, send)
                return
        await self.app(scope, receive, send)


class BoundedBody:
    """ASGI middleware: no request body larger than ``limit`` bytes is read, on any route.

    A ``Content-Length`` over the cap is answered 413 before anything is read (a client
    waiting for ``100 Continue`` sends nothing), an unreadable one 400. A body that
    streams past the cap (chunked, or longer than declared) is cut there: the message
    that crosses it is not handed to the app, which stops, and the answer is 413. Both
    answers close the connection, and so does any answer that leaves a chunked body
    unread: the server reads no more of it.
    """

    def __init__(self, app: ASGIApp, limit: int) -> None:
        """Wrap ``app`` with a cap of ``limit`` bytes."""
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one request, its body bounded."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        too_large = f"the request body is larger than {self.limit} bytes"
        unread = False  # a chunked body not read to its end
        for name, value in scope["headers"]:
            if name.lower() == b"transfer-encoding":
                unread = True
            elif name.lower() == b"content-length":
                if not value.isdigit():
                    await refusal(400, "the Content-Length is not a number")(scope, receive, send)
                    return
                if len(value) > len(str(self.limit)) or int(value) > self.limit:
                    await refusal(413, too_large)(scope, receive, send)
                    return
        started = False
        capped_receive = capped(receive, self.limit)

        async def bounded() -> Message:
            nonlocal unread
            message = await capped_receive()
            if message["type"] == "http.request":
                unread = unread and message.get("more_body", False)
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                if unread:
                    MutableHeaders(scope=message)["connection"] = "close"
            await send(message)

        try:
            await self.app(scope, bounded, watched)
        except BodyTooLarge:
            if started:
                raise
            await refusal(413, too_large)(scope, receive, send)


class SecurityHeaders:
    """ASGI middleware: ``HEADERS`` on every response."""

    def __init__(self, app: ASGIApp) -> None:
        """Wrap ``app``."""
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one request, adding the headers to its response."""

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message).update(HEADERS)
            await send(message)

        await self.app(scope, receive, with_headers)


def guarded_app(title: str, hosts: Sequence[str], max_body: int) -> FastAPI:
    """A FastAPI app with the request rules on: host names, body cap, security headers.

    Args:
        title: The app's name (no API docs are served).
        hosts: The host names requests may be addressed to.
        max_body: The largest request body read, in bytes.
    """
    app = FastAPI(title=title, docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(BoundedBody, limit=max_body)
    app.add_middleware(AllowedHosts, hosts=hosts)
    app.add_middleware(SecurityHeaders)
    return app


class FormError(UsageError):
    """A form that cannot be accepted (the message is shown to the person)."""


def same_origin(request: Request) -> bool:
    """Whether the request comes from the app's own pages, as far as the browser says.

    A browser sends ``Origin`` with a form's post (``Referer`` in older ones); a client
    that sends neither is not a browser, and the token alone decides.
    """
    origin = request.headers.get("origin")
    if origin is None:
        referer = request.headers.get("referer")
        if referer is None:
            return True
        parts = urlsplit(referer)
        origin = f"{parts.scheme}://{parts.netloc}"
    own = f"{request.url.scheme}://{request.headers.get('host', '')}"
    return origin.lower() == own.lower()


class FormGuard:
    """The one rule of every form of an app: its own origin, and the token of its cookie.

    Args:
        cookie: The name of the app's token cookie (apps on other ports of the same host
            share cookies: each app names its own).
    """

    def __init__(self, cookie: str) -> None:
        self.cookie = cookie

    def token_of(self, request: Request) -> str | None:
        """The request's form token, if it has a well-formed one."""
        token = request.cookies.get(self.cookie, "")
        return token if TOKEN.fullmatch(token) else None

    def token_for(self, request: Request) -> tuple[str, bool]:
        """The token a page's forms carry: the request's, else a new one (``True``: set it)."""
        token = self.token_of(request)
        return (token, False) if token is not None else (secrets.token_urlsafe(24), True)

    def issue(self, response: Response, token: str | None = None) -> None:
        """Set the token cookie on ``response`` (a new token unless one is given)."""
        set_cookie(response, self.cookie, token or secrets.token_urlsafe(24))

    async def form(self, request: Request) -> dict[str, str]:
        """The fields of a form posted from the app's own page, with its token.

        The body has been capped already (``BoundedBody``). A field given twice keeps
        its last value.

        Raises:
            FormError: when the origin is another site's or the token does not match.

        """
        if not same_origin(request):
            raise FormError("this form was sent from another site: open the app and try again")
        body = await request.body()
        fields = parse_qs(body.decode("utf-8", errors="replace"), keep_blank_values=True)
        form = {k: v[-1] for k, v in fields.items()}
        token = self.token_of(request)
        if not token or not hmac.compare_digest(token.encode(), form.get("token", "").encode()):
            raise FormError("this form has expired: reload the page and try again")
        return form


class Signer:
    """Signs values kept in cookies with a key drawn when the app starts (a restart voids them)."""

    def __init__(self) -> None:
        self._key = secrets.token_bytes(32)

    def _tag(self, value: str) -> str:
        return hmac.new(self._key, value.encode("utf-8"), hashlib.sha256).hexdigest()

    def sign(self, value: str) -> str:
        """The cookie value that carries ``value`` with its signature."""
        return f"{quote(value, safe='')}.{self._tag(value)}"

    def verify(self, signed: str) -> str | None:
        """The value a signed cookie carries, or None when it is not one this app signed."""
        quoted, _, tag = signed.rpartition(".")
        value = unquote(quoted)
        if not value or not hmac.compare_digest(tag.encode(), self._tag(value).encode()):
            return None
        return value
