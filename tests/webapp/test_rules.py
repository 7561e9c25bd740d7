"""The Host rule and the body cap every local web app applies (``occubench.webapp``)."""

from __future__ import annotations

from fastapi import Request
from fastapi.responses import PlainTextResponse
from fastapi.testclient import TestClient

from occubench.defaults import DEFAULT_ALLOWED_HOSTS
from occubench.webapp import guarded_app

CAP = 100


def client() -> TestClient:
    app = guarded_app("rules", DEFAULT_ALLOWED_HOSTS, CAP)

    @app.post("/")
    async def echo(request: Request) -> PlainTextResponse:
        return PlainTextResponse(str(len(await request.body())))

    return TestClient(app)


def test_a_request_is_answered_only_when_its_host_names_a_served_one():
    web = client()
    for good in ("127.0.0.1:8000", "localhost", "LocalHost:1", "[::1]:8000"):
        assert web.post("/", headers={"host": good}).status_code == 200, good
    for bad in ("evil.example", "127.0.0.1@evil.example", "localhost/x", "[::1"):
        refused = web.post("/", headers={"host": bad})
        assert (refused.status_code, refused.text) == (400, "Invalid host header"), bad


def test_a_body_over_the_cap_is_refused_and_one_at_it_is_read():
    web = client()
    assert web.post("/", content=b"x" * CAP, headers={"host": "localhost"}).text == str(CAP)
    over = web.post("/", content=b"x" * (CAP + 1), headers={"host": "localhost"})
    assert over.status_code == 413

    def chunks():  # no Content-Length: cut where it crosses the cap
        yield b"x" * CAP
        yield b"x"

    streamed = web.post("/", content=chunks(), headers={"host": "localhost"})
    assert streamed.status_code == 413
