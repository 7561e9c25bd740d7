"""Lone UTF-16 surrogates in any role's output never reach the log, the store or a report.

Each role of a run answers through the local OpenAI-compatible server with half of an
emoji, ``\\ud83d``: raw in its text (the wire carries it as the ASCII escape, the SDK
decodes it to a lone surrogate) and written as the escape inside its own JSON (which a
JSON decoder turns into one). The run must write its log under both protocols, every
sample scored, ``occubench report`` must read it back, and the text must show the six
characters ``\\ud83d`` where the model wrote the half emoji. The synthesis generator's
output goes through the same rule and its dataset is written and loads.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool
from inspect_ai.tool import ToolInfo
from typer.testing import CliRunner, Result

from conftest import make_dataset, tool
from occubench.agent import episode_in
from occubench.cli import app
from occubench.scripted import BEHAVIOURS, Reply
from occubench.scripted._simulated import observation_reply
from occubench.testing._openai_server import ScriptedOpenAIServer
from occubench.text._codepoints import loads

HALF = "\ud83d"
"""Half of an emoji: a lone high surrogate."""
SHOWN = "\\ud83d"
"""What the log shows in its place: the six characters of its escape."""
ESCAPED = "@ESCAPED@"
"""Marks where a reply's text carries the escape itself (the six characters)."""


def with_escape(text: str) -> str:
    return text.replace(ESCAPED, SHOWN)


def surrogate_agent(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
    """One call with a half emoji in a string argument and its text, then an answer."""
    if not any(isinstance(m, ChatMessageTool) for m in messages):
        tool = next(
            t for t in tools if any(p.type == "string" for p in t.parameters.properties.values())
        )
        arguments = {
            name: f"J{HALF} Doe" if p.type == "string" else 1
            for name, p in tool.parameters.properties.items()
            if name in tool.parameters.required
        }
        return Reply(content=f"Looking up J{HALF} Doe.", tool_calls=[(tool.name, arguments)])
    return Reply(content=f"Final answer: the tenant is J{HALF} Doe.")


def surrogate_simulator(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
    """An observation with a half emoji raw in one value and escaped in another."""
    observation = {"status": "ok", "tenant": f"J{HALF} Doe", "contact": f"K{ESCAPED} Roe"}
    return Reply(content=with_escape(observation_reply(messages, observation)))


def surrogate_judge(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
    """The scripted judge's verdict, its feedback with a half emoji raw and escaped."""
    verdict = json.loads(BEHAVIOURS["scripted-judge"](messages, tools).content)
    feedback = f"J{HALF} Doe / K{ESCAPED} Roe: {verdict['feedback']}"
    text = json.dumps({**verdict, "feedback": feedback}, ensure_ascii=False)
    return Reply(content=with_escape(text))


MODELS = {
    "surrogate-agent": surrogate_agent,
    "surrogate-simulator": surrogate_simulator,
    "surrogate-judge": surrogate_judge,
}


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    """Two tasks of a records env the test makes (no checks: the judge decides)."""
    return make_dataset(tmp_path / "dataset", [tool("find_record", id="The record id.")], (1, 2))


def run(dataset: Path, logs: Path, protocol: str) -> Result:
    return CliRunner().invoke(
        app,
        [
            "run",
            "--agent-model",
            "openai-api/local/surrogate-agent",
            "--simulator-model",
            "openai-api/local/surrogate-simulator",
            "--verifier-model",
            "openai-api/local/surrogate-judge",
            "--dataset",
            str(dataset),
            "--display",
            "none",
            "--workers",
            "1",
            "--log-dir",
            str(logs),
            "--protocol",
            protocol,
            "--no-preflight",
        ],
        terminal_width=200,
    )


@pytest.mark.parametrize("protocol", ["occubench", "paper"])
def test_half_emojis_from_every_role_reach_the_log_escaped(
    dataset, monkeypatch, tmp_path, protocol
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LOCAL_API_KEY", "test-key")
    logs = tmp_path / "logs"
    with ScriptedOpenAIServer(behaviours=MODELS) as server:
        monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
        result = run(dataset, logs, protocol)
        assert result.exit_code == 0, result.output
        again = run(dataset, logs, protocol)  # the same command resumes cleanly
        assert again.exit_code == 0, again.output

    (path,) = logs.glob("*/*.eval")  # LOG_DIR/<the run's folder>/
    log = read_eval_log(str(path))
    assert log.status == "success" and len(log.samples) == 2
    for sample in log.samples:
        assert sample.error is None and sample.scores["occubench_scorer"].value == "C"
        agent = [m for m in sample.messages if isinstance(m, ChatMessageAssistant)]
        assert agent[0].text == f"Looking up J{SHOWN} Doe."
        assert f"J{SHOWN} Doe" in agent[0].tool_calls[0].arguments.values()
        assert agent[-1].text == f"Final answer: the tenant is J{SHOWN} Doe."
        (observed,) = [m for m in sample.messages if isinstance(m, ChatMessageTool)]
        seen = loads(observed.text)  # the agent's text: JSON, the escape decodes to six characters
        assert seen["tenant"] == f"J{SHOWN} Doe" and seen["contact"] == f"K{SHOWN} Roe"
        (step,) = episode_in(sample.store).steps
        if protocol == "occubench":  # the store keeps the parsed observation
            assert step.observation["tenant"] == f"J{SHOWN} Doe"
            assert step.observation["contact"] == f"K{SHOWN} Roe"
        for vote in sample.scores["occubench_scorer"].metadata["votes"]:
            assert vote["is_correct"] is True
            assert vote["feedback"].startswith(f"J{SHOWN} Doe / K{SHOWN} Roe: ")
    with zipfile.ZipFile(path) as archive:  # every member strict UTF-8, no surrogate
        for name in archive.namelist():
            assert HALF not in archive.read(name).decode("utf-8"), name

    report = CliRunner().invoke(app, ["report", str(logs), "--out", str(tmp_path / "report")])
    assert report.exit_code == 0, report.output
    assert "100.0" in report.output
    html = (tmp_path / "report" / "report.html").read_text(encoding="utf-8")
    assert HALF not in html


def test_half_emojis_from_the_generator_reach_the_dataset_escaped(tmp_path: Path):
    from occubench.dataset import load_dataset
    from occubench.scripted._synthesis_world import ScriptedGenerator
    from occubench.synthesis import DATASET_DIR, run_synthesis
    from synthesis.world import PROFILES, SETTINGS, TRIAGE, World, scenarios

    base = ScriptedGenerator(PROFILES)

    def generator(messages, tools):
        reply = base(messages, tools)
        if '"world_model_system_prompt"' not in reply.content:
            return reply
        value = json.loads(reply.content.removeprefix("<json>").removesuffix("</json>"))
        value["world_model_system_prompt"] += f"\nOn call: J{HALF} Doe, K{ESCAPED} Roe."
        return Reply(content=with_escape(f"<json>{json.dumps(value, ensure_ascii=False)}</json>"))

    manifest = run_synthesis(scenarios(TRIAGE), World().models(generator), tmp_path, SETTINGS)
    assert manifest.tasks, "the scenario yields a task"
    dataset = load_dataset(tmp_path / DATASET_DIR)  # written as strict UTF-8, reads back
    prompts = [env.world_model_system_prompt for env in dataset.envs.values()]
    assert prompts and all(f"On call: J{SHOWN} Doe, K{SHOWN} Roe." in p for p in prompts)
