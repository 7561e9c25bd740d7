"""``occubench audit`` prints the fidelity table, writes the JSON, reports bad input cleanly."""

import pytest
from typer.testing import CliRunner

from occubench.cli import app
from occubench.fidelity import AuditReport, FidelityMetric

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
