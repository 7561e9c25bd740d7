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


def test_a_replay_does_not_preflight_the_simulator_it_never_asks(tmp_path, monkeypatch):
    """A world recorded through a local endpoint replays once the endpoint is gone."""
    from occubench.testing._openai_server import ScriptedOpenAIServer

    simulator = "openai-api/local/canned"
    world = tmp_path / "world"
    monkeypatch.setenv("LOCAL_API_KEY", "sk-replay-0123456789")

    def run(mode, logs):
        args = [
            "run",
            "--agent-model",
            "occubench/careful",
            "--simulator-model",
            simulator,
            "--verifier-model",
            "occubench/scripted-judge",
            "--dataset",
            "reference",
            "--protocol",
            "occubench",
            "--with-plan",
            "--tasks",
            "1001",
            "--world",
            str(world),
            "--world-mode",
            mode,
            "--display",
            "none",
            "--log-dir",
            str(tmp_path / logs),
        ]
        return runner.invoke(app, args, terminal_width=200)

    with ScriptedOpenAIServer() as server:
        monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
        recorded = run("record", "record")
        assert recorded.exit_code == 0, recorded.output
        assert server.stats.snapshot()["requests"]["canned"] > 1  # the preflight, the calls
    # the endpoint is gone: the simulator's test request would fail
    replayed = run("replay", "replay")
    assert replayed.exit_code == 0, replayed.output
    assert "Preflight failed" not in replayed.output
    again = run("record", "again")
    assert again.exit_code == 2
    assert f"Preflight failed: simulator model {simulator}" in again.output
