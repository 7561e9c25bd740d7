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
in its own transaction. The rules shared with the other local apps are ``occubench.webapp``'s.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from jinja2 import Environment, PackageLoader, StrictUndefined
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from occubench.analysis import setup_of
from occubench.review._reviews import Review, Verdict, automatic_verdict, reviews_csv, reviews_json
from occubench.review._store import ReviewError, ReviewStore, SampleView
from occubench.webapp import FormError, FormGuard, Signer, guarded_app, set_cookie

REVIEWER_COOKIE = "occubench_reviewer"
TOKEN_COOKIE = "occubench_token"
MAX_FORM_BYTES = 64_000
"""Largest request body read (a form with a comment of a few pages)."""
MAX_COMMENT = 10_000
"""Longest comment kept."""
RATINGS = (1, 2, 3, 4, 5)


def _environment() -> Environment:
    return Environment(
        loader=PackageLoader("occubench.review", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


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


class _Site:
    """What the review pages share: the store, the templates, the form guard, the reviewer."""

    def __init__(self, store: ReviewStore) -> None:
        self.store = store
        self.templates = _environment()
        self.guard = FormGuard(TOKEN_COOKIE)
        self.signer = Signer()  # signs the reviewer cookie, for this process only

    def page(self, name: str, status: int = 200, **context: object) -> HTMLResponse:
        """A page rendered from template ``name``."""
        return HTMLResponse(self.templates.get_template(name).render(**context), status_code=status)

    def form_page(
        self, request: Request, name: str, status: int = 200, **context: object
    ) -> Response:
        """A page with forms, given the request's token (a new one, set, when it has none)."""
        token, fresh = self.guard.token_for(request)
        response = self.page(name, status, token=token, **context)
        if fresh:
            self.guard.issue(response, token)
        return response

    def reviewer_of(self, request: Request) -> str | None:
        """The signed-in reviewer: the name in a cookie this app signed, else None."""
        return self.signer.verify(request.cookies.get(REVIEWER_COOKIE, ""))

    def signin_page(
        self, request: Request, status: int = 200, error: str | None = None
    ) -> Response:
        """The sign-in form (``error``: why the last try was refused)."""
        samples = self.store.sample_count()
        return self.form_page(request, "signin.html.j2", status, samples=samples, error=error)

    def queue_page(self, request: Request, reviewer: str) -> Response:
        """The reviewer's queue (joined again when samples were added since, or a new store)."""
        items = self.store.queue(reviewer)
        if len(items) < self.store.sample_count():  # samples added since, or a new database
            self.store.sign_in(reviewer)
            items = self.store.queue(reviewer)
        following = next((i.rank for i in items if i.mine is None), None)
        return self.form_page(
            request,
            "queue.html.j2",
            reviewer=reviewer,
            items=items,
            done=sum(i.mine is not None for i in items),
            following=following,
            setup_of=setup_of,
            automatic_verdict=automatic_verdict,
        )

    def reviewed(self, request: Request, rank: int) -> tuple[str, SampleView] | Response:
        """The reviewer and the sample at ``rank`` of their queue, or the answer instead.

        The sign-in page when no one is signed in, 404 past the queue's end.
        """
        reviewer = self.reviewer_of(request)
        if not reviewer:
            return RedirectResponse("/", status_code=303)
        view = self.store.sample(reviewer, rank)
        if view is None:
            return self.page("missing.html.j2", 404, rank=rank)
        return reviewer, view

    def sample_page(
        self, request: Request, rank: int, status: int = 200, error: str | None = None
    ) -> Response:
        """The sample at ``rank`` with its review form (``error``: why a save was refused)."""
        found = self.reviewed(request, rank)
        if isinstance(found, Response):
            return found
        reviewer, view = found
        return self.form_page(
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

    def next_unreviewed(self, reviewer: str, rank: int) -> str:
        """Where a save leads: the next unreviewed sample after ``rank``, else before it."""
        items = self.store.queue(reviewer)
        later = [i.rank for i in items if i.mine is None and i.rank > rank]
        sooner = [i.rank for i in items if i.mine is None]
        following = (later or sooner)[:1]
        return f"/queue/{following[0]}" if following else "/queue"


def create_app(store: ReviewStore, hosts: Sequence[str] = ("127.0.0.1", "localhost")) -> FastAPI:
    """The review app over ``store``, answering requests addressed to ``hosts`` only."""
    app = guarded_app("occubench review", hosts, MAX_FORM_BYTES)
    site = _Site(store)
    _add_signin_routes(app, site)
    _add_queue_routes(app, site)
    _add_export_routes(app, store)
    return app


def _add_signin_routes(app: FastAPI, site: _Site) -> None:
    """The stylesheet, the home page, signing in and out."""
    stylesheet = site.templates.get_template("review.css").render()
    store, guard = site.store, site.guard

    @app.get("/review.css")
    def css() -> Response:
        return Response(stylesheet, media_type="text/css")

    @app.get("/", response_class=HTMLResponse)
    def home(request: Request) -> Response:
        if site.reviewer_of(request):
            return RedirectResponse("/queue", status_code=303)
        return site.signin_page(request)

    @app.post("/signin")
    async def signin(request: Request) -> Response:
        try:
            fields = await guard.form(request)
            name = await run_in_threadpool(store.sign_in, fields.get("name", ""))
        except (FormError, ReviewError) as e:
            return site.signin_page(request, 400, str(e))
        response = RedirectResponse("/queue", status_code=303)
        set_cookie(response, REVIEWER_COOKIE, site.signer.sign(name))
        guard.issue(response)
        return response

    @app.post("/signout")
    async def signout(request: Request) -> Response:
        try:
            await guard.form(request)
        except FormError as e:
            return site.page("refused.html.j2", 400, error=str(e))
        response = RedirectResponse("/", status_code=303)
        response.delete_cookie(REVIEWER_COOKIE)
        response.delete_cookie(TOKEN_COOKIE)
        return response


def _add_queue_routes(app: FastAPI, site: _Site) -> None:
    """The queue, a sample's page and saving its review."""

    @app.get("/queue", response_class=HTMLResponse)
    def queue(request: Request) -> Response:
        reviewer = site.reviewer_of(request)
        if not reviewer:
            return RedirectResponse("/", status_code=303)
        return site.queue_page(request, reviewer)

    @app.get("/queue/{rank}", response_class=HTMLResponse)
    def show(request: Request, rank: int) -> Response:
        return site.sample_page(request, rank)

    @app.post("/queue/{rank}")
    async def save(request: Request, rank: int) -> Response:
        found = site.reviewed(request, rank)
        if isinstance(found, Response):
            return found
        reviewer, view = found
        try:
            fields = await site.guard.form(request)
            review = review_from_form(fields, reviewer, view.sample_key)
            await run_in_threadpool(site.store.save_review, review)
        except (FormError, ReviewError, ValidationError) as e:
            return site.sample_page(request, rank, 400, str(e))
        return RedirectResponse(site.next_unreviewed(reviewer, rank), status_code=303)


def _add_export_routes(app: FastAPI, store: ReviewStore) -> None:
    """The reviews as CSV and as JSON, downloaded."""

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
