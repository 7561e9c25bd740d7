import json

import pytest
from typer.testing import CliRunner

from conftest import SCRIPTED_MODEL_ARGS
from occubench.cli import app
from occubench.dataset import CONFIGS_DIR, TASKS_FILE
from occubench.errors import ExitCode

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


def test_reasoning_tokens_per_role():
    from occubench.cli.run import generation_settings
    from occubench.roles import Role

    settings, _ = generation_settings(
        {"reasoning_tokens": ["4096", "simulator=2048"], "max_tokens": None}
    )
    assert {role: c.model_dump(exclude_unset=True) for role, c in settings.items()} == {
        Role.AGENT: {"reasoning_tokens": 4096},
        Role.SIMULATOR: {"reasoning_tokens": 2048},
    }


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (["0"], "agent: reasoning_tokens must be 1 or more, not 0"),
        (["-5"], "--reasoning-tokens '-5': not a whole number"),
        (["lots"], "--reasoning-tokens 'lots': not a whole number"),
        (["judge=5"], "--reasoning-tokens 'judge=5': unknown role 'judge'"),
        (["1024", "2048"], "--reasoning-tokens given twice for the agent"),
    ],
)
def test_bad_reasoning_tokens_are_one_line(release_dir, tmp_path, values, message):
    extra = [arg for value in values for arg in ("--reasoning-tokens", value)]
    args = ["run", *MODELS, "--dataset", str(release_dir), "--log-dir", str(tmp_path), *extra]
    result = runner.invoke(app, args, terminal_width=200)
    assert result.exit_code == 2, result.output
    folded = " ".join(result.output.split())  # one message (folded at the console's width)
    assert folded.startswith(f"Error: {message}") and folded.count("Error:") == 1
    assert list(tmp_path.iterdir()) == []  # nothing started


def test_reasoning_settings_reach_the_log_and_its_rows(release_dir, tmp_path):
    from inspect_ai.log import read_eval_log

    from occubench.results import read_runs

    settings = ["--reasoning-tokens", "4096", "--reasoning-tokens", "simulator=2048"]
    args = ["run", *MODELS, "--dataset", str(release_dir), "--log-dir", str(tmp_path), "--limit"]
    result = runner.invoke(app, [*args, "1", *settings], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "Note:" not in result.output  # the scripted models' provider: no request builder
    (log,) = tmp_path.rglob("*.eval")
    header = read_eval_log(str(log), header_only=True).eval
    assert header.model_generate_config.reasoning_tokens == 4096
    roles = header.model_roles or {}
    simulator = roles["simulator"]
    assert not isinstance(simulator, list) and simulator.config.reasoning_tokens == 2048
    assert [row.reasoning_tokens for row in read_runs([tmp_path], cache=False)] == [4096]


def test_clamp_notes_are_printed_once_and_say_what_the_wire_carries(
    release_dir, tmp_path, monkeypatch
):
    from inspect_ai.log import read_eval_log
    from inspect_ai.model._providers.deepseek import DEEPSEEK_EFFORT_MAP

    from occubench.testing._openai_server import ScriptedOpenAIServer

    sent = DEEPSEEK_EFFORT_MAP["xhigh"]
    with ScriptedOpenAIServer(record=True) as server:
        monkeypatch.setenv("DEEPSEEK_BASE_URL", server.base_url)
        monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-clamp-test-0123456789")
        args = [
            "run",
            "--agent-model",
            "deepseek/schema-agent",
            *MODELS[2:],
            "--dataset",
            str(release_dir),
            "--log-dir",
            str(tmp_path),
            "--limit",
            "1",
            "--reasoning-effort",
            "xhigh",
            "--reasoning-tokens",
            "4096",
            "--no-preflight",  # every request is the agent's
        ]
        result = runner.invoke(app, args, terminal_width=200)
        bodies = server.recorded
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    for note in (
        f"Note: agent deepseek/schema-agent: reasoning effort xhigh sent as {sent} "
        "(Inspect's deepseek provider maps it)",
        "Note: agent deepseek/schema-agent: reasoning tokens 4096 not sent "
        "(Inspect's deepseek provider drops it)",
    ):
        assert output.count(note) == 1, result.output
    assert bodies and {b.get("reasoning_effort") for b in bodies} == {sent}
    assert not any("4096" in json.dumps(b) for b in bodies)
    (log,) = tmp_path.rglob("*.eval")
    asked = read_eval_log(str(log), header_only=True).eval.model_generate_config
    assert (asked.reasoning_effort, asked.reasoning_tokens) == ("xhigh", 4096)  # as asked


def test_a_thinking_budget_anthropic_refuses_stops_the_run_before_it_starts(release_dir, tmp_path):
    args = [
        "run",
        "--agent-model",
        "anthropic/claude-sonnet-4-5",
        *MODELS[2:],
        "--dataset",
        str(release_dir),
        "--log-dir",
        str(tmp_path),
        "--no-preflight",
        "--reasoning-tokens",
        "512",
    ]
    result = runner.invoke(app, args, terminal_width=200)
    assert result.exit_code == 2, result.output
    message = " ".join(result.output.split())  # one message (folded at the console's width)
    assert message.startswith("Error: agent anthropic/claude-sonnet-4-5: a thinking budget of 512")
    assert message.count("Error:") == 1 and "less than max_tokens" in message
    assert list(tmp_path.iterdir()) == []


REFERENCE = ["--dataset", "reference", "--simulator-model", "occubench/canned", "--limit", "2"]


def said(output: str, start: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith(start)]


@pytest.mark.parametrize(
    ("settings", "cause"),
    [
        (["--env-mode", "E1"], "occubench/canned follows no fault rule"),  # the paper protocol
        (["--env-mode", "E1", "--protocol", "occubench"], "the agent made 0 tool call(s)"),
    ],
)
def test_a_fault_run_with_no_fault_placed_says_so_and_exits_5(tmp_path, settings, cause):
    # the scripted agent without --with-plan makes no call; under the prompt engine the
    # scripted simulator places no fault whatever the agent does
    plan = ["--with-plan"] if "occubench" not in settings else []
    args = ["run", *REFERENCE, "--agent-model", "occubench/careful", *plan, *settings]
    result = runner.invoke(app, [*args, "--log-dir", str(tmp_path), "--display", "none"])
    assert result.exit_code == ExitCode.NOTHING_MADE, result.output
    lines = said(result.output, "No fault was placed in the 2 sample(s) run in E1")
    assert len(lines) == 1 and cause in lines[0]


def test_a_fault_run_whose_faults_landed_exits_0(tmp_path):
    args = ["run", *REFERENCE, "--agent-model", "occubench/careful", "--with-plan"]
    args += ["--env-mode", "E1", "--protocol", "occubench", "--log-dir", str(tmp_path)]
    result = runner.invoke(app, [*args, "--display", "none"])
    assert result.exit_code == 0, result.output
    assert not said(result.output, "No fault was placed")


def test_a_world_run_that_recorded_nothing_says_so_and_exits_5(tmp_path):
    world = tmp_path / "world"
    args = ["run", *REFERENCE, "--agent-model", "occubench/careful", "--world", str(world)]
    result = runner.invoke(app, [*args, "--log-dir", str(tmp_path / "logs"), "--display", "none"])
    assert result.exit_code == ExitCode.NOTHING_MADE, result.output
    lines = said(result.output, "Nothing was recorded in or read from the world")
    assert len(lines) == 1 and "2 sample(s) made no tool call" in lines[0]
    recorded = runner.invoke(app, [*args, "--with-plan", "--log-dir", str(tmp_path / "plan")])
    assert recorded.exit_code == 0, recorded.output


def test_the_runs_last_lines_each_start_on_their_own_line(tmp_path):
    # Inspect's rich display, written to a pipe, leaves its last line open; the runner ends it
    args = ["run", *REFERENCE, "--agent-model", "occubench/careful", "--with-plan"]
    result = runner.invoke(app, [*args, "--log-dir", str(tmp_path), "--display", "rich"])
    assert result.exit_code == 0, result.output
    completed = [line for line in result.output.splitlines() if "Completed all tasks" in line]
    assert len(completed) == 1 and completed[0].startswith("Completed all tasks"), completed
