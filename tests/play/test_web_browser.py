"""``occubench play --ui browser`` in headless Chromium, end to end.

The command runs as a person starts it (its own process, the link written to a file only
they can read); the browser opens the link, fills the forms (a value of the wrong kind
first), meets the fault of E1, answers, reads the verdict and ends the session. Pages on
another site and on another port of the same host then post a give-up to the session:
both are refused and the session goes on.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import HANG_BOUND
from occubench.results import read_runs
from report.browser import ARTIFACTS_ENV, BOUND_MS, WIDTH, chromium, needs_chromium, screenshot

pytestmark = needs_chromium
ANSWER = (
    "Heart rate 128, systolic BP 84; assign bed ED-11 (cleaned 6 minutes ago); "
    "ESI 2 allows 10 minutes."
)


def give_up_form(url: str, turn: int) -> str:
    return (
        f'<form id="f" method="post" action="{url}/answer"><input name="turn" value="{turn}">'
        '<input name="action" value="give_up"><input name="token" value=""></form>'
        '<script>document.getElementById("f").submit()</script>'
    )


@pytest.fixture
def session(tmp_path):
    """The play command, started; yields (process, link, log root); ended after."""
    link_file = tmp_path / "link.txt"
    command = [
        sys.executable,
        "-m",
        "occubench",
        "play",
        "--name",
        "carol",
        "--ui",
        "browser",
        "--dataset",
        "reference",
        "--task",
        "1001",
        "--protocol",
        "occubench",
        "--env-mode",
        "E1",
        "--fault-count",
        "1",
        "--fault-duration",
        "1",
        "--seed",
        "0",
        "--simulator-model",
        "occubench/canned",
        "--verifier-model",
        "occubench/scripted-judge",
        "--url-file",
        str(link_file),
        "--log-dir",
        str(tmp_path / "play"),
    ]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path
    )
    try:
        ticks = threading.Event()
        for _ in range(HANG_BOUND * 10):  # a bound on a hang: the link comes once it serves
            if link_file.exists() and link_file.read_text().endswith("\n"):
                break
            assert process.poll() is None, process.stdout.read()
            ticks.wait(0.1)
        else:
            pytest.fail(f"no link in {HANG_BOUND} s: the play command hangs")
        assert oct(link_file.stat().st_mode & 0o777) == "0o600"
        yield process, link_file.read_text().strip(), tmp_path / "play"
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()


def at_turn(page, number: int) -> None:
    page.wait_for_selector(f'main[data-turn="{number}"]', timeout=BOUND_MS)


def call(page, tool: int, number: int, **fields: str) -> str:
    """Call the tool-th tool through its form at turn ``number``; the observation it got."""
    form = f"#tool-{tool}"
    if not page.locator(form).get_attribute("open") == "":
        page.click(f"{form} > summary")
    for name, value in fields.items():
        if name == "json":
            page.click(f"{form} details.raw > summary")
            page.fill(f"{form} textarea[name=json]", value)
        else:
            page.fill(f'{form} [name="arg.{name}"]', value)
    page.click(f"{form} button[type=submit]")
    at_turn(page, number + 1)
    return page.locator("#transcript .entry").last.inner_text()


def test_a_browser_session_from_the_link_to_the_verdict(session, attacker):
    process, link, logs = session
    base = link.split("/start")[0]
    with chromium() as browser:
        context = browser.new_context(viewport={"width": WIDTH, "height": 1000})
        context.set_default_timeout(BOUND_MS)
        page = context.new_page()
        page.goto(link)
        at_turn(page, 1)
        assert page.inner_text("#player") == "human/carol"
        assert "Patient P-2231 has just arrived" in page.inner_text("#instruction")

        page.click("#tool-3 > summary")
        page.fill('#tool-3 [name="arg.esi_level"]', "two")
        page.click("#tool-3 button[type=submit]")
        assert "esi_level: not a whole number: 'two'" in page.inner_text("#problems")
        assert page.input_value('#tool-3 [name="arg.esi_level"]') == "two"
        assert page.locator('main[data-turn="1"]').count() == 1  # still the same move
        screenshot(page, "play-browser-form-error.png")

        turn = 1
        for tool, fields in [
            (3, {"esi_level": "2"}),
            (1, {"json": '{"patient_id": "P-2231"}'}),
            (2, {"unit": "ED"}),
        ]:
            seen = call(page, tool, turn, **fields)
            turn += 1
            if '"error"' in seen:  # the fault of E1: the person tries again
                screenshot(page, "play-browser-fault.png")
                page.reload()
                seen = call(page, tool, turn, **fields)
                turn += 1
            assert '"error"' not in seen

        for site, refused in [
            ("http://localhost", "Not this session's"),  # another site: no cookie goes with it
            ("http://127.0.0.1", "this form was sent from another site"),  # another port
        ]:
            port = attacker(give_up_form(base, turn))
            attack = context.new_page()
            attack.goto(f"{site}:{port}/")
            attack.wait_for_url(f"{base}/answer")
            assert refused in attack.inner_text("main")
            attack.close()
        page.reload()
        at_turn(page, turn)  # the session goes on: nothing was handed over

        page.fill("#answer", ANSWER)
        page.click("#give-answer")
        page.wait_for_selector("#verdict", timeout=BOUND_MS)
        assert page.inner_text("#verdict") == "PASSED"
        faults = page.inner_text("#faults")
        assert "service_unavailable" in faults or "connection_refused" in faults
        screenshot(page, "play-browser-verdict.png")
        page.click("#close")
        assert "Session ended" in page.inner_text("main")
        context.close()
    out, _ = process.communicate(timeout=HANG_BOUND)
    assert process.returncode == 0, out
    assert "Verdict: PASSED" in out and "Faults you met (1):" in out
    (row,) = read_runs([next(logs.rglob("*.eval"))])
    assert row.agent_model == "human/carol" and row.passed is True and row.faults_applied == 1
    folder = os.environ.get(ARTIFACTS_ENV)
    if folder:
        Path(folder, "play-browser-terminal.txt").write_text(out)
