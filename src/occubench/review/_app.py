"""The expert review web app (FastAPI): sign in, walk through a queue, judge, export.

Pages are rendered with jinja2, autoescape on, through the same trajectory macro as the
HTML report: model text is shown as text. No page runs a script; the policy sent with
every response allows none, and the stylesheet comes from the app itself.

What the app trusts: nothing in a request. It has no password (anyone who reaches it can
review under any name), so it answers only requests addressed to the hosts it serves
(a page elsewhere cannot reach it through DNS rebinding), and one rule guards every form
(sign-in included): the form's token must match the token cookie (``SameSite=Strict``,
issued with the first page that shows a form, renewed at sign-in), and a browser's
``Origin`` (or ``Referer``) must be the app's own. The name a reviewer signed in with
rides in a cookie signed with a key the app draws at start (a restart signs everyone
out); a cookie that does not verify, whatever it holds, is no one. No request body
larger than ``MAX_FORM_BYTES`` is read (``BoundedBody``), and a queue position outside
SQLite's integers is a missing sample. Writes go to the store in a worker thread, each
in its own transaction.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import re
import secrets
from collections.abc import Sequence
from urllib.parse import parse_qs, quote, unquote, urlsplit

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from jinja2 import Environment, PackageLoader, StrictUndefined
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import MutableHeaders
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from occubench.analysis import setup_of
from occubench.errors import UsageError
from occubench.review._reviews import Review, Verdict, automatic_verdict, reviews_csv, reviews_json
from occubench.review._store import ReviewError, ReviewStore, SampleView

REVIEWER_COOKIE = "occubench_reviewer"
TOKEN_COOKIE = "occubench_token"
MAX_FORM_BYTES = 64_000
"""Largest request body read (a form with a comment of a few pages)."""
MAX_COMMENT = 10_000
"""Longest comment kept."""
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",  # our own forms' posts carry their Origin
    "Cache-Control": "no-store",
}
"""Sent with every response."""
RATINGS = (1, 2, 3, 4, 5)
TOKEN = re.compile(r"[A-Za-z0-9_-]{32}")
"""A form token as the app draws them (``secrets.token_urlsafe(24)``)."""


def _refusal(status: int, text: str) -> Response:
    """An answer that closes the connection (the rest of the request is not read)."""
    return PlainTextResponse(text, status, headers={"Connection": "close"})


def _set_cookie(response: Response, name: str, value: str) -> None:
    """Set a cookie as the app's are: out of scripts' reach, never sent from another site."""
    response.set_cookie(name, value, httponly=True, samesite="strict")


class BodyTooLarge(Exception):
    """A request body went past the cap while it was read."""


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
                    await _refusal(400, "the Content-Length is not a number")(scope, receive, send)
                    return
                if len(value) > len(str(self.limit)) or int(value) > self.limit:
                    await _refusal(413, too_large)(scope, receive, send)
                    return
        read = 0
        started = False

        async def bounded() -> Message:
            nonlocal read, unread
            message = await receive()
            if message["type"] == "http.request":
                read += len(message.get("body", b""))
                if read > self.limit:
                    raise BodyTooLarge
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
            await _refusal(413, too_large)(scope, receive, send)


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


def _environment() -> Environment:
    return Environment(
        loader=PackageLoader("occubench.review", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


class FormError(UsageError):
    """A form that cannot be accepted (the message is shown to the reviewer)."""


def _same_origin(request: Request) -> bool:
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


async def _form(request: Request) -> dict[str, str]:
    """The fields of a form posted from the app's own page, with its token.

    The one rule of every form (``BoundedBody`` has capped the body already): the
    browser's ``Origin`` is the app's own, and the form's ``token`` field matches the
    token cookie, which a page elsewhere can neither read nor send.

    Raises:
        FormError: when either fails.

    """
    if not _same_origin(request):
        raise FormError("this form was sent from another site: open the app and try again")
    body = await request.body()
    fields = parse_qs(body.decode("utf-8", errors="replace"), keep_blank_values=True)
    form = {k: v[-1] for k, v in fields.items()}
    token = _token_of(request)
    if not token or not hmac.compare_digest(token.encode(), form.get("token", "").encode()):
        raise FormError("this form has expired: reload the page and try again")
    return form


def _token_of(request: Request) -> str | None:
    """The request's form token, if it has a well-formed one."""
    token = request.cookies.get(TOKEN_COOKIE, "")
    return token if TOKEN.fullmatch(token) else None


def _rating(fields: dict[str, str], name: str) -> int | None:
    value = fields.get(name, "")
    if value == "":
        return None
    if value not in {str(r) for r in RATINGS}:
        raise FormError(f"{name.replace('_', ' ')} must be 1 to 5 (or not rated)")
    return int(value)


def review_from_form(fields: dict[str, str], reviewer: str, sample_key: str) -> Review:
    """The review a submitted form describes.

    Raises:
        FormError: when the verdict is missing or a rating is out of range.

    """
    verdict = fields.get("verdict", "")
    if verdict not in {v.value for v in Verdict}:
        raise FormError("choose a verdict: pass, fail or unsure")
    return Review(
        sample_key=sample_key,
        reviewer=reviewer,
        verdict=Verdict(verdict),
        scenario_realism=_rating(fields, "scenario_realism"),
        rubric_realism=_rating(fields, "rubric_realism"),
        comment=fields.get("comment", "")[:MAX_COMMENT],
        saved_at=dt.datetime.now(dt.UTC),
    )


def create_app(store: ReviewStore, hosts: Sequence[str] = ("127.0.0.1", "localhost")) -> FastAPI:
    """The review app over ``store``, answering requests addressed to ``hosts`` only."""
    app = FastAPI(title="occubench review", docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(BoundedBody, limit=MAX_FORM_BYTES)
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(hosts))
    app.add_middleware(SecurityHeaders)
    templates = _environment()
    stylesheet = templates.get_template("review.css").render()
    key = secrets.token_bytes(32)  # signs the reviewer cookie, for this process only

    def signature(name: str) -> str:
        return hmac.new(key, name.encode("utf-8"), hashlib.sha256).hexdigest()

    def page(name: str, status: int = 200, **context: object) -> HTMLResponse:
        return HTMLResponse(templates.get_template(name).render(**context), status_code=status)

    def form_page(request: Request, name: str, status: int = 200, **context: object) -> Response:
        """A page with forms, given the request's token (a new one, set, when it has none)."""
        token = _token_of(request)
        fresh = secrets.token_urlsafe(24) if token is None else None
        response = page(name, status, token=token or fresh, **context)
        if fresh:
            _set_cookie(response, TOKEN_COOKIE, fresh)
        return response

    def reviewer_of(request: Request) -> str | None:
        """The signed-in reviewer: the name in a cookie this app signed, else None."""
        value, _, tag = request.cookies.get(REVIEWER_COOKIE, "").rpartition(".")
        name = unquote(value)
        if not name or not hmac.compare_digest(tag.encode(), signature(name).encode()):
            return None
        return name

    @app.get("/review.css")
    def css() -> Response:
        return Response(stylesheet, media_type="text/css")

    @app.get("/", response_class=HTMLResponse)
    def home(request: Request) -> Response:
        if reviewer_of(request):
            return RedirectResponse("/queue", status_code=303)
        return form_page(request, "signin.html.j2", samples=store.sample_count(), error=None)

    @app.post("/signin")
    async def signin(request: Request) -> Response:
        try:
            fields = await _form(request)
            name = await run_in_threadpool(store.sign_in, fields.get("name", ""))
        except (FormError, ReviewError) as e:
            return form_page(
                request, "signin.html.j2", 400, samples=store.sample_count(), error=str(e)
            )
        response = RedirectResponse("/queue", status_code=303)
        signed = f"{quote(name, safe='')}.{signature(name)}"
        _set_cookie(response, REVIEWER_COOKIE, signed)
        _set_cookie(response, TOKEN_COOKIE, secrets.token_urlsafe(24))
        return response

    @app.post("/signout")
    async def signout(request: Request) -> Response:
        try:
            await _form(request)
        except FormError as e:
            return page("refused.html.j2", 400, error=str(e))
        response = RedirectResponse("/", status_code=303)
        response.delete_cookie(REVIEWER_COOKIE)
        response.delete_cookie(TOKEN_COOKIE)
        return response

    @app.get("/queue", response_class=HTMLResponse)
    def queue(request: Request) -> Response:
        reviewer = reviewer_of(request)
        if not reviewer:
            return RedirectResponse("/", status_code=303)
        items = store.queue(reviewer)
        if len(items) < store.sample_count():  # samples added since, or a new database
            store.sign_in(reviewer)
            items = store.queue(reviewer)
        following = next((i.rank for i in items if i.mine is None), None)
        return form_page(
            request,
            "queue.html.j2",
            reviewer=reviewer,
            items=items,
            done=sum(i.mine is not None for i in items),
            following=following,
            setup_of=setup_of,
            automatic_verdict=automatic_verdict,
        )

    def reviewed(request: Request, rank: int) -> tuple[str, SampleView] | Response:
        """The reviewer and the sample at ``rank`` of their queue, or the answer instead.

        The sign-in page when no one is signed in, 404 past the queue's end.
        """
        reviewer = reviewer_of(request)
        if not reviewer:
            return RedirectResponse("/", status_code=303)
        view = store.sample(reviewer, rank)
        if view is None:
            return page("missing.html.j2", 404, rank=rank)
        return reviewer, view

    def sample_page(
        request: Request, rank: int, status: int = 200, error: str | None = None
    ) -> Response:
        found = reviewed(request, rank)
        if isinstance(found, Response):
            return found
        reviewer, view = found
        return form_page(
            request,
            "sample.html.j2",
            status,
            reviewer=reviewer,
            view=view,
            row=view.row,
            t=view.trajectory,
            setup=setup_of(view.row),
            automatic=automatic_verdict(view.row),
            ratings=RATINGS,
            verdicts=[v.value for v in Verdict],
            error=error,
        )

    @app.get("/queue/{rank}", response_class=HTMLResponse)
    def show(request: Request, rank: int) -> Response:
        return sample_page(request, rank)

    @app.post("/queue/{rank}")
    async def save(request: Request, rank: int) -> Response:
        found = reviewed(request, rank)
        if isinstance(found, Response):
            return found
        reviewer, view = found
        try:
            fields = await _form(request)
            review = review_from_form(fields, reviewer, view.sample_key)
            await run_in_threadpool(store.save_review, review)
        except (FormError, ReviewError, ValidationError) as e:
            return sample_page(request, rank, 400, str(e))
        items = store.queue(reviewer)
        later = [i.rank for i in items if i.mine is None and i.rank > rank]
        sooner = [i.rank for i in items if i.mine is None]
        following = (later or sooner)[:1]
        target = f"/queue/{following[0]}" if following else "/queue"
        return RedirectResponse(target, status_code=303)

    @app.get("/export.csv")
    def export_csv() -> Response:
        return PlainTextResponse(
            reviews_csv(store.reviews()),
            media_type="text/csv",
            headers={"Content-Disposition": 'attachment; filename="reviews.csv"'},
        )

    @app.get("/export.json")
    def export_json() -> Response:
        return Response(
            reviews_json(store.reviews()),
            media_type="application/json",
            headers={"Content-Disposition": 'attachment; filename="reviews.json"'},
        )

    return app
