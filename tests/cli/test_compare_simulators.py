"""``occubench compare-simulators`` on real runs of the reference agents under two simulators."""

import pytest
from typer.testing import CliRunner

from occubench.cli import app
from occubench.fidelity import SimulatorComparison

runner = CliRunner()


@pytest.fixture
def logs(simulator_logs):
    """Runs under canned and inconsistent (``simulator_logs``): under canned all three agents
    complete every task (no spread); under inconsistent careful fails (the simulator decides
    the rank)."""
    return [str(simulator_logs / name) for name in ("canned", "inconsistent")]


def test_compare_simulators_shows_agreement_compression_and_flips(logs, tmp_path):
    out = tmp_path / "comparison.json"
    result = runner.invoke(app, ["compare-simulators", *logs, "--out", str(out)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    careful = next(line for line in lines if line.startswith("│ occubench/careful"))
    assert [cell.strip() for cell in careful.split("│")[2:4]] == ["100", "0"]
    spread = next(line for line in lines if "spread (max-min)" in line)
    assert [cell.strip() for cell in spread.split("│")[2:4]] == ["0.0", "100.0"]
    assert "no pair flips" in result.output  # ties under canned: nothing to reverse
    comparison = SimulatorComparison.model_validate_json(out.read_text())
    [agreement] = comparison.agreements
    assert agreement.n_pairs == 3 and agreement.agreeing_pairs == 1


def test_runs_under_one_simulator_are_a_clear_error(simulator_logs):
    result = runner.invoke(app, ["compare-simulators", str(simulator_logs / "canned")])
    assert result.exit_code == 2 and "two or more simulators" in result.output
    missing = runner.invoke(app, ["compare-simulators", str(simulator_logs / "nowhere")])
    assert missing.exit_code == 2 and "no log file or folder" in missing.output


def test_verdicts_against_a_reference_simulator(logs, tmp_path):
    out = tmp_path / "comparison.json"
    args = ["compare-simulators", *logs, "--reference", "occubench/canned", "--out", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "ranking agreement with the reference occubench/canned" in result.output
    row = next(
        line
        for line in result.output.splitlines()
        if line.startswith("│ occubench/careful") and "occubench/inconsistent" in line
    )
    cells = [cell.strip() for cell in row.split("│")[1:-1]]
    assert cells[2:] == ["100", "0", "-100 [-100, -100]", "0% (0/2)", "2"]
    assert "step 2 get_patient_vitals (answer)" in result.output
    comparison = SimulatorComparison.model_validate_json(out.read_text())
    assert comparison.reference == "occubench/canned" and len(comparison.verdicts) == 3


def test_without_the_twin_in_the_logs(logs):
    plain = runner.invoke(app, ["compare-simulators", *logs])
    assert plain.exit_code == 0 and "No run under occubench/twin" in plain.output
    assert "verdicts against the reference" not in plain.output
    named = runner.invoke(app, ["compare-simulators", *logs, "--reference", "occubench/twin"])
    assert named.exit_code == 2, named.output
    assert "no run under the reference simulator occubench/twin" in named.output
    assert "Traceback" not in named.output


def test_the_default_reference_is_taken_when_the_logs_hold_it(logs, monkeypatch):
    from occubench.cli import compare_simulators as command

    monkeypatch.setattr(command, "DEFAULT_REFERENCE_SIMULATOR", "occubench/canned")
    result = runner.invoke(app, ["compare-simulators", *logs])
    assert result.exit_code == 0, result.output
    assert "verdicts against the reference occubench/canned" in result.output
