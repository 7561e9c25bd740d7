"""A simulator that never answers JSON for one env: an infrastructure error, counted apart."""

from __future__ import annotations

import json
from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput, modelapi
from inspect_ai.tool import ToolChoice, ToolInfo
from typer.testing import CliRunner

from conftest import RELEASE_IDS
from occubench.cli import app
from occubench.dataset import load_dataset
from occubench.errors import ExitCode
from occubench.results import read_runs
from occubench.scripted import BEHAVIOURS, Reply
from occubench.scripted._provider import to_output

BROKEN_TASK = 11


def broken_env_marker(release_dir) -> str:
    """A tool name that only the broken task's env has (it is in the simulator prompt)."""
    data = load_dataset(release_dir)
    env = data.env(next(t for t in data.tasks if t.task_id == BROKEN_TASK))
    others = " ".join(
        json.dumps(e.model_dump()) for n, e in data.envs.items() if n != env.environment_name
    )
    return next(t.name for t in env.action_set_definitions if f'"{t.name}"' not in others)


class HalfBrokenSimulator(ModelAPI):
    """The echo simulator, except for one env, where it answers prose, never JSON."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig | None = None,
        **model_args: Any,
    ) -> None:
        super().__init__(
            model_name=model_name,
            base_url=base_url,
            api_key=api_key,
            config=config or GenerateConfig(),
        )
        self.marker = model_name

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        if f'"{self.marker}"' in input[0].text:
            reply = Reply(content="I am sorry, the system is unavailable right now.")
        else:
            reply = BEHAVIOURS["echo-simulator"](input, tools)
        return to_output(f"half-broken/{self.model_name}", reply, input)


@modelapi(name="half-broken")
def half_broken() -> type:
    return HalfBrokenSimulator


def test_a_non_json_simulator_errors_one_sample_only(occubench_run, release_dir, tmp_path):
    marker = broken_env_marker(release_dir)
    models = [
        "--agent-model",
        "occubench/schema-agent",
        "--simulator-model",
        f"half-broken/{marker}",
        "--verifier-model",
        "occubench/scripted-judge",
    ]
    result = occubench_run("--log-dir", str(tmp_path / "logs"), models=models)
    assert result.exit_code == ExitCode.SAMPLE_ERRORS, result.output  # 3: not all scored

    rows = {r.task_id: r for r in read_runs([tmp_path / "logs"])}
    assert sorted(rows) == RELEASE_IDS
    broken = rows.pop(BROKEN_TASK)
    assert broken.passed is None  # never an agent failure
    assert "SimulatorError" in broken.error and "no JSON object" in broken.error
    assert all(r.error is None and r.passed for r in rows.values())  # the rest unaffected

    out = result.output
    assert "1 sample(s) ended in an infrastructure error (not scored); run the same" in out
    row = [line for line in out.splitlines() if "│ all" in line][-1]
    cells = [cell.strip() for cell in row.split("│")[1:-1]]
    assert cells[:3] == ["all", "9", "9"] and cells[-1] == "1"  # scored, passed ... errors

    report = CliRunner().invoke(app, ["report", str(tmp_path / "logs")], terminal_width=200)
    assert report.exit_code == 0, report.output
    assert "1 sample(s) ended in an infrastructure error (not scored)." in report.output
