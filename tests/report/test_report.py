"""The report on logs of offline models: two agents x E0-E3.

Agents: ``occubench/schema-agent`` (calls every tool once, then reports) and a replay
model that answers at once with an HTML payload. The judge passes a trajectory with a
final answer whose observations are mostly not errors, so explicit faults (E1, E3)
make the schema agent fail some tasks: its expected CR per mode is derived from the
fault logs, independently of the metrics code.
"""

import csv
import html
import json
import re
from pathlib import Path

import pytest
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from markdown_it import MarkdownIt
from rich.console import Console

from conftest import replay, run_task
from occubench.dataset import Scenario, load_dataset, write_dataset
from occubench.report import (
    Report,
    build_report,
    render_html,
    report_tables,
    rich_table,
    write_report,
)
from occubench.report._html import explore_script, script_hash
from occubench.report._plots import chart_files, report_figures
from occubench.results import Trajectory, read_runs
from release_layout import write_release_dataset

PAYLOAD = (
    "Done. <script>document.title='PWNED'</script>"
    "<img src=x onerror=\"document.body.insertAdjacentHTML('beforeend','<p id=pwned>PWNED</p>')\">"
)
SCHEMA = "occubench/schema-agent"
REPLAY = "occubench/replay"
MODES = ("E0", "E1", "E2", "E3")
TASKS = [11, 24, 47, 70]  # with seed 0, fc=2, fd=1: explicit faults outweigh 11 and 24 in E1


def _block(text: str, tag: str) -> str:
    found = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", text, re.DOTALL)
    return found.group(1) if found else ""


def majority_clean_judge(input, tools, tool_choice, config) -> ModelOutput:
    """Pass when there is a final answer and most observations are not errors."""
    request = input[-1].text
    observations = [
        line
        for line in _block(request, "trajectory").splitlines()
        if line.startswith('{"role": "observation"')
    ]
    errors = sum('"error"' in line for line in observations)
    answered = _block(request, "final_answer") not in ("", "(no final answer)")
    verdict = {
        "is_correct": answered and 2 * errors < len(observations),
        "feedback": f"{errors} of {len(observations)} observations are errors",
    }
    output = ModelOutput.from_content("mockllm/model", json.dumps(verdict))
    output.usage = ModelUsage(input_tokens=50, output_tokens=10, total_tokens=60)
    return output


def make_logs(log_dir: Path, modes=MODES, task_ids=TASKS) -> Path:
    """Logs of the two agents in each mode (one Inspect eval per mode)."""
    roles = {
        "simulator": "occubench/echo-simulator",
        "verifier": get_model("mockllm/model", custom_outputs=majority_clean_judge),
    }
    for mode in modes:
        run_task(
            log_dir,
            agent=[SCHEMA, replay(PAYLOAD)],
            roles=roles,
            env_mode=mode,
            fault_count=2,
            fault_duration=1,
            task_ids=task_ids,
        )
    return log_dir


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    return make_logs(tmp_path_factory.mktemp("logs"))


@pytest.fixture(scope="module")
def rows(logs):
    return read_runs([logs])


@pytest.fixture(scope="module")
def report(rows) -> Report:
    return build_report(rows, n_resamples=500)


def expected_rate(rows, agent, mode):
    """CR by the judge's rule, from the fault log: explicit faults under half the calls."""
    chosen = [r for r in rows if r.agent_model == agent and r.env_mode == mode]
    passes = [
        agent == SCHEMA and 2 * sum(f.explicit for f in r.faults) < r.tool_calls for r in chosen
    ]
    return sum(passes) / len(passes)


def test_rows_carry_verdicts_faults_and_tokens(rows):
    assert len(rows) == 2 * len(MODES) * len(TASKS)
    assert {r.agent_model for r in rows} == {SCHEMA, REPLAY}
    assert all(r.votes_total == 3 and r.checks_total is None for r in rows)
    assert all(r.votes_yes == (3 if r.passed else 0) for r in rows)
    assert all(r.tokens["agent"] > 0 and r.tokens["verifier"] > 0 for r in rows)
    schema_e1 = [r for r in rows if r.agent_model == SCHEMA and r.env_mode == "E1"]
    assert sum(r.faults_applied for r in schema_e1) > 0
    assert not any(r.faults for r in rows if r.env_mode == "E0")


def test_leaderboard_rates_and_robustness_match_the_fault_logs(rows, report):
    first, second = report.leaderboard
    assert (first.agent, second.agent) == (SCHEMA, REPLAY)
    assert (first.passed, first.scored, first.rate) == (4, 4, 1.0)
    assert (round(first.low, 3), first.high) == (0.510, pytest.approx(1.0))  # Wilson 4/4
    for mode in MODES:
        assert first.mode_rates[mode] == pytest.approx(expected_rate(rows, SCHEMA, mode))
        assert second.mode_rates[mode] == 0.0
    worst = min(expected_rate(rows, SCHEMA, m) for m in MODES[1:])
    assert 0 < worst < 1, "the fixture should make some E1/E3 tasks fail"
    assert first.r == pytest.approx(worst)
    assert first.r_low <= first.r <= first.r_high
    assert second.r != second.r  # nan: CR_E0 is 0


def test_comparisons_and_fault_recovery(report):
    e0 = next(c for c in report.comparisons if c.env_mode == "E0")
    assert (e0.a, e0.b, e0.a_only, e0.b_only) == (REPLAY, SCHEMA, 0, 4)
    assert e0.p_value == pytest.approx(2 / 2**4)  # exact McNemar, 0 of 4 discordant
    assert e0.verdict == "not distinguishable"  # 4 tasks are too few at 5%
    recovery = {(f.agent, f.env_mode, f.kind): f for f in report.fault_recovery}
    e1 = recovery[(SCHEMA, "E1", "all")]
    assert e1.faults > 0 and e1.samples_hit > 0
    assert e1.hit_passed < e1.samples_hit  # some hit samples failed
    assert (REPLAY, "E1", "all") not in recovery  # it makes no tool call: never hit


def test_terminal_tables_show_intervals_and_r(report):
    console = Console(record=True, width=220)
    for table in report_tables(report):
        console.print(rich_table(table))
    text = console.export_text()
    assert "R 95% CI" in text and "[51.0, 100.0]" in text
    line = next(ln for ln in text.splitlines() if SCHEMA in ln and "│ 1 " in ln)
    assert f"{report.leaderboard[0].r:.2f}" in line
    assert "Healthcare & Life Sciences" in text and "Education & Culture" in text


def test_hostile_names_are_inert_in_the_terminal(rows):
    hostile = [
        r.model_copy(update={"agent_model": "evil\x1b]0;owned\x07[red]x[/red]\x1b[2J"})
        for r in rows[:4]
    ]
    console = Console(record=True, width=220, force_terminal=True)
    for table in report_tables(build_report(hostile, n_resamples=50)):
        console.print(rich_table(table))
    text = console.export_text(styles=False)
    assert "evil[red]x[/red]" in text and "owned" not in text and "\x07" not in text


def test_files_in_every_format(tmp_path, rows, report):
    written = write_report(report, rows, ["md", "csv", "json", "html"], tmp_path)
    names = {p.relative_to(tmp_path).as_posix() for p in written}
    drawn = (
        "leaderboard",
        "industry_radar",
        "env_modes",
        "industry_heatmap",
        "industry_difficulty",
    )
    for chart in drawn:
        assert {f"plots/{chart}.png", f"plots/{chart}.svg"} <= names
        assert (tmp_path / f"plots/{chart}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = (tmp_path / "report.json").read_text()
    assert Report.model_validate_json(text).model_dump_json(indent=2) == text  # NaN kept
    assert '"r": "NaN"' in text
    samples = (tmp_path / "samples.csv").read_text().splitlines()
    assert len(samples) == 1 + len(rows) and "votes_yes" in samples[0]
    assert len((tmp_path / "samples.jsonl").read_text().splitlines()) == len(rows)
    assert "R 95% CI" in (tmp_path / "report.md").read_text()
    leaderboard = (tmp_path / "leaderboard.csv").read_text().splitlines()
    assert leaderboard[0].startswith("rank,agent,simulator") and len(leaderboard) == 3

    page = (tmp_path / "report.html").read_text()
    assert 'class="leaderboard' in page and page.count('class="chart"') == len(drawn)
    for chart in ("fault-count", "fault-duration", "reasoning-effort", "model-generations"):
        assert f'id="left-out-{chart}"' in page  # one line each, saying which runs are missing
    assert re.findall(r'(?:src|href)="(?!data:image/svg\+xml;base64,|#)', page) == []
    assert "http://" not in page and "https://" not in page
    scripts = re.findall(r"<script[^>]*>(.*?)</script>", page, re.DOTALL | re.IGNORECASE)
    assert scripts == [explore_script()]  # ours only, allowed by its hash
    csp = html.unescape(re.search(r'Content-Security-Policy" content="([^"]+)"', page).group(1))
    directives = dict(d.strip().split(" ", 1) for d in csp.split(";"))
    assert directives["script-src"] == script_hash(scripts[0])  # no 'unsafe-inline'
    assert directives["default-src"] == "'none'"
    assert "&lt;script&gt;document.title=&#39;PWNED&#39;&lt;/script&gt;&lt;img src=x" in page
    assert page.count('class="trajectory"') == len(rows)


def test_html_with_two_simulators_and_epochs_shows_agreement_and_pass_k(rows):
    other = [r.model_copy(update={"simulator_model": "other/sim"}) for r in rows]
    again = [r.model_copy(update={"epoch": 2}) for r in rows]
    broken = rows[0].model_copy(
        update={"passed": None, "error": "<b>simulator down</b>", "epoch": 3}
    )
    both = rows + other + again + [broken]
    report = build_report(both, n_resamples=50)
    assert report.errors == 1
    assert len(report.agreement) == len(MODES)
    assert {(a.n_pairs, a.share) for a in report.agreement} == {(1, 1.0)}
    assert {p.k for p in report.pass_k} == {1, 2}
    figures = report_figures(report).figures
    charts = {
        n.removesuffix(".svg"): c for n, c in chart_files(figures).items() if n.endswith(".svg")
    }
    page = render_html(report, both, [Trajectory()] * len(both), charts)
    assert 'id="agreement"' in page and "100.0% (1/1)" in page
    assert 'id="passk"' in page
    assert f"{SCHEMA} @ other/sim" in page
    assert "infrastructure error</span>: &lt;b&gt;simulator down&lt;/b&gt;" in page


def test_report_files_hold_no_secret(tmp_path, rows, monkeypatch):
    """A provider error quoting the key, a key in a base URL: redacted in every format."""
    key = "sk-report-LEAK-0123456789abcdef"
    monkeypatch.setenv("LOCAL_API_KEY", key)
    leaky = [
        r.model_copy(
            update={
                "error": f"Error code: 401 - Incorrect API key provided: {key}",
                "agent_model": "openai-api/gw/m @ http://me:url-password-9876@gw",
            }
        )
        if i == 0
        else r
        for i, r in enumerate(rows)
    ]
    written = write_report(
        build_report(leaky, n_resamples=50), leaky, ["md", "csv", "json", "html"], tmp_path
    )
    texts = {p.name: p.read_text(encoding="utf-8") for p in written if p.suffix != ".png"}
    assert {"report.md", "samples.csv", "report.json", "samples.jsonl", "report.html"} <= set(texts)
    assert any("Incorrect API key provided: [redacted]" in t for t in texts.values())
    leaks = [n for n, t in texts.items() if key in t or "url-password-9876" in t]
    assert leaks == []


def test_the_page_says_which_trajectories_it_does_not_embed(tmp_path, rows, report):
    (page,) = write_report(report, rows, ["html"], tmp_path, trajectories=2)[-1:]
    html = page.read_text(encoding="utf-8")
    missing = "this one is not among them"
    assert html.count(missing) == len(rows) - 2
    assert f"embeds the trajectories of 2 of the {len(rows)} samples" in html
    assert html.count("<h4>Trajectory</h4>") == 2


HOSTILE = {
    "scenario": '=HYPERLINK("http://evil.example/x","click")',
    "industry": "[x](javascript:alert(1))",
    "domain": "![i](http://evil.example/x.png)",
}
"""Model-written names (a synthesized dataset's): a formula, a script link, an image."""


def hostile_dataset(root: Path) -> Path:
    """The fixture dataset with task 11's scenario, industry and domain from ``HOSTILE``."""
    data = load_dataset(write_release_dataset(root))
    (task,) = [t for t in data.tasks if t.task_id == 11]
    renamed = task.model_copy(update={"task_scenario_name": HOSTILE["scenario"]})
    pool = Scenario(
        category=HOSTILE["industry"],
        domain=HOSTILE["domain"],
        task_scenario_name=HOSTILE["scenario"],
    )
    others = [t for t in data.tasks if t.task_id != 11]
    return write_dataset(
        root, [renamed, *others], data.envs.values(), [*data.scenarios.values(), pool]
    )


def test_model_text_is_inert_in_the_markdown_and_csv_files(tmp_path):
    """A run on a dataset whose names are hostile: report.md shows them as text (no link,
    image or HTML is formed) while its tables render; no CSV cell is a formula."""
    dataset = hostile_dataset(tmp_path / "dataset")
    run_task(tmp_path / "logs", dataset=str(dataset), task_ids=[11, 24], env_mode="E0")
    rows = read_runs([tmp_path / "logs"])
    assert {r.scenario for r in rows} >= {HOSTILE["scenario"]}
    out = tmp_path / "report"
    write_report(build_report(rows, n_resamples=50), rows, ["md", "csv"], out)

    markdown = (out / "report.md").read_text()
    renderer = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    renderer.validateLink = lambda url: True  # as a renderer that keeps javascript: links
    page = renderer.render(markdown)
    assert re.findall(r"<(?:a|script)\b[^>]*>", page) == []
    images = re.findall(r"<img\b[^>]*>", page)
    assert images and all(i.startswith('<img src="plots/') for i in images)  # the charts
    assert page.count("<table>") == markdown.count("\n### ") > 5  # the report's own tables
    shown = html.unescape(re.sub(r"<[^>]+>", "", page))
    for text in HOSTILE.values():
        assert text in shown  # as text, in full

    written = {p.name: list(csv.reader(p.open(newline=""))) for p in out.glob("*.csv")}
    assert {"samples.csv", "rates.csv"} <= set(written)
    cells = [(name, cell) for name, table in written.items() for r in table for cell in r]
    formulas = [(n, c) for n, c in cells if re.match(r"\s*[=+\-@]", c) and not is_number(c)]
    assert formulas == []
    quoted = "'" + HOSTILE["scenario"]
    assert sum(c == quoted for n, c in cells if n == "samples.csv") == 1
    assert HOSTILE["industry"] in {c for _, c in cells}  # not a formula: left as it is


def is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
