"""``occubench audit`` prints the fidelity table, writes the JSON, reports bad input cleanly."""

import pytest
from pydantic import TypeAdapter
from typer.testing import CliRunner, Result

from conftest import REFERENCE_MODEL_ARGS
from occubench.cli import app
from occubench.defaults import DEFAULT_TWIN_TOLERANCE
from occubench.fidelity import WRITE_PROBE, AuditReport, FidelityMetric
from occubench.twins import Feeding, TwinCall, TwinFidelity, TwinTrajectory, trajectories_json
from twin_fixtures import ENV, write_counters

runner = CliRunner()


def test_audit_prints_the_table_and_writes_the_report(tmp_path):
    out = tmp_path / "audit.json"
    result = runner.invoke(
        app,
        [
            "audit",
            "--simulator-model",
            "occubench/canned",
            "--simulator-model",
            "occubench/omitting",
            "--dataset",
            "reference",
            "--out",
            str(out),
            "--log-dir",
            str(tmp_path / "logs"),
        ],
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    canned = next(line for line in lines if "occubench/canned " in line and "1.00" in line)
    omitting = next(line for line in lines if line.startswith("│ occubench/omitting"))
    assert canned.count("1.00") == 6 and "0.57 (20/46)" in omitting
    assert (
        "Flagged environments" in result.output
        and "ref_emergency_department_triage" in result.output
    )
    assert "Rule invention not judged: no verifier model given" in result.output
    report = AuditReport.model_validate_json(out.read_text())
    assert [s.model for s in report.simulators] == ["occubench/canned", "occubench/omitting"]
    assert report.simulators[1].parts[FidelityMetric.OMISSION].failed == 20


@pytest.mark.parametrize(
    "name, message",
    [
        ("occubench/no-such-sim", "unknown scripted model occubench/no-such-sim"),
        ("nosuchprovider/model", "not recognized"),
    ],
)
def test_unknown_simulator_model_is_a_clear_error(name, message):
    result = runner.invoke(app, ["audit", "--simulator-model", name, "--dataset", "reference"])
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output


def _twin_audit(*args: str) -> Result:
    return runner.invoke(app, ["audit", "--twin", *args])


def _rows(output: str) -> list[list[str]]:
    return [
        [cell.strip() for cell in line.strip("│").split("│")]
        for line in output.splitlines()
        if line.startswith("│ ")
    ]


def _row(output: str, start: str) -> list[str]:
    return next(row for row in _rows(output) if row[0] == start)


def test_audit_twin_prints_the_step_tables_and_writes_the_records(tmp_path):
    out = tmp_path / "twin.json"
    sims = ["occubench/canned", "occubench/fabricating", "occubench/drifting"]
    result = _twin_audit(
        *(a for s in sims for a in ("--simulator-model", s)),
        "--dataset",
        "reference",
        "--free-running",
        "--out",
        str(out),
    )
    assert result.exit_code == 0, result.output
    # simulator, steps, outcome, determined, state, missing, extra, other, failures, drift
    canned = _row(result.output, "occubench/canned (fed twin)")
    assert canned[2:5] == ["1.00", "1.00", "-"] and canned[5:9] == ["0", "0", "0", "0"]
    # every one of the ten trajectories drifts at the drifting simulator's third answer
    assert _row(result.output, "occubench/drifting (free-running)")[9] == "step 2 (10/10)"
    fabricating = _row(result.output, "occubench/fabricating (fed twin)")
    assert fabricating[2] != "1.00" and fabricating[6] != "0"
    assert "Step fidelity against the twin, by tool" in result.output
    assert "by state fields the step changes" in result.output
    assert "No twin" not in result.output  # the reference suite has a twin of every env
    records = TypeAdapter(list[TwinFidelity]).validate_json(out.read_text())
    assert [(r.simulator, r.feeding) for r in records] == [
        (s, f) for s in sims for f in (Feeding.TWIN, Feeding.OWN)
    ]
    assert records[0].tolerance == DEFAULT_TWIN_TOLERANCE


def test_audit_twin_loads_a_named_folder_of_twins_and_shows_the_forgotten_write(tmp_path):
    data, twins = write_counters(tmp_path)
    result = _twin_audit(
        "--simulator-model",
        "occubench/canned",
        "--dataset",
        str(data),
        "--twins",
        str(twins),
        "--state-mode",
        "explicit",
        "--free-running",
        "--tolerance",
        "0",
    )
    assert result.exit_code == 0, result.output
    own = _row(result.output, "occubench/canned (free-running)")
    assert own[4] not in ("1.00", "-") and own[9].startswith("step 0")
    assert "within 0 relative" in result.output and "No twin" not in result.output
    by_fields = result.output.split("by state fields the step changes")[1]
    fed = [row for row in _rows(by_fields) if row[0] == "occubench/canned (fed twin)"]
    # the close changes one field: its state share is below 1 (the patch forgot it)
    assert [row[1] for row in fed] == ["0", "1"] and fed[1][2] == "1" and fed[1][5] != "1.00"
    # without --twins the folder's twin is not loaded: nothing has a twin
    plain = _twin_audit("--simulator-model", "occubench/canned", "--dataset", str(data))
    assert plain.exit_code == 2 and "no environment of the selection has a twin" in plain.output


def test_audit_twin_replays_the_tool_calls_of_logged_trajectories(tmp_path):
    logs = tmp_path / "logs"
    ran = runner.invoke(
        app,
        [
            "run",
            *REFERENCE_MODEL_ARGS,
            "--dataset",
            "reference",
            "--with-plan",
            "--tasks",
            "1001",
            "--display",
            "none",
            "--log-dir",
            str(logs),
        ],
    )
    assert ran.exit_code == 0, ran.output
    out = tmp_path / "twin.json"
    result = _twin_audit(
        "--simulator-model",
        "occubench/omitting",
        "--dataset",
        "reference",
        "--from-logs",
        str(logs),
        "--out",
        str(out),
    )
    assert result.exit_code == 0, result.output
    (record,) = TypeAdapter(list[TwinFidelity]).validate_json(out.read_text())
    logged = [s for s in record.steps if s.trajectory.startswith("log: ")]
    assert logged and {s.environment for s in logged} == {"ref_emergency_department_triage"}
    assert "sample 1001 epoch 1" in logged[0].trajectory
    assert any(s.missing for s in logged)  # the omitting simulator's flaw, on the agent's calls


def test_audit_twin_options_need_twin():
    result = runner.invoke(
        app,
        [
            "audit",
            "--simulator-model",
            "occubench/canned",
            "--dataset",
            "reference",
            "--free-running",
        ],
    )
    assert result.exit_code == 2 and "go with --twin" in result.output


def test_audit_twin_replays_trajectories_files_and_names_an_env_without_a_twin(tmp_path):
    data, twins = write_counters(tmp_path, counters=2)
    mine = [
        TwinTrajectory(
            environment=ENV,
            name=f"mine {n}",
            calls=[TwinCall(tool="close_counter", arguments={"counter_id": f"C-{n}"})],
        )
        for n in (1, 2)
    ]
    files = [tmp_path / "one.json", tmp_path / "two.json"]
    files[0].write_bytes(trajectories_json(mine[:1]))
    files[1].write_bytes(
        trajectories_json([mine[1], TwinTrajectory(environment="env_away", name="x", calls=[])])
    )
    out = tmp_path / "twin.json"
    given = [arg for f in files for arg in ("--trajectories", str(f))]
    result = _twin_audit(
        *("--simulator-model", "occubench/canned", "--dataset", str(data)),
        *("--twins", str(twins), "--out", str(out), *given),
    )
    assert result.exit_code == 0, result.output
    assert "No twin (skipped): env_away" in result.output
    (record,) = TypeAdapter(list[TwinFidelity]).validate_json(out.read_text())
    assert {"mine 1", "mine 2", WRITE_PROBE} <= {s.trajectory for s in record.steps}


def test_audit_twin_a_bad_trajectories_file_is_one_line_and_exit_2(tmp_path):
    data, twins = write_counters(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text('[{"environment": "x", "name": "n", "calls": [{"tool": "t", "argz": {}}]}]')
    result = _twin_audit(
        *("--simulator-model", "occubench/canned", "--dataset", str(data)),
        *("--twins", str(twins), "--trajectories", str(bad)),
    )
    assert result.exit_code == 2 and "Traceback" not in result.output
    flat = "".join(result.output.split())  # the console may wrap the line: compare unwrapped
    assert f"{bad}:notalistoftrajectories:".replace(" ", "") in flat and "0.calls.0.argz" in flat
