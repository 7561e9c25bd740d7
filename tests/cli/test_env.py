"""``occubench env new|check|try`` from an empty folder to a run on the new profession."""

from __future__ import annotations

from typer.testing import CliRunner

from authoring.permit_env import ENV, fill, plant_mistakes
from occubench.cli import app
from occubench.results import log_files, read_runs

runner = CliRunner()


def test_from_an_empty_folder_to_a_run_on_a_new_profession(tmp_path):
    root = tmp_path / "permits"
    made = runner.invoke(
        app,
        [
            "env",
            "new",
            ENV,
            "--industry",
            "Public Administration",
            "--domain",
            "Permits",
            "--dir",
            str(root),
        ],
    )
    assert made.exit_code == 0, made.output
    assert f"New env {ENV} with task 1 (Wastewater Permit Review)" in made.output

    skeleton = runner.invoke(app, ["env", "check", str(root)])
    assert skeleton.exit_code == 2 and "9 problem(s), 0 warning(s)." in skeleton.output
    assert "still a placeholder (TODO)" in skeleton.output

    fill(root)
    plant_mistakes(root)
    planted = runner.invoke(app, ["env", "check", str(root)])
    assert planted.exit_code == 2 and "3 problem(s)" in planted.output
    out = planted.output
    assert "eval_benchmark_solvable.jsonl:1 [checks[0].tool]: task 1: names tool" in out
    assert "[action_set_definitions[1].parameters.properties.month.type]" in out
    assert "[task_initial_state.limits]: field 'limits' has no entry in state_description" in out

    fill(root)
    clean = runner.invoke(app, ["env", "check", str(root)])
    assert clean.exit_code == 0 and "0 problem(s), 0 warning(s)." in clean.output
    assert f"│ {ENV} │     3 │     1 │" in clean.output

    tried = runner.invoke(
        app,
        [
            "env",
            "try",
            str(root),
            "--env",
            ENV,
            "--tool",
            "get_effluent_limits",
            "--args",
            '{"permit_id": "WP-2207", "parameter": "TSS"}',
            "--simulator-model",
            "occubench/example-simulator",
        ],
    )
    assert tried.exit_code == 0, tried.output
    out = tried.output
    assert "Simulator request 1 of 1 (occubench/example-simulator, protocol paper)" in out
    assert "--- system ---" in out and "You simulate the permit and monitoring records" in out
    assert '<agent_action>\n{"name": "get_effluent_limits", "arguments":' in out
    assert '"monthly_avg_mg_l": 30.0' in out

    refused = runner.invoke(
        app,
        [
            "env",
            "try",
            str(root),
            "--env",
            ENV,
            "--tool",
            "get_effluent_limits",
            "--args",
            '{"permit_id": "WP-2207", "parameter": "pH"}',
            "--protocol",
            "occubench",
            "--simulator-model",
            "occubench/example-simulator",
        ],
    )
    assert refused.exit_code == 2 and "'pH' is not one of" in refused.output

    ran = runner.invoke(
        app,
        [
            "run",
            "--dataset",
            str(root),
            "--agent-model",
            "occubench/schema-agent",
            "--simulator-model",
            "occubench/example-simulator",
            "--verifier-model",
            "occubench/scripted-judge",
            "--log-dir",
            str(tmp_path / "logs"),
            "--display",
            "none",
            "--no-preflight",
        ],
    )
    assert ran.exit_code == 0, ran.output
    (row,) = read_runs(log_files([str(tmp_path / "logs")]))
    assert row.env_name == ENV and row.industry == "Public Administration"
    assert row.tool_calls == 3 and row.checks_total == 2
