"""The leaderboard page in headless Chromium: filters, selection, radar, Pareto chart, escaping.

The page is the one ``build_site`` writes from four bundles (``sites.make_site``), loaded
from its file at 1280 px with Debian's Chromium. The Pareto chart is checked against the
data the page embeds: one point per row the filters show, at that row's cost and CR, and
the rows no other beats on both marked, as worked out here in Python from the same data.
"""

from __future__ import annotations

import json

import pytest

from leaderboard.sites import make_site
from occubench.bundle import BundleClass, Outcome
from occubench.leaderboard import Board, BundleLine, Entry, SiteData, write_index
from report.browser import WIDTH, chromium, needs_chromium, screenshot

pytestmark = needs_chromium
PAYLOAD = (
    "</script><script>document.title='PWNED'</script>"
    "<img src=x onerror=\"document.body.insertAdjacentHTML('beforeend','<p id=pwned>!</p>')\">"
)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    return make_site(tmp_path_factory.mktemp("site"))


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


def open_page(browser, path):
    context = browser.new_context(viewport={"width": WIDTH, "height": 900})
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto(path.as_uri())
    return page, problems


@pytest.fixture
def page(site, browser):  # the site first: its runs use an event loop the browser's would block
    page, problems = open_page(browser, site[0] / "index.html")
    yield page
    assert problems == []  # no script error, nothing refused by the policy


def visible_rows(page) -> list[str]:
    return page.eval_on_selector_all(
        "tr[data-entry]",
        "rows => rows.filter(r => r.offsetParent !== null).map(r => r.dataset.agent)",
    )


def points(page) -> list[dict]:
    return page.eval_on_selector_all(
        "#pareto circle.point",
        "cs => cs.map(c => ({id: c.dataset.entry, x: +c.dataset.x, y: +c.dataset.y, "
        "optimal: c.classList.contains('optimal')}))",
    )


def frontier(rows: list[tuple[str, float, float]]) -> set[str]:
    """Rows no other row beats on both a lower cost and a higher CR."""
    best, out = -1.0, set()
    for entry, _, rate in sorted(rows, key=lambda r: (r[1], -r[2])):
        if rate > best:
            out.add(entry)
            best = rate
    return out


def test_the_page_shows_the_boards_apart_and_loads_nothing_from_elsewhere(page, site):
    _, data, _ = site
    policy = page.get_attribute('meta[http-equiv="Content-Security-Policy"]', "content")
    assert "default-src 'none'" in policy and "script-src 'sha256-" in policy
    urls = page.eval_on_selector_all("[src], [href]", "els => els.map(e => e.src || e.href)")
    assert urls and all(u.startswith("file://") for u in urls)  # records are local files
    assert page.locator("#standard ~ section.board").count() >= 1
    assert page.locator("section.board[data-class=standard] tr[data-entry]").count() == 1
    assert page.locator("section.board[data-class=custom] tr[data-entry]").count() == 3
    ties = page.eval_on_selector_all("tr[data-entry] td.tie", "cs => cs.map(c => +c.textContent)")
    assert ties == [e.tie for b in data.boards for e in b.entries]
    assert page.text_content("#published-apart").startswith("Published rows (Example 2026)")
    cells = page.eval_on_selector_all("#published-table td", "cs => cs.map(c => c.textContent)")
    assert "not published" in cells and "70.0" in cells
    failed = page.locator("#bundles-table tr[data-bundle^=tampered] .badge.failed")
    assert failed.text_content() == "failed"
    screenshot(page, "leaderboard.png")


def test_filters_hide_rows_and_redraw_the_pareto_chart(page, site):
    _, data, _ = site
    assert len(visible_rows(page)) == 5  # 1 standard + 3 custom + 1 published
    custom = next(b for b in data.boards if b.bundle_class is BundleClass.CUSTOM)
    page.select_option("#pareto-board", custom.id)
    assert len(points(page)) == 3
    page.fill("#filter", "no-retry")
    assert visible_rows(page) == ["occubench/no-retry", "vendor/model-a"][:1] + []  # published too?
    assert [p["id"] for p in points(page)] == [
        page.get_attribute("tr[data-agent='occubench/no-retry']", "data-entry")
    ]
    assert page.is_hidden("section.board[data-class=standard]")
    page.fill("#filter", "")
    page.uncheck("#show-custom")
    assert visible_rows(page) == ["occubench/schema-agent", "vendor/model-a"]
    assert points(page) == []  # the chosen board's rows are all hidden
    page.select_option("#pareto-board", data.boards[0].id)
    assert [p["id"] for p in points(page)] == [data.boards[0].entries[0].id]
    page.check("#show-custom")
    assert len(visible_rows(page)) == 5
    assert page.text_content("#shown") == "5 row(s) shown"


def test_the_pareto_chart_is_drawn_from_the_data(page, site):
    _, data, _ = site
    custom = next(b for b in data.boards if b.bundle_class is BundleClass.CUSTOM)
    page.select_option("#pareto-board", custom.id)
    page.uncheck("#show-standard")
    page.fill("#filter", "occubench/")
    drawn = points(page)
    assert page.get_attribute("#pareto", "data-unit") == "tokens"  # trusting has no price
    expected = {(e.id, e.tokens_per_task, e.rate) for e in custom.entries}
    assert {(p["id"], p["x"], p["y"]) for p in drawn} == expected
    optimal = {p["id"] for p in drawn if p["optimal"]}
    assert optimal == frontier([(e.id, e.tokens_per_task, e.rate) for e in custom.entries])
    assert page.locator("#pareto polyline.frontier").count() == 1
    page.fill("#filter", "careful")  # priced in its bundle: dollars
    drawn = points(page)
    careful = next(e for e in custom.entries if e.agent == "occubench/careful")
    assert page.get_attribute("#pareto", "data-unit") == "usd"
    assert [(p["id"], p["x"]) for p in drawn] == [(careful.id, careful.cost_per_task)]


def test_selection_draws_the_industry_profile(page, site):
    _, data, _ = site
    standard = data.boards[0].entries[0]
    assert page.locator("#radar polygon.profile").count() == 1  # the first board's rows
    assert page.get_attribute("#radar polygon.profile", "data-entry") == standard.id
    axes = page.eval_on_selector_all("#radar text.axis", "ts => ts.map(t => t.textContent)")
    assert axes == sorted(standard.industries)
    page.check("tr[data-agent='occubench/careful'] input.pick")
    page.check("tr[data-agent='vendor/model-a'] input.pick")
    assert page.locator("#radar polygon.profile").count() == 3
    legend = page.text_content("#radar-legend")
    assert "occubench/careful" in legend and "vendor/model-a (published)" in legend
    page.uncheck("tr[data-agent='occubench/schema-agent'] input.pick")
    page.uncheck("tr[data-agent='occubench/careful'] input.pick")
    page.uncheck("tr[data-agent='vendor/model-a'] input.pick")
    assert page.text_content("#radar") == "Select rows to draw their industry profile."


def hostile_site(tmp_path) -> SiteData:
    entry = Entry(
        id="custom-1-1",
        tie=1,
        rank=1,
        agent=PAYLOAD,
        simulator=PAYLOAD,
        verifier="v",
        bundle="b-00000000",
        record="records/b-00000000.html",
        rate=0.5,
        low=0.2,
        high=0.8,
        scored=4,
        modes={"E0": 0.5, "E1": None, "E2": None, "E3": None},
        r=None,
        r_low=None,
        r_high=None,
        r_note=PAYLOAD,
        cost_per_task=None,
        tokens_per_task=100.0,
        industries={f"{PAYLOAD} {i}": 0.5 for i in range(3)},
        close=[],
        close_agents=[],
    )
    data = SiteData(
        generated="now",
        boards=[
            Board(
                id="custom-1",
                bundle_class=BundleClass.CUSTOM,
                title=PAYLOAD,
                mode="E0",
                industries=list(entry.industries),
                entries=[entry],
            )
        ],
        bundles=[
            BundleLine(
                slug="b-00000000",
                name=PAYLOAD,
                sha256="0" * 64,
                outcome=Outcome.VERIFIED,
                bundle_class=BundleClass.CUSTOM,
                record="records/b-00000000.html",
                departures=1,
                first_problem="",
            )
        ],
        published=None,
    )
    write_index(data, tmp_path)
    return data


def test_model_text_stays_text(browser, tmp_path):
    hostile_site(tmp_path)
    page, problems = open_page(browser, tmp_path / "index.html")
    assert problems == []
    assert page.title() == "occubench leaderboard"  # not retitled
    assert page.locator("#pwned").count() == 0 and page.locator("img").count() == 0
    assert page.text_content("tr[data-entry] td.agent") == PAYLOAD  # shown as text
    assert page.text_content("#radar-legend") == PAYLOAD  # selected by default
    labels = page.eval_on_selector_all("#pareto text.label", "ts => ts.map(t => t.textContent)")
    assert labels == [PAYLOAD]
    embedded = (tmp_path / "index.html").read_text()
    assert "</script><script>document.title" not in embedded
    assert json.loads(page.text_content("#site-data"))["boards"][0]["title"] == PAYLOAD
