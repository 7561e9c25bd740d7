import json

from typer.testing import CliRunner

from conftest import SCRIPTED_MODEL_ARGS
from occubench.cli import app
from occubench.dataset import CONFIGS_DIR, TASKS_FILE

runner = CliRunner()


MODELS = [
    *SCRIPTED_MODEL_ARGS,
    "--display",
    "none",
]


def test_run_prints_per_industry_table_and_resumes(release_dir, tmp_path):
    args = ["run", *MODELS, "--dataset", str(release_dir), "--log-dir", str(tmp_path)]
    result = runner.invoke(app, args, terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "Completion rate by industry" in result.output
    assert "Healthcare & Life Sciences" in result.output
    last = [line for line in result.output.splitlines() if "all" in line][-1]
    assert "10 " in last and "100.0" in last
    logs = sorted(tmp_path.rglob("*.eval"))
    assert len(logs) >= 1
    again = runner.invoke(app, args, terminal_width=200)
    assert again.exit_code == 0 and sorted(tmp_path.rglob("*.eval")) == logs  # nothing re-run


def test_bad_dataset_is_one_clear_report(release_copy):
    tasks = release_copy / TASKS_FILE
    lines = tasks.read_text().splitlines()
    env = json.loads(lines[0])["env_name"]
    lines[3] = "{not json"
    record = json.loads(lines[4])
    del record["agent_instruction"]
    lines[4] = json.dumps(record)
    tasks.write_text("\n".join(lines) + "\n")
    config = release_copy / CONFIGS_DIR / f"{env}.json"
    data = json.loads(config.read_text())
    data["action_set_definitions"].append(dict(data["action_set_definitions"][0]))
    config.write_text(json.dumps(data, indent=2))

    result = runner.invoke(app, ["run", *MODELS, "--dataset", str(release_copy)])
    assert result.exit_code == 2
    out = result.output
    assert "3 problem(s)" in out and "Traceback" not in out
    assert f"{TASKS_FILE}:4" in out and "bad JSON" in out
    assert f"{TASKS_FILE}:5 [agent_instruction]" in out
    assert "duplicate tool name" in out and config.name in out


def test_unknown_env_mode_is_a_clear_error(release_dir):
    result = runner.invoke(app, ["run", *MODELS, "--dataset", str(release_dir), "--env-mode", "E9"])
    assert result.exit_code == 2 and "E9" in result.output and "Traceback" not in result.output


def test_list(release_dir):
    result = runner.invoke(app, ["list", "--dataset", str(release_dir)], terminal_width=200)
    assert result.exit_code == 0 and "Science & Research" in result.output
    assert "│ total" in result.output and "│      10 │" in result.output  # the totals row
    assert (
        "10 tasks in 10 scenarios; the pool lists 12 scenarios, 2 of them without a task: "
        "Archive Intake, Ledger Close." in " ".join(result.output.split())
    )
    scen = runner.invoke(
        app, ["list", "--dataset", str(release_dir), "--scenarios"], terminal_width=200
    )
    assert "Emergency Department Triage" in scen.output


def test_eval_options_are_run_options_of_the_same_name_and_default():
    import inspect

    from occubench.cli.run import run
    from occubench.config import EvalOptions

    parameters = inspect.signature(run).parameters
    for name, field in EvalOptions.model_fields.items():
        assert name in parameters, f"occubench run has no --{name.replace('_', '-')}"
        assert parameters[name].default.default == field.default, name
