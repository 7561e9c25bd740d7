"""Each failure class assigned on a scripted trajectory of that class, end to end."""

import json
import shutil

import pytest
from inspect_ai.model import get_model
from typer.testing import CliRunner

from conftest import replay, run_task
from occubench.cli import _common, app
from occubench.dataset import TASKS_FILE, reference_suite_dir
from occubench.diagnosis import (
    FailureClass,
    decide,
    diagnosis_report,
    parse_vote,
    read_failures,
    run_diagnosis,
)

VITALS = {"tool": "get_patient_vitals", "arguments": {"patient_id": "P-2231"}}
BEDS = {"tool": "list_open_beds", "arguments": {"unit": "ED"}}
PROTOCOL = {"tool": "get_triage_protocol", "arguments": {"esi_level": 2}}
RIGHT = (
    "Patient P-2231: heart rate 128, systolic BP 84. Assign bed ED-11, cleaned 6 minutes "
    "ago. ESI 2 allows a wait of at most 10 minutes."
)
EXTRA_CHECKS = {
    2: {"kind": "order", "tools": ["list_open_beds", "get_patient_vitals"]},
    3: {"kind": "tool_not_called", "tool": "get_triage_protocol"},
}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """The reference suite plus copies of task 1001 with an order and a forbidden-tool check."""
    root = tmp_path_factory.mktemp("diagnosis") / "data"
    shutil.copytree(reference_suite_dir(), root)
    tasks = [json.loads(line) for line in (root / TASKS_FILE).read_text().splitlines()]
    triage = next(t for t in tasks if t["task_id"] == 1001)
    for task_id, check in EXTRA_CHECKS.items():
        tasks.append({**triage, "task_id": task_id, "checks": [*triage["checks"], check]})
    (root / TASKS_FILE).write_text("".join(json.dumps(t) + "\n" for t in tasks))
    return root


CASES = {
    # class: (agent, simulator, task id, task arguments)
    FailureClass.SKIPPED_CHECK: (lambda: replay(VITALS, BEDS, RIGHT), "canned", 1001, {}),
    FailureClass.WRONG_ORDER: (lambda: replay(VITALS, BEDS, PROTOCOL, RIGHT), "canned", 2, {}),
    FailureClass.VIOLATED_CONSTRAINT: (
        lambda: replay(VITALS, BEDS, PROTOCOL, RIGHT),
        "canned",
        3,
        {},
    ),
    FailureClass.DEGRADED_VALUE: ("occubench/trusting", "canned", 1001, {"env_mode": "E2"}),
    FailureClass.ABANDONED_AFTER_ERROR: ("occubench/no-retry", "canned", 1001, {"env_mode": "E1"}),
    FailureClass.GAVE_UP_EARLY: (
        lambda: replay(VITALS, "I cannot finish this task."),
        "canned",
        1001,
        {},
    ),
    FailureClass.TOOL_MISUSE: (
        lambda: replay({"tool": "get_patient_vitals", "arguments": {"id": 7}}, RIGHT),
        "canned",
        1001,
        {},
    ),
    FailureClass.WRONG_ANSWER: (
        lambda: replay(VITALS, BEDS, PROTOCOL, RIGHT.replace("128", "100")),
        "canned",
        1001,
        {},
    ),
    FailureClass.SIMULATOR_CAUSED: (
        "occubench/trusting",
        "omitting",
        1001,
        {"sim_checks": True},
    ),
}


@pytest.fixture(scope="module")
def logs(dataset, tmp_path_factory):
    """One failed trajectory of each class, each in its own log."""
    out = {}
    for failure, (agent, simulator, task_id, args) in CASES.items():
        log = run_task(
            tmp_path_factory.mktemp(failure.value),
            agent=agent() if callable(agent) else get_model(agent, memoize=False),
            roles={"simulator": get_model(f"occubench/{simulator}", memoize=False)},
            dataset=str(dataset),
            task_ids=str(task_id),
            with_plan=True,
            **args,
        )
        assert log.samples[0].scores["occubench_scorer"].value == "I", failure
        out[log.location] = failure
    return out


def test_each_class_is_assigned_on_its_scripted_trajectory(logs, tmp_path):
    success, rows = run_diagnosis(
        list(logs), verifier="occubench/diagnose-judge", log_dir=str(tmp_path), votes=3
    )
    assert success and len(rows) == len(CASES)
    got = {row.failure.log: row.diagnosis for row in rows}
    for location, expected in logs.items():
        diagnosis = got[location]
        assert diagnosis.category is expected, (expected, diagnosis)
        assert diagnosis.agreement == 1.0 and len(diagnosis.votes) == 3
    steps = {logs[log]: d.evidence_step for log, d in got.items()}
    assert steps[FailureClass.WRONG_ORDER] == 1  # vitals (step 1) came before the beds
    assert steps[FailureClass.VIOLATED_CONSTRAINT] == 3  # the forbidden protocol call
    assert steps[FailureClass.TOOL_MISUSE] == 1
    assert steps[FailureClass.SKIPPED_CHECK] == steps[FailureClass.WRONG_ANSWER] == 0
    report = diagnosis_report(rows)
    assert [r.failure.log for r in report.simulator_caused] == [
        log for log, c in logs.items() if c is FailureClass.SIMULATOR_CAUSED
    ]
    assert sum(g.failed for g in report.by_agent) == len(CASES)


def test_failed_trajectories_carry_faults_and_checks(logs):
    by_class = {logs[f.log]: f for f in read_failures(list(logs))}
    degraded = by_class[FailureClass.DEGRADED_VALUE]
    assert any(s.fault and s.fault.startswith("degraded observation") for s in degraded.steps)
    abandoned = by_class[FailureClass.ABANDONED_AFTER_ERROR]
    assert abandoned.steps[-1].fault.startswith("explicit error")
    suspect = by_class[FailureClass.SIMULATOR_CAUSED]
    assert suspect.simulator_suspect and any(
        "initial_state" in (s.sim_check or "") for s in suspect.steps
    )
    misuse = by_class[FailureClass.TOOL_MISUSE]
    assert misuse.steps[0].tool_error.startswith("parsing")
    assert any(line.startswith("FAILED") for line in by_class[FailureClass.SKIPPED_CHECK].checks)


def test_votes_are_parsed_strictly_and_decided_by_plurality():
    vote = parse_vote('noise {"category": "Tool_Misuse", "evidence_step": 2, "explanation": "x"}')
    assert vote.category is FailureClass.TOOL_MISUSE and vote.evidence_step == 2
    with pytest.raises(ValueError):
        parse_vote('{"category": "bad luck", "evidence_step": 1}')
    with pytest.raises(ValueError):
        parse_vote("no json here")
    a = parse_vote('{"category": "wrong_answer", "evidence_step": 0}')
    b = parse_vote('{"category": "gave_up_early", "evidence_step": 4}')
    c = parse_vote('{"category": "gave_up_early", "evidence_step": 3}')
    decided = decide([a, b, c])
    assert decided.category is FailureClass.GAVE_UP_EARLY and decided.agreement == pytest.approx(
        2 / 3
    )
    assert decided.evidence_step == 3  # a tie of steps goes to the earliest
    assert decide([b, a]).category is FailureClass.GAVE_UP_EARLY  # class tie: taxonomy order


def test_diagnose_command_prints_the_distribution(logs, tmp_path, monkeypatch):
    for console in (_common.console, _common.err_console):
        monkeypatch.setattr(console, "width", 250)
    out = tmp_path / "diagnosis.json"
    args = [
        "diagnose",
        *logs,
        "--verifier-model",
        "occubench/diagnose-judge",
        "--votes",
        "1",
        "--log-dir",
        str(tmp_path / "logs"),
        "--out",
        str(out),
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "Why agents fail" in result.output and "Simulator-caused failures" in result.output
    saved = json.loads(out.read_text())
    assert len(saved["rows"]) == len(CASES) and len(saved["simulator_caused"]) == 1
    none = CliRunner().invoke(
        app, ["diagnose", str(tmp_path / "nothing"), "--verifier-model", "occubench/diagnose-judge"]
    )
    assert none.exit_code == 2 and "Traceback" not in none.output
