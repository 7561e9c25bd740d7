"""``occubench floor``: the null agents on the reference suite, with the scripted judges."""

import json
import shutil

import pytest
from typer.testing import CliRunner

from conftest import SCRIPTED_MODEL_ARGS
from occubench.cli import app
from occubench.cli.floor import NULL_AGENT_NAMES
from occubench.dataset import TASKS_FILE, reference_suite_dir
from occubench.report import FloorRecord, floor_table
from occubench.results import read_runs
from occubench.scripted import NullAgent

runner = CliRunner()
ECHO = "occubench/echo-simulator"
SCRIPTED = "occubench/scripted-judge"
RUBRIC = "occubench/rubric-judge"
AGENTS = [a.model for a in NullAgent]


def floor(tmp_path, verifier, *args, dataset="reference", out="floor.json"):
    """Run ``occubench floor`` under ``tmp_path``; the result and the record it wrote."""
    path = tmp_path / out
    result = runner.invoke(
        app,
        [
            "floor",
            "--dataset",
            str(dataset),
            "--simulator-model",
            ECHO,
            "--verifier-model",
            verifier,
            "--log-dir",
            str(tmp_path / "floor-logs"),
            "--out",
            str(path),
            *args,
        ],
    )
    record = FloorRecord.model_validate_json(path.read_text()) if path.exists() else None
    return result, record


def counts(rows):
    return {r.group: (r.scored, r.passed) for r in rows}


def table_row(output, agent):
    return next(line for line in output.splitlines() if f"│ {agent} " in line)


@pytest.fixture(scope="module")
def scripted_floor(tmp_path_factory):
    return floor(tmp_path_factory.mktemp("scripted"), SCRIPTED)


def test_the_help_lists_every_null_agent():
    assert NULL_AGENT_NAMES == tuple(a.value for a in NullAgent)


def test_floor_on_the_reference_suite_with_the_scripted_judge(scripted_floor):
    result, record = scripted_floor
    assert result.exit_code == 0, result.output
    # the suite's checks ask for the tools' values: no null agent passes them
    assert counts(record.null_agents) == {a: (10, 0) for a in AGENTS}
    # the lenient judge alone passes an answer after any observation
    assert counts(record.verifier_alone) == {
        "occubench/null-answer": (10, 0),
        "occubench/null-echo": (10, 0),
        "occubench/null-one-call": (10, 10),
    }
    assert (record.dataset, record.simulator, record.verifier) == ("reference", ECHO, SCRIPTED)
    assert record.protocol.value == "paper" and len(record.dataset_digest) == 64
    table = floor_table(record)  # what the command printed (the module's console is narrow)
    assert table.rows == [
        [agent, "10", "0", "0.0", "[0.0, 27.8]", "0", alone, interval]
        for agent, alone, interval in [
            ("occubench/null-answer", "0.0", "[0.0, 27.8]"),
            ("occubench/null-echo", "0.0", "[0.0, 27.8]"),
            ("occubench/null-one-call", "100.0", "[72.2, 100.0]"),
        ]
    ]
    said = " ".join(result.output.split())
    assert "The verifier's floor on reference" in said and "null-one-call" in said
    assert (
        "Floor: the verifier occubench/scripted-judge passes 0.0% of tasks (95% CI [0.0, 27.8]) "
        "for an agent that does nothing (occubench/null-answer: 0 of 10). Its votes alone, "
        "checks aside, pass 100.0% (occubench/null-one-call: 10 of 10)." in said
    )


def test_floor_with_the_rubric_judge(tmp_path):
    result, record = floor(tmp_path, RUBRIC, "--null-agents", "null-one-call", "--limit", "3")
    assert result.exit_code == 0, result.output
    assert counts(record.null_agents) == {"occubench/null-one-call": (3, 0)}
    # the rubric judge wants the plan's numbers in the answer: a give-up fails
    assert counts(record.verifier_alone) == {"occubench/null-one-call": (3, 0)}


@pytest.fixture(scope="module")
def no_checks(tmp_path_factory):
    """The reference suite with its tasks' checks removed: the verifier alone grades."""
    folder = tmp_path_factory.mktemp("no-checks") / "suite"
    shutil.copytree(reference_suite_dir(), folder)
    tasks = [json.loads(line) for line in (folder / TASKS_FILE).read_text().splitlines()]
    lines = [json.dumps({k: v for k, v in t.items() if k != "checks"}) for t in tasks]
    (folder / TASKS_FILE).write_text("\n".join(lines) + "\n")
    return folder


@pytest.mark.parametrize(("verifier", "passed"), [(SCRIPTED, 4), (RUBRIC, 0)])
def test_without_checks_the_floor_is_the_verifiers(tmp_path, no_checks, verifier, passed):
    result, record = floor(tmp_path, verifier, "--limit", "4", dataset=no_checks)
    assert result.exit_code == 0, result.output
    assert counts(record.null_agents) == {
        "occubench/null-answer": (4, 0),
        "occubench/null-echo": (4, 0),
        "occubench/null-one-call": (4, passed),
    }
    said = " ".join(result.output.split())
    if passed:
        assert record.highest().group == "occubench/null-one-call"
        assert "passes 100.0% of tasks (95% CI [51.0, 100.0])" in said
    else:
        assert "passes 0.0% of tasks" in said


def test_an_unknown_null_agent_is_bad_input(tmp_path):
    result, record = floor(tmp_path, SCRIPTED, "--null-agents", "null-answer,lazy")
    assert result.exit_code == 2 and record is None
    assert "unknown null agent lazy" in result.output


def test_the_report_shows_the_floor_beside_the_leaderboard(scripted_floor, tmp_path):
    _, record = scripted_floor
    logs = tmp_path / "logs"
    ran = runner.invoke(
        app,
        ["run", *SCRIPTED_MODEL_ARGS, "--dataset", "reference", "--limit", "2"]
        + ["--log-dir", str(logs), "--display", "none"],
    )
    assert ran.exit_code == 0, ran.output
    ran_tasks = sorted({str(r.task_id) for r in read_runs([logs])})
    on_these = record.model_copy(update={"task_ids": ran_tasks})  # as if measured on them
    measured = tmp_path / "scripted.json"
    measured.write_text(on_these.model_dump_json())
    other = tmp_path / "rubric.json"
    other.write_text(on_these.model_copy(update={"verifier": RUBRIC}).model_dump_json())
    elsewhere = tmp_path / "all-tasks.json"
    elsewhere.write_text(record.model_dump_json())

    shown = runner.invoke(app, ["report", str(logs), "--floor", str(measured), "--by", "domain"])
    assert shown.exit_code == 0, shown.output
    line = table_row(shown.output, "occubench/schema-agent")
    assert "0.0 occubench/null-answer" in line and "[0.0, 27.8]" in line
    assert "floor %" in shown.output

    for unmatched in (other, elsewhere):  # another verifier; the same one on other tasks
        shown = runner.invoke(
            app, ["report", str(logs), "--floor", str(unmatched), "--by", "domain"]
        )
        assert shown.exit_code == 0, shown.output
        assert "not measured" in table_row(shown.output, "occubench/schema-agent")

    plain = runner.invoke(app, ["report", str(logs), "--format", "json", "--out", str(tmp_path)])
    assert plain.exit_code == 0, plain.output
    assert "floor" not in json.loads((tmp_path / "report.json").read_text())
    assert "floor %" not in plain.output


def test_a_file_that_is_no_floor_record_is_bad_input(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    result = runner.invoke(app, ["report", str(tmp_path), "--floor", str(bad)])
    assert result.exit_code == 2


def test_the_floor_of_tasks_with_a_user_asks_for_the_user_model_and_runs_with_one(tmp_path):
    refused, _ = floor(
        tmp_path,
        SCRIPTED,
        "--null-agents",
        "null-answer",
        "--limit",
        "1",
        dataset="conversational",
        out="refused.json",
    )
    assert refused.exit_code == 2 and "--user-model" in refused.output
    result, record = floor(
        tmp_path,
        SCRIPTED,
        "--null-agents",
        "null-answer",
        "--limit",
        "1",
        "--user-model",
        "occubench/user-cooperative",
        dataset="conversational",
    )
    assert result.exit_code == 0, result.output
    assert record is not None
    assert counts(record.null_agents) == {"occubench/null-answer": (1, 0)}
