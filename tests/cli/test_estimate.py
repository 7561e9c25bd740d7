"""occubench estimate: run's options, the estimate table, the comparison with a run's logs."""

import inspect
import json

from typer.testing import CliRunner

from occubench.cli import _common, app
from occubench.cli import estimate as estimate_command
from occubench.cli import run as run_command

runner = CliRunner()
MODELS = ["--agent-model", "occubench/trusting", "--simulator-model", "occubench/canned"]


def test_estimate_takes_runs_options_of_what_a_run_computes():
    ours = inspect.signature(estimate_command.estimate).parameters
    theirs = inspect.signature(run_command.run, eval_str=True).parameters
    for name in estimate_command.RUN_OPTIONS:
        assert ours[name].default is theirs[name].default, name  # the very same option
    assert {"agent_retries", "calls_per_step", "compare", "out"} <= set(ours)


def test_estimate_prints_roles_and_compares_with_a_run(tmp_path, monkeypatch):
    for console in (_common.console, _common.err_console):
        monkeypatch.setattr(console, "width", 220)
    common = [*MODELS, "--protocol", "occubench", "--dataset", "reference", "--with-plan"]
    common += ["--env-mode", "E3"]
    ran = runner.invoke(
        app,
        [
            "run",
            *common,
            "--sim-checks",
            "--sim-fallback-model",
            "occubench/canned",
            "--display",
            "none",
            "--workers",
            "1",
            "--log-dir",
            str(tmp_path / "run"),
        ],
    )
    assert ran.exit_code == 0, ran.output
    assert "Estimate before the run: 10 tasks" in ran.output
    assert "Online simulator checks" in ran.output and "Tokens and cost by role" in ran.output
    out = tmp_path / "estimate.json"
    result = runner.invoke(
        app, ["estimate", *common, "--compare", str(tmp_path / "run"), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "Estimate against the tokens the logs measured" in result.output
    saved = json.loads(out.read_text())
    assert saved["samples"] == 10 and {r["role"] for r in saved["roles"]} == {"agent", "simulator"}
    bad = runner.invoke(app, ["estimate", *MODELS, "--dataset", str(tmp_path / "none")])
    assert bad.exit_code == 2 and "Traceback" not in bad.output


def test_an_agent_program_needs_no_agent_model_and_its_model_is_not_counted():
    base = ["estimate", "--dataset", "reference", "--tasks", "1001"]
    base += ["--simulator-model", "occubench/canned"]
    result = runner.invoke(app, [*base, "--agent-command", "python agent.py"])
    assert result.exit_code == 0, result.output
    assert "Not counted: the agent program's own model calls" in result.output
    missing = runner.invoke(app, base)
    assert missing.exit_code == 2 and "--agent-model (or --model) is required" in missing.output


def test_estimate_takes_the_user_model_and_counts_its_calls(tmp_path):
    out = tmp_path / "estimate.json"
    args = [*MODELS, "--dataset", "conversational", "--with-plan", "--task-ids", "2001"]
    args += ["--user-model", "occubench/user-cooperative", "--out", str(out)]
    result = runner.invoke(app, ["estimate", *args])
    assert result.exit_code == 0, result.output
    written = json.loads(out.read_text())
    (user,) = [r for r in written["roles"] if r["role"] == "user"]
    assert user["model"] == "occubench/user-cooperative"
    assert user["tokens"]["calls"] == written["per_task"][0]["user_turns"] > 0
