"""The review app's rules over HTTP: hosts, tokens, bad forms, headers, bounds (no browser).

Each attack is sent as a client would send it, then the safe answer is checked: a body
over the cap (declared, streamed, lying), a queue position past SQLite's integers, a
forged or broken reviewer cookie, a sign-in posted from elsewhere, formulas in the export.
"""

from __future__ import annotations

import csv
import io
import select
import socket
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from conftest import sample_row
from occubench.results import Trajectory
from occubench.review import ReviewStore, create_app, load_reviews
from occubench.review._app import MAX_FORM_BYTES, REVIEWER_COOKIE, TOKEN_COOKIE
from review.server import served

FORM = {"content-type": "application/x-www-form-urlencoded"}
FORMULA = '=HYPERLINK("http://evil.example/x","click")'


class Counted:
    """The app, counting the request body bytes the server hands it."""

    def __init__(self, app):
        self.app = app
        self.read = 0

    async def __call__(self, scope, receive, send):
        async def counted():
            message = await receive()
            self.read += len(message.get("body", b""))
            return message

        await self.app(scope, counted, send)


@pytest.fixture
def store(tmp_path):
    store = ReviewStore(tmp_path / "db.sqlite")
    rows = [sample_row(task_id=i, scenario=FORMULA if i == 0 else "S") for i in range(3)]
    store.add_samples(rows, [Trajectory() for _ in rows])
    return store


@pytest.fixture
def app(store):
    return Counted(create_app(store, hosts=["testserver", "127.0.0.1"]))


@pytest.fixture
def client(app):
    with TestClient(app) as c:
        yield c


def reviewers(store) -> set[str]:
    with store._connection() as db:
        return {name for (name,) in db.execute("SELECT name FROM reviewers")}


def post(c, path, body, **headers):
    return c.post(path, content=body, follow_redirects=False, headers={**FORM, **headers})


def signed_in(c, name="ada"):
    """Sign in as a browser does: the sign-in page's token, then the form."""
    assert c.get("/").status_code == 200
    response = post(c, "/signin", f"name={name}&token={c.cookies[TOKEN_COOKIE]}")
    assert response.status_code == 303
    return c.cookies[TOKEN_COOKIE]


def test_every_page_sends_a_policy_without_scripts(client):
    response = client.get("/")
    policy = response.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script" not in policy
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "same-origin"
    assert client.get("/review.css").headers["content-type"].startswith("text/css")


def test_other_hosts_are_refused(client):
    assert client.get("/", headers={"host": "evil.example"}).status_code == 400


def test_a_form_without_its_token_is_refused(client, store):
    token = signed_in(client)
    for forged in ("forged", "\u00e9t\u00e9", ""):  # a non-ASCII one was a 500
        response = post(client, "/queue/0", f"verdict=pass&token={quote(forged)}")
        assert response.status_code == 400 and "expired" in response.text
    assert store.reviews() == []
    assert post(client, "/queue/0", f"verdict=pass&token={token}").status_code == 303
    assert len(store.reviews()) == 1


def test_bad_forms_say_what_is_wrong(client):
    token = signed_in(client)
    missing = post(client, "/queue/0", f"token={token}")
    assert missing.status_code == 400 and "choose a verdict" in missing.text
    rating = post(client, "/queue/0", f"verdict=pass&scenario_realism=9&token={token}")
    assert rating.status_code == 400 and "scenario realism must be 1 to 5" in rating.text
    assert post(client, "/queue/7", f"verdict=pass&token={token}").status_code == 404
    empty = post(client, "/signin", f"name=%00%20&token={token}")
    assert empty.status_code == 400 and "a name is needed" in empty.text


def test_without_a_name_every_page_leads_to_sign_in(client):
    for path in ("/queue", "/queue/0"):
        response = client.get(path, follow_redirects=False)
        assert response.status_code == 303 and response.headers["location"] == "/"


def test_a_sign_in_posted_from_elsewhere_is_refused(client, store):
    """Login CSRF: a page elsewhere posts the sign-in form to sign the reviewer in as
    someone else. It cannot send the token cookie (SameSite) nor read the token."""
    cross_site = post(client, "/signin", "name=mallory")  # no token cookie, no token
    assert cross_site.status_code == 400 and "expired" in cross_site.text
    assert REVIEWER_COOKIE not in client.cookies and reviewers(store) == set()
    issued = client.cookies[TOKEN_COOKIE]  # the refusal page gives this browser a token
    guessed = post(client, "/signin", "name=mallory&token=" + "A" * 32)
    assert guessed.status_code == 400 and reviewers(store) == set()
    # a page on another origin of this host shares the cookies (same site): the token
    # cookie goes with its post, but the browser says where the post comes from
    for header in ({"origin": "http://127.0.0.1:9999"}, {"origin": "null"}):
        other = post(client, "/signin", f"name=mallory&token={issued}", **header)
        assert other.status_code == 400 and "another site" in other.text
    elsewhere = {"referer": "http://evil.example/page"}
    assert post(client, "/signin", f"name=mallory&token={issued}", **elsewhere).status_code == 400
    assert REVIEWER_COOKIE not in client.cookies and reviewers(store) == set()
    own = post(client, "/signin", f"name=ada&token={issued}", origin="http://testserver")
    assert own.status_code == 303 and reviewers(store) == {"ada"}
    assert client.cookies[TOKEN_COOKIE] != issued  # renewed at sign-in


def test_sign_out_takes_the_token_too(client):
    token = signed_in(client)
    assert post(client, "/signout", "token=forged").status_code == 400
    assert client.get("/queue", follow_redirects=False).status_code == 200  # still signed in
    response = post(client, "/signout", f"token={token}")
    assert response.status_code == 303 and REVIEWER_COOKIE not in client.cookies
    assert client.get("/queue", follow_redirects=False).status_code == 303


@pytest.mark.parametrize(
    "cookie",
    [
        "%00",  # was a 500: a control character in the name
        "\x01",  # was a 500
        "x" * 100,  # was a 500: longer than a name
        "%01ada",  # was a queue of a name no one signed in with
        "ada",  # a name without the app's signature
        "ada." + "0" * 64,  # a forged signature
    ],
)
def test_a_forged_or_broken_reviewer_cookie_is_no_one(app, store, cookie):
    with TestClient(app) as c:
        token = signed_in(c, "ada")
        headers = {"cookie": f"{REVIEWER_COOKIE}={cookie}; {TOKEN_COOKIE}={token}"}
        c.cookies.clear()
        for path in ("/", "/queue", "/queue/0"):
            answer = c.get(path, headers=headers, follow_redirects=False)
            assert answer.status_code in (200, 303) and answer.headers.get("location") in (
                None,
                "/",
            )
            assert "signed in as" not in answer.text
        saved = post(c, "/queue/0", f"verdict=pass&token={token}", **headers)
        assert saved.status_code == 303 and saved.headers["location"] == "/"
    assert store.reviews() == [] and reviewers(store) == {"ada"}


def test_a_cookie_signed_by_another_app_is_no_one(store):
    with TestClient(create_app(store, hosts=["testserver"])) as first:
        signed_in(first)
        cookie = first.cookies[REVIEWER_COOKIE]
    with TestClient(create_app(store, hosts=["testserver"])) as second:  # a restart
        second.cookies.set(REVIEWER_COOKIE, cookie)
        assert second.get("/queue", follow_redirects=False).status_code == 303


@pytest.mark.parametrize("rank", [2**63, 10**30, -1, 2**63 - 1])
def test_a_queue_position_past_sqlite_integers_is_a_missing_sample(client, rank):
    token = signed_in(client)
    shown = client.get(f"/queue/{rank}")  # 2**63 and 10**30 were a 500
    assert shown.status_code == 404 and "No such sample" in shown.text
    assert post(client, f"/queue/{rank}", f"verdict=pass&token={token}").status_code == 404
    assert client.get("/queue/" + "9" * 5000).status_code == 422  # not even an integer


def test_a_declared_body_over_the_cap_is_refused_unread(client, app, store):
    token = signed_in(client)
    app.read = 0
    response = client.post(
        "/queue/0",
        content=b"verdict=pass",
        headers={**FORM, "content-length": str(400_000_000)},
    )
    assert response.status_code == 413 and "larger than 64000 bytes" in response.text
    assert response.headers["connection"] == "close"
    assert app.read == 0 and store.reviews() == []
    bad = client.post("/signin", content=b"x", headers={**FORM, "content-length": "-1"})
    assert bad.status_code == 400
    assert post(client, "/queue/0", f"verdict=pass&token={token}").status_code == 303


def test_a_body_longer_than_declared_is_cut_at_the_cap(client, store):
    """A client that declares a small body and sends a large one (or a chunked one):
    the app gets none of it, and the form behind the padding is not acted on."""
    token = signed_in(client)
    body = f"verdict=pass&token={token}&comment=" + "x" * (MAX_FORM_BYTES + 1)
    response = client.post("/queue/0", content=body, headers={**FORM, "content-length": "10"})
    assert response.status_code == 413 and store.reviews() == []
    just_fits = f"verdict=pass&token={token}&comment="
    just_fits += "x" * (MAX_FORM_BYTES - len(just_fits))
    assert post(client, "/queue/0", just_fits).status_code == 303


CHUNK = 16 * 1024
STREAM = 64 * 1024 * 1024
"""A body far past the cap, and past what the sockets' buffers hold (never allocated)."""


def stream_chunked(port: int, head: str) -> tuple[int, bytes]:
    """Send ``head`` and then a chunked body of up to ``STREAM`` bytes, until the server
    answers or closes; returns the body bytes sent and the answer."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(head.encode())
    piece = f"{CHUNK:x}\r\n".encode() + b"x" * CHUNK + b"\r\n"
    sent = 0
    try:
        while sent < STREAM and not select.select([sock], [], [], 0)[0]:
            sock.sendall(piece)
            sent += CHUNK
    except OSError:  # the server closed the connection: sending is over
        pass
    answer = b""
    try:
        while chunk := sock.recv(65536):
            answer += chunk
    except ConnectionResetError:  # closed with our unread bytes: the answer came first
        pass
    sock.close()
    return sent, answer


def test_a_chunked_body_is_not_read_past_the_cap(store):
    """A body streamed without a length (it once was read whole into memory: 1.2 GB
    for 400 MB): the server stops at the cap, answers 413 and closes the connection."""
    app = Counted(create_app(store))
    with served(app) as url:
        port = int(url.rsplit(":", 1)[1])
        head = (
            f"POST /signin HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "Content-Type: application/x-www-form-urlencoded\r\n"
            "Transfer-Encoding: chunked\r\n\r\n"
        )
        sent, answer = stream_chunked(port, head)
        assert answer.startswith(b"HTTP/1.1 413 ") and b"connection: close" in answer.lower()
        assert sent < STREAM  # the client could not send it all
        assert app.read < MAX_FORM_BYTES + 1024 * 1024  # the server read about the cap
        # a route that never reads a body closes the connection rather than drain it
        app.read = 0
        get = f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nTransfer-Encoding: chunked\r\n\r\n"
        sent, answer = stream_chunked(port, get)
        assert answer.startswith(b"HTTP/1.1 200 ") and b"connection: close" in answer.lower()
        assert sent < STREAM and app.read == 0
    assert reviewers(store) == set()


def test_a_declared_body_over_the_cap_is_not_sent(store):
    """A client that waits for ``100 Continue`` before a body over the cap is told 413
    at once, and sends nothing."""
    with served(create_app(store)) as url:
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(
                (
                    f"POST /signin HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                    "Content-Type: application/x-www-form-urlencoded\r\n"
                    "Content-Length: 400000000\r\nExpect: 100-continue\r\n\r\n"
                ).encode()
            )
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
    assert answer.startswith(b"HTTP/1.1 413 ") and b"larger than 64000 bytes" in answer


def test_the_export_quotes_formulas_and_reads_back(client, store, tmp_path):
    token = signed_in(client)
    comments = [FORMULA, "-2+3+cmd|' /C calc'!A0", "@SUM(1+1)"]
    ranks = [i.rank for i in store.queue("ada")]
    for rank, comment in zip(ranks, comments, strict=True):
        body = f"verdict=pass&scenario_realism=4&comment={quote(comment)}&token={token}"
        assert post(client, f"/queue/{rank}", body).status_code == 303
    text = client.get("/export.csv").text
    cells = [c for row in csv.reader(io.StringIO(text)) for c in row]
    assert [c for c in cells if c[:1] and c[0] in "=+-@"] == []
    assert {"'" + c for c in comments} <= set(cells) and "'" + FORMULA in cells  # scenario too
    assert "4" in cells  # a rating stays a number
    path = tmp_path / "reviews.csv"
    path.write_text(text)
    assert sorted(r.comment for r in load_reviews(path)) == sorted(comments)
    assert {r.scenario for r in load_reviews(path)} == {FORMULA, "S"}
