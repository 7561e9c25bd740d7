"""``occubench synth`` end to end with the scripted models, then ``occubench run`` on its output."""

import json

import pytest
from typer.testing import CliRunner

from occubench.cli import _common, app
from occubench.dataset import load_dataset
from occubench.errors import ExitCode

runner = CliRunner()

SCENARIO = "Month-End Accrual Posting"  # the scripted generator gives it a trivial and a good env
MODELS = [
    "--generator-model",
    "occubench/scripted-generator",
    "--agent-model",
    "occubench/plan-agent",
    "--simulator-model",
    "occubench/state-simulator",
    "--verifier-model",
    "occubench/scripted-judge",
]


@pytest.fixture(autouse=True)
def quiet_wide(monkeypatch):
    """Tables on one line each; Inspect's own display off (the command would set it)."""
    monkeypatch.setenv("INSPECT_DISPLAY", "none")
    for console in (_common.console, _common.err_console):
        monkeypatch.setattr(console, "width", 200)


def cells(output: str, start: str) -> list[str]:
    """The cells of the first table row that starts with ``start``."""
    row = next(line for line in output.splitlines() if line.startswith(start))
    return [cell.strip() for cell in row.split("│")[1:-1]]


def test_synth_prints_the_funnel_and_the_dataset_runs(tmp_path):
    out = tmp_path / "out"
    prices = tmp_path / "prices.yaml"
    prices.write_text(
        "models:\n  occubench/scripted-generator: {input_per_mtok: 1.0, output_per_mtok: 2.0}\n"
    )
    args = [
        "synth",
        *MODELS,
        "--scenarios",
        SCENARIO,
        "--out",
        str(out),
        "--subtopics",
        "2",
        "--runs-with-plan",
        "1",
        "--runs-without-plan",
        "3",
        "--votes",
        "1",
        "--prices",
        str(prices),
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    # sub-topics, envs valid, generated, valid, solvable, (repaired), non-trivial, selected, level
    assert cells(result.output, f"│ {SCENARIO}")[1:] == list("226660213")
    assert "trivial: 3/3 runs without the plan passed" in result.output
    assert "lowest autonomous rate in (0, 1) (L2 2/3, L3 1/3)" in result.output
    dataset = out / "dataset"
    assert [t.difficulty_level for t in load_dataset(dataset).tasks] == [3]
    manifest = json.loads((dataset / "manifest.json").read_text())
    assert manifest["models"]["generator"] == "occubench/scripted-generator"
    assert manifest["settings"]["runs_without_plan"] == 3
    assert manifest["cost"]["generator"] > 0 and manifest["cost"]["agent"] is None  # unpriced

    again = runner.invoke(app, args)  # resumes: everything is read back
    assert again.exit_code == 0 and again.output.count("│ total") == 1

    run = runner.invoke(
        app,
        [
            "run",
            "--dataset",
            str(dataset),
            "--agent-model",
            "occubench/plan-agent",
            "--simulator-model",
            "occubench/state-simulator",
            "--verifier-model",
            "occubench/scripted-judge",
            "--epochs",
            "3",
            "--log-dir",
            str(tmp_path / "logs"),
            "--display",
            "none",
        ],
    )
    assert run.exit_code == 0, run.output
    # industry, scored, passed: the plan-agent solves the level-3 task alone in 1 run of 3
    assert cells(run.output, "│ all")[:3] == ["all", "3", "1"]


def test_unknown_scenario_is_a_clean_error(tmp_path):
    result = runner.invoke(
        app, ["synth", *MODELS, "--scenarios", "Dragon Taming", "--out", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert "unknown scenario name" in result.output and "Dragon Taming" in result.output
    assert "Traceback" not in result.output
    assert not any(tmp_path.iterdir())


def test_a_synthesis_that_made_no_task_says_so_and_exits_5(tmp_path):
    # no verifier: the state simulator judges the runs and gives no verdict, so no task is
    # solvable (the offline pipeline as the synthesis page once showed it)
    judged_by_simulator = MODELS[: MODELS.index("--verifier-model")]
    args = ["synth", *judged_by_simulator, "--scenarios", SCENARIO, "--out", str(tmp_path)]
    args += ["--subtopics", "1", "--runs-with-plan", "1", "--runs-without-plan", "1"]
    result = runner.invoke(app, args + ["--votes", "1"])
    assert result.exit_code == ExitCode.NOTHING_MADE == 5, result.output
    assert "(0 tasks)" in result.output
    said = [line for line in result.output.splitlines() if "Nothing synthesized" in line]
    assert len(said) == 1 and "without --verifier-model the simulator judged" in said[0]
