"""The verifiers environment: loaded as verifiers loads it, evaluated by ``vf-eval``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from pydantic import ValidationError

from occubench.testing import ScriptedOpenAIServer

vf = pytest.importorskip("verifiers", reason="the verifiers extra is not installed")

SETTINGS = {
    "task_ids": [1002, 1005],
    "with_plan": True,
    "protocol": "occubench",
    "env_mode": "E1",
    "fault_count": 2,
    "fault_duration": 2,
    "seed": 7,
    "simulator": "occubench/canned",
    "verifier": "occubench/scripted-judge",
    "votes": 3,
    "eval_fraction": 1.0,
}
"""Two tasks, both evaluated (no training set): what ``vf-eval`` of chosen tasks passes."""
KEY = "vf-eval-local-key-0123456789"


def test_verifiers_loads_the_tasks_with_their_prompts_and_tools():
    from occubench.training import EpisodeSource

    env = vf.load_environment("occubench.training", **SETTINGS)
    rows = env.get_eval_dataset()
    assert len(rows) == 2
    settings = {
        k: v for k, v in SETTINGS.items() if k not in ("simulator", "verifier", "eval_fraction")
    }
    source = EpisodeSource.of("reference", "occubench/canned", **settings)
    for row in rows:
        info = json.loads(row["info"])
        episode = source.episode(info["task_id"])
        start = anyio.run(episode.reset)
        assert [m["content"] for m in row["prompt"]] == [start.system_prompt, start.instruction]
        tools = [t["function"]["name"] for t in info["oai_tools"]]
        assert tools == [t.name for t in start.tools]


def _task_ids(rows) -> list[int]:
    return [json.loads(row["info"])["task_id"] for row in rows]


def test_a_trainer_reads_the_training_split_and_vf_eval_the_held_out_tasks():
    """verifiers' trainers read ``get_dataset()``: the tasks not held out for evaluation."""
    from occubench.training import load_environment

    env = load_environment(eval_fraction=0.3, split_seed=5)
    train, held_out = _task_ids(env.get_dataset()), _task_ids(env.get_eval_dataset())
    assert len(train) == 7 and len(held_out) == 3  # the reference suite's ten tasks
    assert not set(train) & set(held_out)
    assert sorted(train + held_out) == list(range(1001, 1011))
    again = load_environment(eval_fraction=0.3, split_seed=5)
    assert _task_ids(again.get_eval_dataset()) == held_out  # the same seed, the same split
    others = {
        tuple(_task_ids(load_environment(eval_fraction=0.3, split_seed=s).get_eval_dataset()))
        for s in range(6, 9)
    }
    assert others - {tuple(held_out)}  # another seed, another split
    default = load_environment()
    assert len(default.get_dataset()) == 8 and len(default.get_eval_dataset()) == 2


def test_a_split_without_a_training_task_is_refused():
    from occubench.errors import UsageError
    from occubench.training import load_environment

    with pytest.raises(UsageError, match="of 1 task"):
        load_environment(task_ids=[1002])
    only_eval = load_environment(task_ids=[1002], eval_fraction=1.0)
    assert _task_ids(only_eval.get_eval_dataset()) == [1002]
    with pytest.raises(ValueError, match="dataset is not set"):
        only_eval.get_dataset()  # asked for: no training set


def test_a_bad_setting_is_named():
    from occubench.training import load_environment

    with pytest.raises(ValidationError, match="env_mode"):
        load_environment(env_mode="E9")


def _toml_table(values: dict) -> str:
    return "{ " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in values.items()) + " }"


def test_vf_eval_rewards_are_the_occubench_verdicts(tmp_path):
    """``vf-eval`` against the local scripted agents: its rewards are occubench's grades."""
    with ScriptedOpenAIServer() as server:
        evals = "".join(
            f'\n[[eval]]\nenv_id = "occubench.training"\nmodel = "{agent}"\n'
            f"env_args = {_toml_table(SETTINGS)}\n"
            for agent in ("careful", "no-retry")
        )
        config = tmp_path / "evals.toml"
        config.write_text(
            f'api_base_url = "{server.base_url}"\napi_key_var = "LOCAL_AGENT_KEY"\n'
            "num_examples = 2\nrollouts_per_example = 2\nsave_results = true\n"
            'state_columns = ["occubench_grade"]\n' + evals
        )
        vf_eval = Path(sys.executable).with_name("vf-eval")
        done = subprocess.run(
            [str(vf_eval), str(config), "--debug"],
            cwd=tmp_path,
            env={**os.environ, "LOCAL_AGENT_KEY": KEY},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        assert server.stats.saw_key(KEY)  # the agent model was the local server
        assert {"careful", "no-retry"} <= set(server.stats.answered)
    assert "Environment: occubench.training" in done.stdout

    results = {
        path.parent.parent.name.split("--")[-1]: [
            json.loads(line) for line in path.read_text().splitlines()
        ]
        for path in tmp_path.glob("outputs/evals/*/*/results.jsonl")
    }
    assert set(results) == {"careful", "no-retry"}
    for agent, rows in results.items():
        assert len(rows) == 4
        for row in rows:
            grade = row["occubench_grade"]
            assert row["error"] is None
            assert row["reward"] == float(grade["passed"]) == row["metrics"]["passed"]
            assert len(grade["votes"]) == 3 and grade["checks"]  # the verifier and the checks
            assert row["metrics"]["faults_injected"] > 0  # E1: faults met on the way
            assert row["metrics"]["tool_calls"] == grade["tool_calls"]
        expected = 1.0 if agent == "careful" else 0.0
        assert [row["reward"] for row in rows] == [expected] * 4


def evaluate(env, base_url: str, model: str):
    """verifiers' own evaluation in this process: the rollouts' outputs."""
    from openai import AsyncOpenAI

    from occubench.training import GRADE_KEY

    client = AsyncOpenAI(base_url=base_url, api_key=KEY)
    run = env.evaluate(client=client, model=model, num_examples=1, state_columns=[GRADE_KEY])
    return anyio.run(lambda: run)["outputs"]


def test_a_rollout_out_of_turns_is_graded_on_what_it_did():
    from occubench.training import load_environment

    env = load_environment(task_ids=[1002], with_plan=True, max_turns=2, eval_fraction=1.0)
    with ScriptedOpenAIServer() as server:
        (output,) = evaluate(env, server.base_url, "careful")
    grade = output["occubench_grade"]
    assert output["stop_condition"] == "max_turns_reached" and output["error"] is None
    assert grade["stop_reason"] == "turn_limit" and grade["tool_calls"] == 1
    assert output["reward"] == 0.0 and not grade["passed"]


def test_a_failed_simulator_ends_the_rollout_with_an_error_and_no_grade(monkeypatch):
    from occubench.testing import HardFailure
    from occubench.training import load_environment

    with ScriptedOpenAIServer(hard_failures=[HardFailure(model="canned", call=1)]) as server:
        monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
        monkeypatch.setenv("LOCAL_API_KEY", KEY)
        env = load_environment(
            simulator="openai-api/local/canned", task_ids=[1002], with_plan=True, eval_fraction=1.0
        )
        (output,) = evaluate(env, server.base_url, "careful")
    assert output["stop_condition"] == "has_error" and output["reward"] == 0.0
    assert output["occubench_grade"] is None
    assert output["error"]["error_chain_str"] == "InfraError"
    assert "HTTP 400" in output["error"]["error_chain_repr"]
