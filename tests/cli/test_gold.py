"""A gold world written through ``play --as simulator``, certified against with ``audit --gold``.

A scripted person (standard input: ``accept`` the canned draft, or type the observation)
writes the observations of the careful reference agent on the ten reference tasks into
one world; the world is then replayed by a run without any simulator, and the five
scripted simulators are audited against it, each flawed one caught on its own metric.
"""

from __future__ import annotations

import json

import pytest
from inspect_ai.log import read_eval_log
from typer.testing import CliRunner

from occubench.agent import episode_in
from occubench.cli import app
from occubench.fidelity import GoldMetric, GoldReport, SimulatorComparison
from occubench.results import log_files, read_runs
from occubench.worlds import EntrySource, ObservationSource, World

runner = CliRunner()
TASKS = list(range(1001, 1011))
SETTINGS = ["--dataset", "reference", "--protocol", "occubench"]
SESSION = ["--env-mode", "E0", "--with-plan", *SETTINGS]
FLAWED = ["canned", "fabricating", "omitting", "inconsistent", "rule-inventing"]
TYPED = '{"patient_id": "P-2231",\n "heart_rate": 128, "systolic_bp": 84}\n'
"""Task 1001's first observation typed by hand over two lines (what the draft says)."""


def play(world, task, lines):
    command = [
        "play",
        "--name",
        "gail",
        "--as",
        "simulator",
        "--agent-model",
        "occubench/careful",
        "--draft-model",
        "occubench/canned",
        "--verifier-model",
        "occubench/scripted-judge",
        "--task",
        str(task),
        "--world",
        str(world),
        "--log-dir",
        str(world.parent / "play"),
        *SESSION,
    ]
    return runner.invoke(app, command, input=lines)


@pytest.fixture(scope="module")
def gold(tmp_path_factory):
    """The gold world of the ten reference tasks, and the first session's transcript."""
    world = tmp_path_factory.mktemp("gold") / "world"
    outputs = []
    for task in TASKS:
        first = "[1, 2]\n" + TYPED if task == 1001 else "accept\n"
        result = play(world, task, first + "accept\n" * 20)
        assert result.exit_code == 0, result.output
        assert "Verdict: PASSED" in result.output
        outputs.append(result.output)
    return world, outputs


def test_play_as_the_simulator_writes_a_gold_world_of_the_person(gold):
    world, outputs = gold
    first = outputs[0]
    assert "Simulator system prompt:" in first and "### Initial state" in first
    assert "Draft observation (type 'accept' to take it):" in first
    assert "a JSON object is needed, not an array" in first  # refused, asked again
    assert "Faults the agent met: none." in first
    opened = World.open(world, writable=False)
    entries, contexts = list(opened.entries()), opened.contexts()
    opened.close()
    assert len(entries) == 10 * 9  # careful reads each of the 3 plan calls 3 times
    assert {(e.source, e.author) for e in entries} == {(EntrySource.PERSON, "gail")}
    assert {c.model for c in contexts.values()} == {"human/gail"} and len(contexts) == 10
    first_entry = next(e for e in entries if not e.path and e.call.tool == "get_patient_vitals")
    assert first_entry.observation == json.loads(TYPED)


def test_a_run_replays_the_gold_world_without_a_simulator(gold, tmp_path):
    world, _ = gold
    command = [
        "run",
        "--agent-model",
        "occubench/careful",
        "--simulator-model",
        "human/gail",
        "--verifier-model",
        "occubench/scripted-judge",
        *SESSION,
        "--world",
        str(world),
        "--world-mode",
        "replay",
        "--log-dir",
        str(tmp_path),
    ]
    result = runner.invoke(app, command, terminal_width=200)
    assert result.exit_code == 0, result.output
    rows = read_runs(log_files([str(tmp_path)]))
    assert len(rows) == 10 and all(r.passed for r in rows)
    for log in {r.log for r in rows}:
        for sample in read_eval_log(log).samples:
            assert {s.source for s in episode_in(sample.store).steps} == {ObservationSource.WORLD}


def test_audit_against_gold_catches_each_flawed_simulator_on_its_own_metric(gold, tmp_path):
    world, _ = gold
    out = tmp_path / "gold.json"
    models = [a for name in FLAWED for a in ("--simulator-model", f"occubench/{name}")]
    command = ["audit", "--gold", str(world), *models, *SETTINGS]
    command += ["--verifier-model", "occubench/rule-judge", "--out", str(out)]
    result = runner.invoke(app, command, terminal_width=250)
    assert result.exit_code == 0, result.output
    assert "Against gold (90 entries by gail" in result.output
    report = GoldReport.model_validate_json(out.read_text())
    parts = {n: report.overall(f"occubench/{n}").parts for n in FLAWED}
    assert all(p.mean == 1.0 for p in parts["canned"].values())
    caught = {
        "fabricating": GoldMetric.GROUNDED,
        "omitting": GoldMetric.COMPLETE,
        "inconsistent": GoldMetric.NUMBERS,
        "rule-inventing": GoldMetric.TEXT,
    }
    for name, metric in caught.items():
        assert parts[name][metric].mean < 0.95, name
        assert parts[name][metric].high < 1.0, name  # the interval excludes agreement
        for other in set(caught.values()) - {metric}:
            assert parts[name][other].mean == 1.0, (name, other)
    assert parts["inconsistent"][GoldMetric.CONSISTENT].mean < 1.0
    assert parts["rule-inventing"][GoldMetric.REALISM].mean < 1.0
    (tmp_path / "table.txt").write_text(result.output)


def test_bad_gold_input_is_one_line_and_exit_2(gold, tmp_path):
    world, _ = gold
    for command, message in [
        (["audit", "--gold", str(tmp_path / "none"), *SETTINGS], "no world at"),
        (["audit", "--gold", str(world), "--world", str(world), *SETTINGS], "leave out --world"),
    ]:
        result = runner.invoke(app, [*command, "--simulator-model", "occubench/canned"])
        assert result.exit_code == 2 and message in result.output, result.output
        assert "Traceback" not in result.output
    again = play(world, 1001, "")  # every call is in the world already: nothing is asked
    fresh = play(tmp_path / "fresh", 1001, "")  # the person leaves before the first answer
    for options, message in [
        (["--world-mode", "replay"], "--world-mode record"),
        (["--simulator-model", "occubench/canned"], "leave out --simulator-model"),
        (["--ui", "browser"], "played in the terminal"),
        (["--draft-model", "no-such/model"], "no-such/model"),  # the preflight tries the draft
    ]:
        result = runner.invoke(app, [*_args(world), *options], input="")
        assert result.exit_code == 2 and message in result.output, result.output
    agent = ["play", "--name", "gail", "--as", "agent", "--simulator-model", "occubench/canned"]
    result = runner.invoke(app, [*agent, *_args(world)[9:], "--draft-model", "x/y"])
    assert result.exit_code == 2 and "only with --as simulator" in result.output, result.output
    assert again.exit_code == 0 and "Verdict: PASSED" in again.output, again.output
    assert "[observation" not in again.output
    assert fresh.exit_code == 3 and "ERROR" in fresh.output, fresh.output


def _args(world):
    return [
        "play",
        "--name",
        "gail",
        "--as",
        "simulator",
        "--agent-model",
        "occubench/careful",
        "--verifier-model",
        "occubench/scripted-judge",
        "--task",
        "1001",
        "--world",
        str(world),
        *SESSION,
    ]


def test_compare_simulators_and_the_report_show_each_simulator_against_gold(gold, tmp_path):
    world, _ = gold
    for simulator in ("canned", "inconsistent"):
        command = [
            "run",
            "--agent-model",
            "occubench/careful",
            "--simulator-model",
            f"occubench/{simulator}",
            "--verifier-model",
            "occubench/scripted-judge",
            "--task-ids",
            "1001,1002",
            *SESSION,
            "--log-dir",
            str(tmp_path / simulator),
        ]
        result = runner.invoke(app, command, terminal_width=200)
        assert result.exit_code == 0, result.output
    out = tmp_path / "comparison.json"
    command = ["compare-simulators", str(tmp_path), "--gold", str(world), *SETTINGS]
    result = runner.invoke(app, [*command, "--out", str(out)], terminal_width=200)
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if "against gold" in line)
    assert "1.00" in row.split("│")[2]  # canned agrees with every gold answer
    comparison = SimulatorComparison.model_validate_json(out.read_text())
    assert comparison.against_gold["occubench/canned"].mean == 1.0
    assert comparison.against_gold["occubench/inconsistent"].mean < 1.0

    report = tmp_path / "report"
    command = ["report", str(tmp_path / "canned"), str(tmp_path / "inconsistent")]
    command += ["--gold", str(world), *SETTINGS, "--out", str(report), "--format", "json"]
    result = runner.invoke(app, command, terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "Simulators against gold" in result.output
    written = json.loads(next(report.rglob("*.json")).read_text())
    found = {g["simulator"]: g["mean"] for g in written["against_gold"]}
    assert found["occubench/canned"] == 1.0 and found["occubench/inconsistent"] < 1.0
