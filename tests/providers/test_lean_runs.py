"""Whole runs through the lean provider: the results of ``openai-api``, clean and flaky."""

from __future__ import annotations

import gc
import warnings

import pytest
from inspect_ai.event import ModelEvent
from inspect_ai.log import read_eval_log
from typer.testing import CliRunner

from conftest import HANG_BOUND, HANG_LIMIT, RELEASE_IDS
from occubench.cli import app
from occubench.providers import PROVIDER, LeanOpenAIAPI
from occubench.providers._lean_openai import RETRY_COUNT_HEADER
from occubench.testing import TRANSIENT_KINDS, FailureKind, Flakiness, ScriptedOpenAIServer

UNCLOSED = ("Unclosed client session", "Unclosed connector")
"""How aiohttp's warnings of a session or connector left open begin."""
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

    def invoke(provider: str, log_dir: str, *args: str) -> str:
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
        return result.output

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


def model_events(log) -> dict:
    """Per sample, what each model event logs: model, role, input, output, usage, config."""
    return {
        s.id: [
            (
                e.model,
                e.role,
                [m.model_dump(exclude={"id"}) for m in e.input],
                [c.model_dump(exclude={"message": {"id"}}) for c in e.output.choices],
                e.output.usage,
                e.config,
                e.call,
            )
            for e in s.events
            if isinstance(e, ModelEvent)
        ]
        for s in log.samples
    }


def headers(sent) -> set[frozenset]:
    """The distinct header sets of requests (names lower-cased; Inspect's request id left out).

    The retry count's value is masked: a pooled connection the server closed as it was
    reused is retried by either path at random on a busy machine (the attempt that failed
    never reached the record); its name must be on every request of both.
    """
    return {
        frozenset(
            (name, "n" if name == RETRY_COUNT_HEADER else v)
            for k, v in s.headers.items()
            if (name := k.lower()) != "x-irid"
        )
        for s in sent
    }


def test_openai_api_on_the_fast_path_sends_and_logs_what_inspects_path_does(
    run, monkeypatch, tmp_path
):
    posted = []
    complete = LeanOpenAIAPI._complete

    async def counted(self, *args):
        posted.append(type(self).__name__)
        return await complete(self, *args)

    monkeypatch.setattr(LeanOpenAIAPI, "_complete", counted)
    with ScriptedOpenAIServer(record=True) as server:
        monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
        run("openai-api", "sdk", "--no-fast-path")
        inspect_sent = server.sent
        assert posted == []  # Inspect's own path: no lean post
        run("openai-api", "fast")  # the default
        fast_sent = server.sent[len(inspect_sent) :]
    assert len(posted) == len(fast_sent) > 0 and set(posted) == {"OpenAICompatibleAPI"}
    # the same requests, byte for byte (in another order: samples run concurrently)
    assert sorted(s.body for s in fast_sent) == sorted(s.body for s in inspect_sent)
    assert headers(fast_sent) == headers(inspect_sent)  # the SDK's, every one
    assert all(RETRY_COUNT_HEADER in {k.lower() for k in s.headers} for s in server.sent)
    expected, inspect_log = outcome(tmp_path / "sdk")
    got, log = outcome(tmp_path / "fast")
    assert sorted(got) == RELEASE_IDS and got == expected
    assert all(v["error"] is None for v in got.values())
    assert model_events(log) == model_events(inspect_log)  # the same model events
    assert log.eval.model == inspect_log.eval.model == "openai-api/local/schema-agent"


def test_a_run_gives_the_results_of_openai_api(run, monkeypatch, tmp_path):
    with ScriptedOpenAIServer() as server:
        monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
        run("openai-api", "sdk", "--no-fast-path")
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
    with ScriptedOpenAIServer() as server, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
        run(PROVIDER, "lean", "--log-model-api", "--tasks", "11")
        gc.collect()
    _, log = outcome(tmp_path / "lean")
    events = [e for s in log.samples for e in s.events if isinstance(e, ModelEvent)]
    assert events and all(e.call is not None and e.call.response for e in events)
    assert all(e.call.request["messages"] for e in events)
    # each call timed by Inspect's request tracking, from its last attempt to its answer
    assert all(0 < e.call.time <= (e.completed - e.timestamp).total_seconds() for e in events)
    # the run's HTTP sessions were closed with its event loop (aiohttp warns of any left open)
    assert [w for w in caught if str(w.message).startswith(UNCLOSED)] == []


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


def test_rate_limited_answers_shrink_the_window_and_no_paid_call_is_repeated(
    run, monkeypatch, tmp_path
):
    with ScriptedOpenAIServer() as server:
        monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
        run("openai-api", "clean")
        clean = server.stats.snapshot()
    limited = Flakiness(rate=0.4, seed=3, kinds=[FailureKind.RATE_LIMIT], failures=2)
    with ScriptedOpenAIServer(flaky=limited) as server:
        monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
        output = run("openai-api", "limited")
        stats = server.stats.snapshot()
    assert stats["failures"]["rate_limit"] > 0
    # every 429 was retried at the call, by the lean path: no sample ran again
    expected, _ = outcome(tmp_path / "clean")
    got, log = outcome(tmp_path / "limited")
    assert got == expected and all(v["error"] is None for v in got.values())
    assert sum(len(s.error_retries or []) for s in log.samples) == 0
    assert stats["answered"] == clean["answered"]  # no billed call twice
    assert "rate-limited answer(s)" in output  # the summary says what the limits did
