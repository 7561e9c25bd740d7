"""The expert review web app (FastAPI): sign in, walk through a queue, judge, export.

Pages are rendered with jinja2, autoescape on, through the same trajectory macro as the
HTML report: model text is shown as text. No page runs a script; the policy sent with
every response allows none, and the stylesheet comes from the app itself. Forms carry
a per-session token that must match a cookie (``SameSite=Strict``), and requests for
any host but the ones the app serves are refused (a page elsewhere cannot drive it).
Writes go to the store in a worker thread, each in its own transaction.
"""

from __future__ import annotations

import datetime as dt
import hmac
import secrets
from collections.abc import Sequence
from urllib.parse import parse_qs, quote, unquote

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from jinja2 import ChoiceLoader, Environment, PackageLoader, StrictUndefined
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.middleware.trustedhost import TrustedHostMiddleware

from occubench.analysis._metrics import setup_of
from occubench.analysis._reviews import (
    Review,
    Verdict,
    automatic_verdict,
    reviews_csv,
    reviews_json,
)
from occubench.review._store import ReviewError, ReviewStore, SampleView

REVIEWER_COOKIE = "occubench_reviewer"
TOKEN_COOKIE = "occubench_token"
MAX_FORM_BYTES = 64_000
"""Largest form body accepted (a comment of a few pages)."""
MAX_COMMENT = 10_000
"""Longest comment kept."""
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
"""Sent with every response."""
RATINGS = (1, 2, 3, 4, 5)


def _environment() -> Environment:
    return Environment(
        loader=ChoiceLoader(
            [
                PackageLoader("occubench.review", "templates"),
                PackageLoader("occubench.analysis", "templates"),
            ]
        ),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


class FormError(ValueError):
    """A form that cannot be accepted (the message is shown to the reviewer)."""


async def _form(request: Request) -> dict[str, str]:
    """The fields of an urlencoded form (the last value of each)."""
    body = await request.body()
    if len(body) > MAX_FORM_BYTES:
        raise FormError(f"the form is larger than {MAX_FORM_BYTES} bytes")
    fields = parse_qs(body.decode("utf-8", errors="replace"), keep_blank_values=True)
    return {k: v[-1] for k, v in fields.items()}


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
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(hosts))
    templates = _environment()
    stylesheet = templates.get_template("review.css").render()

    @app.middleware("http")
    async def security_headers(request: Request, call_next):  # type: ignore[no-untyped-def]
        response = await call_next(request)
        response.headers.update(HEADERS)
        return response

    def page(name: str, status: int = 200, **context: object) -> HTMLResponse:
        return HTMLResponse(templates.get_template(name).render(**context), status_code=status)

    def reviewer_of(request: Request) -> str | None:
        raw = request.cookies.get(REVIEWER_COOKIE)
        return unquote(raw) if raw else None

    def token_of(request: Request) -> str:
        return request.cookies.get(TOKEN_COOKIE, "")

    def checked(request: Request, fields: dict[str, str]) -> None:
        token = token_of(request)
        if not token or not hmac.compare_digest(token, fields.get("token", "")):
            raise FormError("this form has expired: reload the page and try again")

    @app.get("/review.css")
    def css() -> Response:
        return Response(stylesheet, media_type="text/css")

    @app.get("/", response_class=HTMLResponse)
    def home(request: Request) -> Response:
        if reviewer_of(request):
            return RedirectResponse("/queue", status_code=303)
        return page("signin.html.j2", samples=store.sample_count(), error=None)

    @app.post("/signin")
    async def signin(request: Request) -> Response:
        try:
            fields = await _form(request)
            name = await run_in_threadpool(store.sign_in, fields.get("name", ""))
        except (FormError, ReviewError) as e:
            return page("signin.html.j2", 400, samples=store.sample_count(), error=str(e))
        response = RedirectResponse("/queue", status_code=303)
        cookie = {"httponly": True, "samesite": "strict"}
        response.set_cookie(REVIEWER_COOKIE, quote(name), **cookie)  # type: ignore[arg-type]
        response.set_cookie(TOKEN_COOKIE, secrets.token_urlsafe(24), **cookie)  # type: ignore[arg-type]
        return response

    @app.post("/signout")
    async def signout(request: Request) -> Response:
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
        return page(
            "queue.html.j2",
            reviewer=reviewer,
            items=items,
            done=sum(i.mine is not None for i in items),
            following=following,
            token=token_of(request),
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
        return page(
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
            token=token_of(request),
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
            checked(request, fields)
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
