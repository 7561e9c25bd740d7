"""The real HTTP path: Inspect's openai-api provider against a local server."""

import pytest

from conftest import run_task
from occubench.agent import episode_in
from occubench.testing._openai_server import ScriptedOpenAIServer


def test_full_run_over_http(tmp_path, monkeypatch):
    with ScriptedOpenAIServer() as server:
        monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
        monkeypatch.setenv("LOCAL_API_KEY", "test-key")
        log = run_task(
            tmp_path,
            agent="openai-api/local/schema-agent",
            roles={
                "simulator": "openai-api/local/echo-simulator",
                "verifier": "openai-api/local/scripted-judge",
            },
            task_ids="11,24,26",
            sim_checks=False,  # the echo simulator fails them (one re-ask per call)
        )
        requests = dict(server.stats.requests)
    assert log.status == "success"
    assert [s.scores["occubench_scorer"].value for s in log.samples] == ["C"] * 3
    tool_calls = sum(episode_in(s.store).tool_calls for s in log.samples)
    assert requests["echo-simulator"] == tool_calls
    assert requests["schema-agent"] == tool_calls + 3  # one more turn per task: the answer
    assert requests["scripted-judge"] == 9  # 3 votes x 3 tasks
    for sample in log.samples:
        assert sample.role_usage["simulator"].input_tokens > 0


def test_binds_loopback_only():
    with pytest.raises(ValueError, match="loopback"):
        ScriptedOpenAIServer(host="0.0.0.0")
