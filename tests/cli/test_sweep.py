import json
import shutil

import yaml
from inspect_ai.log import list_eval_logs, read_eval_log
from typer.testing import CliRunner

from conftest import RELEASE_DIR
from occubench.agent import episode_in
from occubench.cli import app
from occubench.dataset import TASKS_FILE, reference_suite_dir
from occubench.defaults import PREFLIGHT_TOOL_NAME
from occubench.roles import Role
from occubench.scale._preflight import PREFLIGHT_PROMPT
from occubench.testing import WIRE_CASES, WireName

runner = CliRunner()


def test_dry_run_prints_the_runs_and_their_count(monkeypatch):
    monkeypatch.delenv("OCCUBENCH_DATASET", raising=False)
    result = runner.invoke(app, ["sweep", "paper-*", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "79 runs (paper-cross-simulator 24, paper-fault-count 8" in result.output
    assert "Shards are dealt once the dataset is known" in result.output
    named = runner.invoke(
        app,
        [
            "sweep",
            "paper-robustness",
            "--dry-run",
            "--agents",
            "openai/a",
            "--simulators",
            "google/s",
            "--dataset",
            str(RELEASE_DIR),
        ],
    )
    assert named.exit_code == 0, named.output
    assert "4 runs" in named.output and "4 shards" in named.output
    assert "openai/a" in named.output and "anthropic/" not in named.output


def test_placeholders_must_be_replaced_before_running(tmp_path):
    template = tmp_path / "template.yaml"
    template.write_text(
        yaml.safe_dump(
            {"name": "t", "agents": ["placeholder/agent-01"], "simulators": ["google/s"]}
        )
    )
    result = runner.invoke(app, ["sweep", str(template), "--dataset", str(RELEASE_DIR)])
    assert result.exit_code == 2
    assert "placeholder/agent-01" in result.output and "--agents" in result.output


def test_sweep_runs_every_run_and_reports(tmp_path):
    sweep = {
        "name": "tiny",
        "dataset": "reference",
        "with_plan": True,
        "agents": ["occubench/careful"],
        "simulators": ["occubench/canned"],
        "grid": {"env_mode": ["E0", "E3"]},
        "log_dir": str(tmp_path / "logs"),
    }
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(sweep))
    result = runner.invoke(app, ["sweep", str(path), "--workers", "2", "--display", "none"])
    assert result.exit_code == 0, result.output
    assert "2 runs, 2 shards" in result.output
    assert "Leaderboard" in result.output and "occubench/careful" in result.output
    runs = sorted(p.name for p in (tmp_path / "logs").iterdir())
    assert [name.rsplit("-", 1)[0] for name in runs] == [
        "occubench_careful__occubench_canned__E0",
        "occubench_careful__occubench_canned__E3-fc2-fd2-s0",
    ]
    assert all((tmp_path / "logs" / name / "shard-1-of-1").is_dir() for name in runs)


def test_sweep_sets_explicit_state_and_a_fault_family(tmp_path):
    """Every run setting comes from the sweep file: explicit state, a family, its latency."""
    data = tmp_path / "data"
    shutil.copytree(reference_suite_dir(), data)
    tasks = data / TASKS_FILE
    records = [json.loads(line) for line in tasks.read_text().splitlines()]
    records[0]["checks"].append(
        {"kind": "state_equals", "path": "/patient_vitals/heart_rate", "value": 128}
    )
    tasks.write_text("".join(json.dumps(r) + "\n" for r in records))
    sweep = {
        "name": "stateful",
        "dataset": str(data),
        "task_ids": [records[0]["task_id"]],
        "with_plan": True,
        "state_mode": "explicit",
        "faults": ["latency"],
        "fault_latency": 0.001,
        "agents": ["occubench/careful"],
        "simulators": ["occubench/canned"],
        "log_dir": str(tmp_path / "logs"),
    }
    path = tmp_path / "stateful.yaml"
    path.write_text(yaml.safe_dump(sweep))
    result = runner.invoke(app, ["sweep", str(path), "--workers", "1", "--display", "none"])
    assert result.exit_code == 0, result.output
    (log,) = list_eval_logs(str(tmp_path / "logs"), recursive=True)
    sample = read_eval_log(log.name).samples[0]
    episode = episode_in(sample.store)
    assert episode.state is not None and episode.state["patient_vitals"]["heart_rate"] == 128
    assert {f.family for f in episode.fault_log} == {"latency"}
    checks = sample.scores["occubench_scorer"].metadata["checks"]
    assert [c["passed"] for c in checks if c["check"]["kind"] == "state_equals"] == [True]


def test_a_sweep_file_over_a_bound_is_one_line_and_exit_2(tmp_path):
    bomb = tmp_path / "bomb.yaml"  # under 1 kB, 10**10 values once its aliases are expanded
    levels = [f"  l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]\n" for i in range(1, 10)]
    bomb.write_text(
        "name: bomb\nagents: [m/a]\nsimulators: [m/s]\nagent_args:\n"
        "  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(levels)
    )
    huge = tmp_path / "huge.yaml"  # under 2 kB, 30,000,000 runs
    axes = {"seed": 30, "fault_count": 10, "fault_duration": 10, "max_turns": 100, "votes": 100}
    grid = {"env_mode": ["E3"], **{axis: list(range(1, n + 1)) for axis, n in axes.items()}}
    huge.write_text(
        yaml.safe_dump({"name": "huge", "agents": ["m/a"], "simulators": ["m/s"], "grid": grid})
    )
    for path, message in (
        (bomb, f"Error: {bomb}, line 9 (agent_args.l4[0]): more than 20000 YAML values"),
        (huge, "Error: Value error, grid: sweep huge is 30,000,000 runs (agents 1 x simulators"),
    ):
        result = runner.invoke(app, ["sweep", str(path), "--dry-run"])
        assert result.exit_code == 2, result.output
        assert isinstance(result.exception, SystemExit)  # a message, no traceback
        assert " ".join(result.output.split()).startswith(message), result.output


def test_the_preflight_tries_each_role_as_the_sweeps_runs_call_it(tmp_path, monkeypatch):
    """As ``occubench run``'s: each agent setting and role limit on the wire, in two turns.

    On OpenAI's Responses API (its strict local server), a sweep of one agent model at two
    reasoning efforts under the paper protocol (its token limits: 12288 for the agent and
    the simulator, 4096 for the verifier).
    """
    case = next(c for c in WIRE_CASES if c.wire is WireName.OPENAI_RESPONSES)
    agent, simulator, verifier = (
        case.models[r] for r in (Role.AGENT, Role.SIMULATOR, Role.VERIFIER)
    )
    sweep = {
        "name": "efforts",
        "dataset": str(RELEASE_DIR),
        "task_ids": [11],
        "protocol": "paper",
        "agents": [{"model": agent, "generate": {"reasoning_effort": e}} for e in ("low", "high")],
        "simulators": [simulator],
        "verifiers": [verifier],
        "log_dir": str(tmp_path / "logs"),
    }
    path = tmp_path / "efforts.yaml"
    path.write_text(yaml.safe_dump(sweep))
    with case.server(record=True) as server:
        for name, value in case.environment(server).items():
            monkeypatch.setenv(name, value)
        result = runner.invoke(app, ["sweep", str(path), "--workers", "1", "--display", "none"])
        requests = [r.body for r in server.requests]
    assert result.exit_code == 0, result.output
    assert server.stats.refused == []

    def turns(body: dict) -> list[str]:
        return [item["type"] for item in body["input"]]

    def asks(body: dict, prompt: str) -> bool:
        return prompt in json.dumps(body["input"][0])

    tried = [  # the agent's preflight requests: those offered the preflight's tool
        (b["model"], b["reasoning"]["effort"], b["max_output_tokens"], turns(b))
        for b in requests
        if any(tool.get("name") == PREFLIGHT_TOOL_NAME for tool in b.get("tools", []))
    ]
    served = agent.split("/")[-1]
    assert sorted((m, e, t) for m, e, t, _ in tried) == [
        (served, "high", 12288), (served, "high", 12288),
        (served, "low", 12288), (served, "low", 12288),
    ]  # fmt: skip
    for effort in ("low", "high"):
        first, second = [kinds for _, e, _, kinds in tried if e == effort]
        assert first == ["message"] and "function_call_output" in second
    others = sorted(  # the other roles' preflight requests: the preflight's prompt
        (b["model"], b.get("max_output_tokens"), len(b["input"]) > 1)
        for b in requests
        if asks(b, PREFLIGHT_PROMPT)
    )  # each model once (the two runs call it alike), in two turns
    sim, judge = simulator.split("/")[-1], verifier.split("/")[-1]
    assert others == [
        (sim, 12288, False), (sim, 12288, True), (judge, 4096, False), (judge, 4096, True)
    ]  # fmt: skip
