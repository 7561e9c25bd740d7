"""The preflight's two-turn round trip: a wire that refuses the second turn stops the run.

The first turn (the agent offered a tool) is tried before the run starts; the second
(its call and the result sent back, as the run's loop sends them) while the first
samples start. A wire that refuses second turns would end every sample on an agent API
error: the run stops, one line names the model, its settings and the provider's error,
exit 2. Offline: the local server's agent refuses any request that carries a tool result.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from inspect_ai.model import ChatMessage, ChatMessageTool, GenerateConfig
from inspect_ai.tool import ToolInfo

from conftest import HANG_BOUND
from occubench.errors import ExitCode
from occubench.roles import Role
from occubench.scale import Preflight, role_calls
from occubench.scripted import BEHAVIOURS, Reply
from occubench.testing import WIRE_CASES, ScriptedOpenAIServer, WireName

OCCUBENCH = str(Path(sys.executable).with_name("occubench"))
REFUSAL = "Missing `reasoning_content` field in the assistant message at message index 2."


def refuses_second_turns(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
    """An agent whose endpoint refuses any request holding a tool result."""
    if any(isinstance(m, ChatMessageTool) for m in messages):
        raise ValueError(REFUSAL)
    return BEHAVIOURS["schema-agent"](messages, tools)


AGENTS = {"refusing-agent": refuses_second_turns}


def test_the_second_turn_is_tried_with_the_roles_settings(monkeypatch):
    with ScriptedOpenAIServer(behaviours=AGENTS, record=True) as server:
        monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
        monkeypatch.setenv("LOCAL_API_KEY", "test-key")
        settings = {Role.AGENT: GenerateConfig(temperature=0.5, max_tokens=12288)}
        checks = Preflight(
            role_calls({Role.AGENT: "openai-api/local/refusing-agent"}, settings), HANG_BOUND
        )
        assert checks.check().failures == []
        (failure,) = checks.follow_up()
        first, second = server.recorded
    assert first["temperature"] == 0.5 and first["max_tokens"] == 12288
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "tool"]
    line = failure.line()
    assert line.startswith("agent model openai-api/local/refusing-agent (with ")
    assert "max_tokens=12288" in line and "temperature=0.5" in line
    assert "the second turn was refused" in line and REFUSAL in line


def test_a_refused_second_turn_stops_the_run(release_dir, tmp_path):
    with ScriptedOpenAIServer(behaviours=AGENTS) as server:
        env = {**os.environ, "LOCAL_BASE_URL": server.base_url, "LOCAL_API_KEY": "test-key"}
        args = [OCCUBENCH, "run", "--agent-model", "openai-api/local/refusing-agent",
                "--simulator-model", "openai-api/local/echo-simulator",
                "--verifier-model", "openai-api/local/scripted-judge",
                "--dataset", str(release_dir), "--workers", "1", "--display", "none",
                "--log-dir", str(tmp_path / "logs")]  # fmt: skip
        run = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True)
    said = " ".join((run.stdout + run.stderr).split())
    assert run.returncode == ExitCode.BAD_INPUT, said
    assert "Preflight failed: agent model openai-api/local/refusing-agent" in said
    assert "the second turn was refused" in said and REFUSAL in said
    assert "The run stopped:" in said and "fix the setting and run the command again" in said


def test_a_setting_the_wire_refuses_stops_the_run_before_it_starts(monkeypatch):
    case = next(c for c in WIRE_CASES if c.wire is WireName.OPENAI_RESPONSES)
    with case.server() as server:
        for name, value in case.environment(server).items():
            monkeypatch.setenv(name, value)
        settings = {Role.SIMULATOR: GenerateConfig(reasoning_effort="xhigh", max_tokens=12288)}
        checks = Preflight(role_calls({Role.SIMULATOR: "openai/gpt-5"}, settings), HANG_BOUND)
        (failure,) = checks.check().failures
    line = failure.line()
    assert line.startswith("simulator model openai/gpt-5 (with max_tokens=12288, reasoning_effort")
    assert "the request was refused" in line and "does not support 'xhigh'" in line
    assert line.endswith("check the role's settings")
