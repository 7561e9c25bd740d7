"""The HTML report explored in headless Chromium: sort, filter, page, drill down.

Rows are built by hand (``sample_row``), so every expected order and count is known:
three agents over ten industries in E0, E1 and E2, where two agents tie on R = 0 and
differ under faults. The page is the one `render_html` writes, loaded from a file at 1280 px.
"""

from __future__ import annotations

import pytest

from conftest import sample_row
from occubench.report import build_report, render_html
from occubench.results import Trajectory
from occubench.results._trajectory import Turn
from report.browser import (
    BOUND_MS,
    CONTRAST_JS,
    WIDTH,
    chromium,
    needs_chromium,
    screenshot,
)

pytestmark = needs_chromium
INDUSTRIES = [f"Industry {i:02d}" for i in range(10)]
MODES = ("E0", "E1", "E2")
PASSES = {  # agent -> passes out of 10 tasks in E0, E1, E2
    "a/steady": (10, 10, 10),  # R = 1
    "b/brittle": (10, 0, 0),  # R = 0, nothing under faults
    "c/shaky": (8, 0, 5),  # R = 0 too, but half of E2
}
FAULT = {
    "call_index": 0,
    "tool": "read",
    "explicit": True,
    "applied": True,
    "changes": ["error returned; the simulator was not called"],
    "seen_by_agent": {"error": "unavailable"},
    "retried_later": False,
}
KINDS = ("http_500", "timeout")
PAYLOAD = "<script>document.title='PWNED'</script><b id=bold>x</b>"


def rows():
    out = []
    for agent, counts in PASSES.items():
        for mode, passes in zip(MODES, counts, strict=True):
            for task in range(10):
                out.append(
                    sample_row(
                        agent_model=agent,
                        env_mode=mode,
                        task_id=task,
                        industry=INDUSTRIES[task],
                        scenario=f"Scenario {task}",
                        difficulty=1 + task % 3,
                        passed=task < passes,
                        run_id=f"{agent}-{mode}",
                        faults=[FAULT | {"kind": KINDS[task % 2]}] if mode == "E1" else [],
                    )
                )
    return out


@pytest.fixture(scope="module")
def page_file(tmp_path_factory):
    samples = rows()
    report = build_report(samples, n_resamples=50)
    trajectories = [
        Trajectory(read=True, turns=[Turn(role="assistant", text=PAYLOAD)], answer=PAYLOAD)
        for _ in samples
    ]
    path = tmp_path_factory.mktemp("explore") / "report.html"
    path.write_text(render_html(report, samples, trajectories, {}), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


@pytest.fixture
def page(browser, page_file):
    context = browser.new_context(viewport={"width": WIDTH, "height": 900})
    context.set_default_timeout(BOUND_MS)
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto(page_file.as_uri())
    yield page
    assert problems == []  # no script error, no refused resource
    context.close()


def column(page, table, index):
    return page.eval_on_selector_all(
        f"#{table} tbody tr:not([hidden])",
        f"rows => rows.map(r => r.cells[{index}].innerText.trim())",
    )


def header(page, table, name):
    return page.locator(f"#{table} thead th[title='Sort by {name}']")


def test_page_fits_1280_px_and_its_labels_are_readable(page):
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
    ratios = page.evaluate(CONTRAST_JS)
    assert len(ratios) > 50 and min(ratios) >= 4.5
    assert page.title() == "occubench report" and page.locator("#bold").count() == 0
    screenshot(page, "report-explore.png")


def test_leaderboard_ranks_ties_on_r_and_sorts_by_each_column(page):
    agents = lambda: column(page, "leaderboard-table", 1)  # noqa: E731
    assert agents() == ["a/steady", "b/brittle", "c/shaky"]  # CR E0 tie broken by R, then E1
    r = header(page, "leaderboard-table", "R")
    r.click()  # R, largest first: ties (b and c at 0) by CR under faults
    assert agents() == ["a/steady", "c/shaky", "b/brittle"]
    assert r.get_attribute("aria-sort") == "descending"
    r.click()
    assert agents() == ["b/brittle", "c/shaky", "a/steady"]
    header(page, "leaderboard-table", "E0 %").click()
    assert agents()[-1] == "c/shaky"  # 80% in E0
    header(page, "leaderboard-table", "Agent").click()
    assert agents() == ["a/steady", "b/brittle", "c/shaky"]


def test_samples_are_paged_filtered_and_searchable(page):
    table = "samples-table"
    assert len(column(page, table, 1)) == 25
    controls = page.locator("#samples .controls")
    assert "page 1 of 4" in controls.inner_text() and "90 of 90 rows" in controls.inner_text()
    for _ in range(3):
        controls.get_by_role("button", name="next").click()
    assert len(column(page, table, 1)) == 15 and "page 4 of 4" in controls.inner_text()
    controls.locator("select[data-key=verdict]").select_option("fail")
    verdicts = column(page, table, 9)
    assert set(verdicts) == {"fail"} and len(verdicts) == 25  # back on page 1
    assert "37 of 90 rows" in controls.inner_text()  # b: 20, c: 2 + 10 + 5
    controls.locator("select[data-key=setup]").select_option("c/shaky")
    controls.locator("select[data-key=mode]").select_option("E2")
    assert set(column(page, table, 1)) == {"c/shaky"} and len(column(page, table, 1)) == 5
    controls.locator("input[type=search]").fill("scenario 7")
    assert column(page, table, 5) == ["Scenario 7"]


def test_tables_sort_and_filter_by_mode_and_fault_kind(page):
    mode = page.locator("#industry .controls select[data-key=mode]")
    assert mode.input_value() == "E0" and len(column(page, "industry-table", 0)) == 10
    mode.select_option("E2")
    header(page, "industry-table", "c/shaky").click()  # best first
    cells = column(page, "industry-table", 4)
    assert [c.split()[0] for c in cells] == ["100.0"] * 5 + ["0.0"] * 5
    header(page, "industry-table", "Industry").click()
    assert column(page, "industry-table", 0) == INDUSTRIES
    kind = page.locator("#faults .controls select").nth(2)  # model, mode, kind
    assert kind.input_value() == "all"  # all kinds together: one row per setup and mode
    assert column(page, "faults-table", 2) == ["all"] * 3
    kind.select_option("")
    assert sorted(set(column(page, "faults-table", 2))) == ["all", *KINDS]
    assert len(column(page, "faults-table", 2)) == 9


def test_a_rate_opens_its_samples_and_a_single_sample_its_trajectory(page):
    cell = page.locator("#industry-table tbody tr:not([hidden])").first.locator("td a").nth(1)
    cell.click()  # b/brittle, Industry 00, E0: one sample
    assert page.evaluate("location.hash").startswith("#sample-")
    article = page.locator(page.evaluate("location.hash"))
    assert (
        article.is_visible() and "<script>document.title='PWNED'</script>" in article.inner_text()
    )
    page.locator("#leaderboard-table tbody tr").nth(2).locator("td a").first.click()  # c/shaky E0
    assert set(column(page, "samples-table", 1)) == {"c/shaky"}
    modes = column(page, "samples-table", 2)
    assert set(modes) == {"E0"} and len(modes) == 10


def test_the_policy_refuses_any_script_but_ours(browser, page_file, tmp_path):
    tampered = tmp_path / "tampered.html"
    text = page_file.read_text(encoding="utf-8")
    tampered.write_text(text.replace("</body>", "<script>document.title='PWNED'</script></body>"))
    context = browser.new_context()
    page = context.new_page()
    refused: list[str] = []
    page.on("console", lambda m: refused.append(m.text))
    page.goto(tampered.as_uri())
    assert page.title() == "occubench report"
    assert any("Content Security Policy" in m for m in refused)
    assert page.locator("#samples .controls").count() == 1  # our script still ran
    context.close()
