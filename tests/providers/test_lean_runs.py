"""Whole runs through the lean provider: the results of ``openai-api``, clean and flaky."""

from __future__ import annotations

import pytest
from inspect_ai.event import ModelEvent
from inspect_ai.log import read_eval_log
from typer.testing import CliRunner

from conftest import HANG_BOUND, HANG_LIMIT, RELEASE_IDS
from occubench.cli import app
from occubench.providers import PROVIDER
from occubench.testing._openai_server import TRANSIENT_KINDS, Flakiness, ScriptedOpenAIServer

FLAKY = Flakiness(rate=0.15, seed=19, hang=HANG_BOUND)
"""With this seed every failure kind occurs in the fixture run, the timeout once: the server
hangs until the client gives up at ``HANG_LIMIT`` (``HANG_BOUND`` bounds one that never does)."""


def models(provider: str) -> list[str]:
    return [
        "--agent-model",
        f"{provider}/local/schema-agent",
        "--simulator-model",
        f"{provider}/local/echo-simulator",
        "--verifier-model",
        f"{provider}/local/scripted-judge",
    ]


@pytest.fixture
def run(release_dir, monkeypatch, tmp_path):
    """``occubench run`` in-process on the fixture dataset, through the local server's env
    variables (no preflight: requests are counted)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LOCAL_API_KEY", "test-key")

    def invoke(provider: str, log_dir: str, *args: str) -> None:
        base = ["run", *models(provider), "--dataset", str(release_dir), "--display", "none"]
        result = CliRunner().invoke(
            app,
            [
                *base,
                "--workers",
                "1",
                "--log-dir",
                str(tmp_path / log_dir),
                "--no-preflight",
                *args,
            ],
        )
        assert result.exit_code == 0, result.output

    return invoke


def calls(message: object) -> list:
    return getattr(message, "tool_calls", None) or []


def outcome(log_dir) -> tuple[dict, object]:
    """Per task: error, verdict, votes and the whole conversation; and the log."""
    (path,) = log_dir.glob("*/*.eval")  # LOG_DIR/<the run's folder>/
    log = read_eval_log(str(path))
    found = {}
    for s in log.samples or []:
        score = s.scores["occubench_scorer"]
        found[s.id] = {
            "error": s.error.message if s.error else None,
            "verdict": score.value,
            "votes": [(v["is_correct"], v["feedback"]) for v in score.metadata["votes"]],
            "usage": {role: u.total_tokens for role, u in (s.role_usage or {}).items()},
            "messages": [
                (
                    m.role,
                    m.text,
                    [(c.function, c.arguments) for c in getattr(m, "tool_calls", None) or []],
                )
                for m in s.messages
            ],
        }
    return found, log


def test_a_run_gives_the_results_of_openai_api(run, monkeypatch, tmp_path):
    with ScriptedOpenAIServer() as server:
        monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
        run("openai-api", "sdk")
        sdk_requests = server.stats.snapshot()
        run(PROVIDER, "lean")
        both = server.stats.snapshot()
    expected, _ = outcome(tmp_path / "sdk")
    got, log = outcome(tmp_path / "lean")
    assert sorted(got) == RELEASE_IDS and got == expected
    assert all(v["error"] is None for v in got.values())
    lean_requests = {m: n - sdk_requests["requests"][m] for m, n in both["requests"].items()}
    assert lean_requests == sdk_requests["requests"]
    assert both["distinct"] == sdk_requests["distinct"]  # the same request bodies
    events = [e for s in log.samples for e in s.events if isinstance(e, ModelEvent)]
    assert events and all(e.call is None for e in events)  # log_model_api off: no raw calls


def test_log_model_api_keeps_the_raw_calls(run, monkeypatch, tmp_path):
    with ScriptedOpenAIServer() as server:
        monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
        run(PROVIDER, "lean", "--log-model-api", "--tasks", "11")
    _, log = outcome(tmp_path / "lean")
    events = [e for s in log.samples for e in s.events if isinstance(e, ModelEvent)]
    assert events and all(e.call is not None and e.call.response for e in events)
    assert all(e.call.request["messages"] for e in events)


def test_a_flaky_endpoint_gives_the_clean_results_without_sample_reruns(run, monkeypatch, tmp_path):
    with ScriptedOpenAIServer() as server:
        monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
        run(PROVIDER, "clean")
    with ScriptedOpenAIServer(flaky=FLAKY) as server:
        monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
        run(PROVIDER, "flaky", "--attempt-timeout", str(HANG_LIMIT))
        stats = server.stats.snapshot()
    assert set(stats["failures"]) == {k.value for k in TRANSIENT_KINDS}
    assert stats["abandoned"] == stats["failures"]["timeout"]  # the client ended each hang
    assert stats["retries"] == sum(stats["failures"].values())
    expected, _ = outcome(tmp_path / "clean")
    got, log = outcome(tmp_path / "flaky")
    assert got == expected and all(v["error"] is None for v in got.values())
    # unreadable answers too are retried at the call: no sample had to run again
    assert sum(len(s.error_retries or []) for s in log.samples) == 0
    failed_calls = [
        e for s in log.samples for e in s.events if isinstance(e, ModelEvent) and e.call is not None
    ]
    assert all(e.call.error for e in failed_calls)  # only failed attempts keep a raw call
