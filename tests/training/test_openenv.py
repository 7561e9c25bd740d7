"""The OpenEnv server: OpenEnv's own client against it on 127.0.0.1, and its credential."""

from __future__ import annotations

import base64
import os
import subprocess
import sys

import httpx
import pytest
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
)
from inspect_ai.tool import ToolCall

from occubench.scripted import BEHAVIOURS

pytest.importorskip("openenv.core", reason="the openenv extra is not installed")

from occubench.training import (  # noqa: E402 - after the skip
    EpisodeSource,
    OccuBenchAction,
    OccuBenchClient,
    OpenEnvServer,
    openenv_url,
)

SETTINGS = dict(
    task_ids=[1002, 1005],
    with_plan=True,
    protocol="occubench",
    env_mode="E1",
    fault_count=2,
    fault_duration=2,
)


def source() -> EpisodeSource:
    return EpisodeSource.of(
        "reference", "occubench/canned", "occubench/scripted-judge", votes=3, **SETTINGS
    )


def play(client: OccuBenchClient, policy: str, **reset: object):
    """One episode through the client, the scripted ``policy`` choosing each action."""
    result = client.reset(**reset)
    start = result.observation
    messages: list[ChatMessage] = [
        ChatMessageSystem(content=start.system_prompt),
        ChatMessageUser(content=start.instruction),
    ]
    while not result.done:
        reply = BEHAVIOURS[policy](messages, [])
        if not reply.tool_calls:
            result = client.step(OccuBenchAction(answer=reply.content))
            continue
        (tool, arguments), *_ = reply.tool_calls
        result = client.step(OccuBenchAction(tool=tool, arguments=arguments))
        call = ToolCall(id=f"call_{len(messages)}", function=tool, arguments=arguments)
        messages += [
            ChatMessageAssistant(content="", tool_calls=[call]),
            ChatMessageTool(content=result.observation.result, tool_call_id=call.id, function=tool),
        ]
    return start, result


def test_openenv_client_plays_one_task_per_episode():
    with OpenEnvServer(source()) as server, OccuBenchClient(base_url=server.url) as client:
        assert server.base_url.startswith("http://127.0.0.1:")
        start, passed = play(client, "careful", seed=7)
        state = client.state()
        assert start.task_id == 1002 and [t.name for t in start.tools]
        assert passed.done and passed.reward == 1.0 and passed.observation.grade.passed
        grade = passed.observation.grade
        assert len(grade.votes) == 3 and grade.checks_passed == grade.checks_total
        assert state.done and state.passed and state.faults > 0
        assert state.tool_calls == grade.tool_calls

        start, failed = play(client, "no-retry", seed=7)  # the session's next task
        assert start.task_id == 1005
        assert failed.done and failed.reward == 0.0 and not failed.observation.grade.passed
        assert client.state().task_id == 1005 and client.state().faults > 0

        start, _ = play(client, "careful", task_id=1002, seed=7)
        assert start.task_id == 1002
        with pytest.raises(RuntimeError, match="not served here"):
            client.reset(task_id=1001)


def test_every_route_needs_the_token():
    with OpenEnvServer(source(), token="the-openenv-token-0123456789") as server:
        base = server.base_url
        for url in (base, base.replace("//", "//occubench:wrong-token@")):
            with pytest.raises(ConnectionError, match="403"):
                OccuBenchClient(base_url=url).connect()
        health = f"{base}/health"
        assert httpx.get(health).status_code == 401
        bearer = {"Authorization": f"Bearer {server.token}"}
        assert httpx.get(health, headers={"Authorization": "Bearer nope"}).status_code == 401
        assert httpx.get(health, headers=bearer).status_code == 200
        basic = base64.b64encode(f"anyone:{server.token}".encode()).decode()
        assert httpx.get(health, headers={"Authorization": f"Basic {basic}"}).status_code == 200
        rebound = {**bearer, "Host": "attacker.example"}
        assert httpx.get(health, headers=rebound).status_code == 421
        # OpenEnv's HTTP reset: a one-shot episode (sessions are the client's WebSocket)
        reset = httpx.post(f"{base}/reset", json={"seed": 1}, headers=bearer, timeout=60)
        assert reset.status_code == 200 and reset.json()["observation"]["task_id"] == 1002


def occubench_openenv(*args: str, **env: str) -> subprocess.Popen[str]:
    """``occubench openenv`` in a process of its own (stderr piped: it prints the URL)."""
    return subprocess.Popen(
        [sys.executable, "-m", "occubench", "openenv", "--simulator-model", "occubench/canned"]
        + list(args),
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **env},
    )


def test_the_command_serves_the_selection_with_its_token():
    token = "test-token-0123456789abcdef"
    server = occubench_openenv(
        "--dataset", "reference", "--tasks", "1002", "--with-plan", "--protocol", "occubench",
        OCCUBENCH_SERVE_TOKEN=token,
    )  # fmt: skip
    try:
        assert server.stderr is not None
        line = server.stderr.readline()  # written once the server listens
        assert line.startswith("serving OpenEnv at http://127.0.0.1:"), line
        assert token not in line
        base = line.split()[3]
        with OccuBenchClient(base_url=openenv_url(base, token)) as client:
            start = client.reset().observation
            assert start.task_id == 1002
            done = client.step(OccuBenchAction(answer="nothing done"))
        assert done.done and done.reward == 0.0
        with pytest.raises(ConnectionError, match="403"):
            OccuBenchClient(base_url=base).connect()
    finally:
        server.terminate()
        server.wait(timeout=60)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--dataset", "reference", "--env-mode", "E9"], "env_mode: Input should be"),
        (["--dataset", "reference", "--tasks", "99999"], "reference: 1 unknown task ids: 99999"),
    ],
)
def test_the_command_names_a_bad_setting(args, message):
    """One message, the built-in suite by its name (its words; where they wrap is the width's)."""
    server = occubench_openenv(*args)
    _, stderr = server.communicate(timeout=120)
    assert server.returncode == 2
    said = " ".join(stderr.split())
    assert message in said and "Traceback" not in said


def test_a_failed_simulator_is_an_error_in_a_few_words(monkeypatch):
    from occubench.testing import HardFailure, ScriptedOpenAIServer

    with ScriptedOpenAIServer(hard_failures=[HardFailure(model="canned", call=1)]) as models:
        monkeypatch.setenv("LOCAL_BASE_URL", models.base_url)
        monkeypatch.setenv("LOCAL_API_KEY", "local-key-0123456789")
        broken = EpisodeSource.of("reference", "openai-api/local/canned", task_ids=[1002])
        with OpenEnvServer(broken) as server, OccuBenchClient(base_url=server.url) as client:
            start = client.reset().observation
            action = OccuBenchAction(tool=start.tools[0].name, arguments={"station_id": "N4-S2"})
            with pytest.raises(RuntimeError) as failed:
                client.step(action)
    message = str(failed.value)
    assert "the environment failed: HTTP 400" in message and len(message) < 300
