"""The review app's rules over HTTP: hosts, tokens, bad forms, headers (no browser)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from conftest import sample_row
from occubench.analysis import Trajectory
from occubench.review import ReviewStore, create_app
from occubench.review._app import TOKEN_COOKIE


@pytest.fixture
def client(tmp_path):
    store = ReviewStore(tmp_path / "db.sqlite")
    rows = [sample_row(task_id=i) for i in range(3)]
    store.add_samples(rows, [Trajectory() for _ in rows])
    with TestClient(create_app(store, hosts=["testserver"])) as c:
        yield c, store


def signed_in(client):
    c, _ = client
    response = c.post(
        "/signin",
        content="name=ada",
        follow_redirects=False,
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert response.status_code == 303
    return c, c.cookies[TOKEN_COOKIE]


def post(c, path, body):
    return c.post(
        path,
        content=body,
        follow_redirects=False,
        headers={"content-type": "application/x-www-form-urlencoded"},
    )


def test_every_page_sends_a_policy_without_scripts(client):
    c, _ = client
    response = c.get("/")
    policy = response.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script" not in policy
    assert response.headers["x-content-type-options"] == "nosniff"
    assert c.get("/review.css").headers["content-type"].startswith("text/css")


def test_other_hosts_are_refused(client):
    c, _ = client
    assert c.get("/", headers={"host": "evil.example"}).status_code == 400


def test_a_form_without_its_token_is_refused(client):
    c, token = signed_in(client)
    response = post(c, "/queue/0", "verdict=pass&token=forged")
    assert response.status_code == 400 and "expired" in response.text
    assert client[1].reviews() == []
    assert post(c, "/queue/0", f"verdict=pass&token={token}").status_code == 303
    assert len(client[1].reviews()) == 1


def test_bad_forms_say_what_is_wrong(client):
    c, token = signed_in(client)
    missing = post(c, "/queue/0", f"token={token}")
    assert missing.status_code == 400 and "choose a verdict" in missing.text
    rating = post(c, "/queue/0", f"verdict=pass&scenario_realism=9&token={token}")
    assert rating.status_code == 400 and "scenario realism must be 1 to 5" in rating.text
    assert post(c, "/queue/7", f"verdict=pass&token={token}").status_code == 404
    empty = post(c, "/signin", "name=%00%20")
    assert empty.status_code == 400 and "a name is needed" in empty.text
    huge = post(c, "/queue/0", "comment=" + "x" * 70_000)
    assert huge.status_code == 400 and "larger than" in huge.text


def test_without_a_name_every_page_leads_to_sign_in(client):
    c, _ = client
    for path in ("/queue", "/queue/0"):
        response = c.get(path, follow_redirects=False)
        assert response.status_code == 303 and response.headers["location"] == "/"
