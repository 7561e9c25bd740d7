"""Only bad input is reported as bad input: a bug keeps its traceback."""

import subprocess
import sys

import pytest
from typer.testing import CliRunner

from occubench.cli import app
from occubench.errors import ExitCode, UsageError

runner = CliRunner()


def fails_with(error: Exception):
    def read_runs(paths):
        raise error

    return read_runs


def reading_fails(monkeypatch, error: Exception) -> None:
    """The report's reading of the logs raises ``error`` (where the report room calls it)."""
    import occubench.report._runs

    monkeypatch.setattr(occubench.report._runs, "read_runs", fails_with(error))


def test_a_value_error_from_a_bug_is_not_bad_input(monkeypatch, tmp_path):
    reading_fails(monkeypatch, ValueError("a bug: 1/0"))
    result = runner.invoke(app, ["report", str(tmp_path)])
    assert result.exit_code != ExitCode.BAD_INPUT
    assert isinstance(result.exception, ValueError) and "a bug" in str(result.exception)
    assert result.exc_info is not None and result.exc_info[2] is not None  # its traceback
    assert "Error" not in result.output


def test_a_usage_error_is_bad_input_in_one_line(monkeypatch, tmp_path):
    reading_fails(monkeypatch, UsageError("no such run"))
    result = runner.invoke(app, ["report", str(tmp_path)])
    assert result.exit_code == ExitCode.BAD_INPUT
    assert isinstance(result.exception, SystemExit)
    assert result.output.strip() == "Error: no such run"


BUGGY = """
import occubench.results as results
def read_runs(paths):
    raise ValueError("a bug: 1/0")
results.read_runs = read_runs  # the command imports it when it runs
from occubench.__main__ import main
main()
"""


@pytest.mark.parametrize(("error", "code"), [("ValueError", 1), ("UsageError", 2)])
def test_the_command_prints_a_bugs_traceback_and_bad_inputs_line(tmp_path, error, code):
    script = BUGGY.replace("ValueError(", f"{error}(")
    script = "from occubench.errors import UsageError\n" + script
    done = subprocess.run(
        [sys.executable, "-c", script, "report", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == code, done.stderr
    if code == ExitCode.BAD_INPUT:
        assert done.stderr.strip() == "Error: a bug: 1/0" and "Traceback" not in done.stderr
    else:
        assert "Traceback (most recent call last)" in done.stderr
        assert done.stderr.strip().endswith("ValueError: a bug: 1/0")


@pytest.mark.parametrize(("name", "text"), [("x.eval", "not a zip"), ("y.json", '{"version": 2')])
def test_a_log_that_cannot_be_read_is_bad_input_naming_it(tmp_path, name, text):
    log = tmp_path / name
    log.write_text(text)
    result = runner.invoke(app, ["report", str(log)])
    assert result.exit_code == ExitCode.BAD_INPUT
    assert result.output.startswith(f"Error: {log} is not a readable log")


def test_a_bug_after_the_log_is_read_is_not_bad_input(monkeypatch, tmp_path):
    import occubench.results._runs
    from conftest import run_task

    log = run_task(tmp_path / "logs", task_ids="11")

    def broken_row(run, sample):
        raise ValueError("a bug in making a row")

    monkeypatch.setattr(occubench.results._runs, "sample_row", broken_row)
    result = runner.invoke(app, ["report", log.location])
    assert result.exit_code != ExitCode.BAD_INPUT
    assert isinstance(result.exception, ValueError) and "a bug" in str(result.exception)
