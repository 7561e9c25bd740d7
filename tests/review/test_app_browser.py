"""The review app in headless Chromium: sign in, review, reload, two reviewers at once,
model text shown as text, ten samples judged by hand down to the agreement table, and
pages elsewhere that try to sign the reviewer in as someone else.

The app runs under uvicorn on 127.0.0.1 (an ephemeral port) in a thread of the test,
over a fresh database of 18 samples: two reference agents and a hostile one whose final
answer is an HTML/script payload, in E0 and E1, judged by the scripted judge.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from rich.console import Console

from occubench.report import build_report, report_tables, rich_table
from occubench.results import read_runs, read_trajectories
from occubench.review import ReviewStore, create_app, load_reviews
from report.browser import (
    ARTIFACTS_ENV,
    BOUND_MS,
    WIDTH,
    chromium,
    needs_chromium,
    screenshot,
)
from review.review_logs import PAYLOAD, make_review_logs
from review.server import served

pytestmark = needs_chromium


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    rows = read_runs([make_review_logs(tmp_path_factory.mktemp("logs"))])
    return rows, read_trajectories(rows)


@pytest.fixture
def app_url(samples, tmp_path):
    store = ReviewStore(tmp_path / "reviews.sqlite")
    store.add_samples(*samples)
    with served(create_app(store)) as url:
        yield url, store


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


@pytest.fixture
def new_page(browser):
    contexts = []

    def make():
        context = browser.new_context(viewport={"width": WIDTH, "height": 900})
        context.set_default_timeout(BOUND_MS)
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()


def sign_in(page, url, name):
    page.goto(url + "/")
    page.fill("#name", name)
    page.click("button[type=submit]")
    assert page.url == url + "/queue"


def fill_review(page, verdict, scenario=None, rubric=None, comment=""):
    page.check(f"input[name=verdict][value={verdict}]")
    if scenario:
        page.check(f"input[name=scenario_realism][value='{scenario}']")
    if rubric:
        page.check(f"input[name=rubric_realism][value='{rubric}']")
    page.fill("#comment", comment)


def test_sign_in_review_three_and_find_them_after_a_reload(app_url, new_page):
    url, store = app_url
    page = new_page()
    sign_in(page, url, "Ada Lovelace")
    page.click("#next")
    assert page.url == url + "/queue/0"
    for heading in ("Verification plan", "Final answer", "Judge votes", "Checks", "Trajectory"):
        assert page.locator("h4", has_text=heading).count() == 1
    for verdict, scenario, comment in [
        ("pass", 5, "fine"),
        ("fail", 2, "odd <b>tag</b>"),
        ("unsure", 3, ""),
    ]:
        fill_review(page, verdict, scenario, 4, comment)
        page.click("#save")
    assert page.url == url + "/queue/3"  # saving goes on to the next sample
    page.goto(url + "/queue")
    page.reload()
    rows = page.locator("#queue tbody tr.done")
    assert rows.count() == 3 and "3 of 18 sample(s) reviewed" in page.inner_text("main")
    page.goto(url + "/queue/1")
    page.reload()
    assert page.is_checked("input[name=verdict][value=fail]")
    assert page.is_checked("input[name=scenario_realism][value='2']")
    assert page.input_value("#comment") == "odd <b>tag</b>"
    assert page.locator("#saved").count() == 1
    assert [(r.reviewer, r.verdict.value) for r in store.reviews()] == [
        ("Ada Lovelace", "pass"),
        ("Ada Lovelace", "fail"),
        ("Ada Lovelace", "unsure"),
    ]
    screenshot(page, "review-sample.png")


def test_two_reviewers_saving_at_once_are_both_kept(app_url, new_page):
    url, store = app_url
    ada, bob = new_page(), new_page()
    sign_in(ada, url, "ada")
    sign_in(bob, url, "bob")
    queue_a = [i.sample_key for i in store.queue("ada")]
    queue_b = [i.sample_key for i in store.queue("bob")]
    assert queue_a[0] != queue_b[0]  # different samples first
    shared = queue_a[0]
    ada.goto(f"{url}/queue/0")
    bob.goto(f"{url}/queue/{queue_b.index(shared)}")
    fill_review(ada, "pass", comment="ada was here")
    fill_review(bob, "fail", comment="bob was here")
    ada.click("#save", no_wait_after=True)
    bob.click("#save", no_wait_after=True)  # both posts in flight together
    ada.wait_for_url(f"{url}/queue/1")
    bob.wait_for_url(lambda u: u != f"{url}/queue/{queue_b.index(shared)}")
    saved = {(r.reviewer, r.sample_key, r.verdict.value) for r in store.reviews()}
    assert saved == {("ada", shared, "pass"), ("bob", shared, "fail")}


def test_a_trajectory_payload_is_shown_as_text(app_url, new_page):
    url, store = app_url
    page = new_page()
    sign_in(page, url, "eve")
    rank = next(i.rank for i in store.queue("eve") if i.row.agent_model == "occubench/replay")
    page.goto(f"{url}/queue/{rank}")
    assert page.title().startswith(f"Sample {rank + 1} of 18")  # not retitled
    assert page.locator("#pwned").count() == 0 and page.locator("img").count() == 0
    assert PAYLOAD in page.locator(".answer").inner_text()
    assert page.locator(".turn.assistant pre").first.inner_text() == PAYLOAD
    screenshot(page, "review-hostile-sample.png")


def test_ten_samples_judged_by_hand_give_the_agreement_table(app_url, new_page, samples, tmp_path):
    url, store = app_url
    page = new_page()
    sign_in(page, url, "grace")
    queue = store.queue("grace")[:10]
    chosen = []  # agree with the scored verdict on 7 samples, overturn 3
    for i, item in enumerate(queue):
        scored = "pass" if item.row.passed else "fail"
        verdict = scored if i not in (1, 4, 7) else {"pass": "fail", "fail": "pass"}[scored]
        chosen.append((item.sample_key, scored, verdict))
        page.goto(f"{url}/queue/{item.rank}")
        fill_review(page, verdict, 1 + i % 5, 1 + (i + 2) % 5, f"sample {i}")
        page.click("#save")
    export = page.request.get(url + "/export.json")
    assert export.ok and export.headers["content-type"].startswith("application/json")
    path = tmp_path / "reviews.json"
    path.write_text(export.text())
    reviews = load_reviews(path)
    assert len(reviews) == 10 and {r.reviewer for r in reviews} == {"grace"}
    csv_export = page.request.get(url + "/export.csv")
    assert csv_export.text().splitlines()[0].startswith("sample_key,reviewer,verdict")

    rows = samples[0]
    report = build_report(rows, n_resamples=500, reviews=reviews)
    agreement = report.review.agreement
    confusion = {"pass": {"pass": 0, "fail": 0}, "fail": {"pass": 0, "fail": 0}}
    for _, scored, verdict in chosen:
        confusion[scored][verdict] += 1
    assert agreement.confusion == confusion and agreement.compared == 10
    assert agreement.observed == pytest.approx(0.7)
    n = 10
    p_e = sum(
        (sum(confusion[v].values()) / n) * (sum(confusion[a][v] for a in confusion) / n)
        for v in ("pass", "fail")
    )
    assert agreement.kappa == pytest.approx((0.7 - p_e) / (1 - p_e))
    assert len(agreement.disagreements) == 3

    console = Console(record=True, width=160)
    for table in report_tables(report)[-5:-1]:  # agreement, confusion, disagreements, human CR
        console.print(rich_table(table))
    text = console.export_text()
    assert "Reviewer agreement: 10 review(s) by 1 reviewer(s) of 10 sample(s)" in text
    folder = os.environ.get(ARTIFACTS_ENV)
    if folder:
        Path(folder, "agreement-table.txt").write_text(text)
        Path(folder, "reviews.json").write_text(json.dumps(json.loads(export.text()), indent=2))
    page.goto(url + "/queue")
    screenshot(page, "review-queue.png")


def signin_form(url: str, script: str = "") -> str:
    """A page that posts the app's sign-in form as soon as it opens."""
    return (
        f'<form id="f" method="post" action="{url}/signin"><input name="name" value="mallory">'
        f'<input name="token" value=""></form><script>{script}document.getElementById("f")'
        ".submit()</script>"
    )


def test_a_sign_in_posted_from_another_site_is_refused(app_url, new_page, attacker):
    """Login CSRF: the reviewer opens the app, then a page on another site that posts
    the sign-in form as mallory (without the token cookie, which stays home)."""
    url, store = app_url
    page = new_page()
    page.goto(url + "/")
    port = attacker(signin_form(url))
    page.goto(f"http://localhost:{port}/")  # localhost is another site than 127.0.0.1
    page.wait_for_url(url + "/signin")
    assert "this form was sent from another site" in page.inner_text("main")
    page.goto(url + "/queue")
    assert page.url == url + "/" and page.locator("#reviewer").count() == 0
    assert store.queue("mallory") == []
    sign_in(page, url, "ada")  # the reviewer's own sign-in still works
    assert page.inner_text("#reviewer") == "ada"


def test_a_page_on_another_port_cannot_plant_cookies(app_url, new_page, attacker):
    """A page on another port of the same host shares the app's cookies (same site),
    and may set them: a token of its own with the form, or a reviewer name. The
    post's Origin gives the first away; the second does not carry the app's signature."""
    url, store = app_url
    page = new_page()
    token = "A" * 32
    plant = f'document.cookie = "occubench_token={token}; path=/"; f.token.value = "{token}"; '
    port = attacker(signin_form(url, "const f = document.getElementById('f'); " + plant))
    page.goto(f"http://127.0.0.1:{port}/")
    page.wait_for_url(url + "/signin")
    assert "from another site" in page.inner_text("main")
    port = attacker('<script>document.cookie = "occubench_reviewer=mallory; path=/"</script>')
    page.goto(f"http://127.0.0.1:{port}/")
    page.goto(url + "/queue")
    assert page.url == url + "/" and page.locator("#reviewer").count() == 0
    assert store.queue("mallory") == []
