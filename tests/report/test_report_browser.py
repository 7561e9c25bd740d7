"""The HTML report in headless Chromium: it renders, and model text never runs.

Chromium is Debian's (/usr/bin/chromium), started here with a fresh profile and no
network. The DOM it dumps after loading shows what ran: the payload would retitle the
page and add a ``<p id="pwned">`` (checked on a control page that embeds it raw).
"""

import subprocess
from pathlib import Path

import pytest

from conftest import HANG_BOUND, SCRIPTED_ROLES, replay, run_task
from occubench.report import build_report, write_report
from occubench.results import read_runs
from report.browser import CHROMIUM, needs_chromium
from report.browser import FLAGS as BROWSER_FLAGS

FLAGS = [*BROWSER_FLAGS, "--host-resolver-rules=MAP * ~NOTFOUND"]
PAYLOAD = (
    "Done. <script>document.title='PWNED'</script>"
    "<img src=x onerror=\"document.body.insertAdjacentHTML('beforeend','<p id=pwned>PWNED</p>')\">"
)
ESCAPED = "&lt;script&gt;document.title='PWNED'&lt;/script&gt;&lt;img src=x onerror="

pytestmark = needs_chromium


def dump_dom(page: Path, workdir: Path) -> str:
    """Load ``page`` in a fresh headless Chromium and return the DOM after it ran."""
    profile = workdir / f"profile-{page.stem}"
    result = subprocess.run(
        [str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=HANG_BOUND,
        env={"HOME": str(workdir)},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


@pytest.fixture(scope="module")
def html_report(tmp_path_factory) -> Path:
    logs = tmp_path_factory.mktemp("logs")
    for mode in ("E0", "E1"):
        run_task(
            logs,
            agent=["occubench/schema-agent", replay(PAYLOAD)],
            roles=SCRIPTED_ROLES,
            env_mode=mode,
            task_ids="11,70",
        )
    rows = read_runs([logs])
    out = tmp_path_factory.mktemp("report")
    write_report(build_report(rows, n_resamples=100), rows, ["html"], out)
    return out / "report.html"


def test_the_control_page_shows_a_payload_that_runs(tmp_path):
    control = tmp_path / "control.html"
    control.write_text(f"<!DOCTYPE html><title>control</title><div>{PAYLOAD}</div>")
    dom = dump_dom(control, tmp_path)
    assert "<title>PWNED</title>" in dom and '<p id="pwned">' in dom


def test_report_renders_and_model_text_stays_text(html_report, tmp_path):
    dom = dump_dom(html_report, tmp_path)
    assert "<title>occubench report</title>" in dom  # not retitled by the payload
    assert 'id="leaderboard-table"' in dom
    assert "occubench/schema-agent" in dom and "R 95% CI" in dom
    for chart in ("chart-leaderboard", "chart-env-modes", "chart-industry-heatmap"):
        assert f'id="{chart}"' in dom
    assert dom.count('src="data:image/svg+xml;base64,') == dom.count('<img class="chart"') >= 3
    assert 'id="left-out-industry-radar"' in dom  # two industries: no radar, a line instead
    assert 'id="pwned"' not in dom  # the onerror handler never ran
    assert '<img src="x"' not in dom  # the payload's tag is no element
    assert dom.count(ESCAPED) >= 4  # shown as text: answer and message of 2 samples x 2 modes
