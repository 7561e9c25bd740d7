"""Flaky providers: 429s, 500s, timeouts, dropped connections and malformed bodies.

A run of the 10 sample tasks through Inspect's ``openai-api`` provider against the local
server, once clean and once failing a seeded share of the requests at first, must end
with every sample scored and the very same trajectories and verdicts.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from inspect_ai.log import read_eval_log

from conftest import RELEASE_IDS
from occubench.scripted._openai_server import FailureKind, Flakiness, ScriptedOpenAIServer

FLAKY = Flakiness(rate=0.15, seed=1, hang=1.5)
"""With this seed every failure kind occurs in the fixture run; hang > --attempt-timeout."""


def post(base_url: str, body: dict, timeout: float = 5.0) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(
        f"{base_url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def body(text: str) -> dict:
    return {"model": "echo-simulator", "messages": [{"role": "user", "content": text}]}


def test_failure_plan_is_seeded_and_covers_the_rate():
    keys = [f"request-{i}" for i in range(2000)]
    plan = [FLAKY.planned(k) for k in keys]
    assert plan == [FLAKY.planned(k) for k in keys]  # a pure function of (seed, key)
    assert plan != [Flakiness(rate=0.15, seed=FLAKY.seed + 1).planned(k) for k in keys]
    failing = [p for p in plan if p is not None]
    assert 0.12 < len(failing) / len(keys) < 0.18
    assert set(failing) == set(FailureKind)
    assert all(Flakiness(rate=0.0).planned(k) is None for k in keys[:100])


@pytest.mark.parametrize("kind", list(FailureKind))
def test_each_failure_kind_then_the_clean_answer(kind):
    flaky = Flakiness(rate=1.0, kinds=[kind], hang=1.0, retry_after=0.25)
    with ScriptedOpenAIServer(flaky=flaky) as server:
        if kind in (FailureKind.TIMEOUT, FailureKind.DISCONNECT):
            with pytest.raises(OSError):  # socket timeout, reset connection, URLError
                post(server.base_url, body("hello"), timeout=0.5)
        else:
            status, headers, data = post(server.base_url, body("hello"))
            if kind is FailureKind.RATE_LIMIT:
                assert status == 429 and headers["Retry-After"] == "0.25"
            elif kind is FailureKind.SERVER_ERROR:
                assert status == 500
            elif kind is FailureKind.BAD_JSON:
                assert status == 200
                with pytest.raises(json.JSONDecodeError):
                    json.loads(data)
            else:
                assert status == 200 and "choices" not in json.loads(data)
        status, _, data = post(server.base_url, body("hello"))  # asked again: answered
        assert status == 200 and json.loads(data)["choices"][0]["message"]["content"]
        stats = server.stats.snapshot()
    assert stats["failures"] == {kind.value: 1}
    assert stats["retries"] == 1 and stats["distinct"] == 1


def test_identical_requests_share_one_failure():
    flaky = Flakiness(rate=1.0, kinds=[FailureKind.SERVER_ERROR])
    with ScriptedOpenAIServer(flaky=flaky) as server:
        codes = [post(server.base_url, body("vote"))[0] for _ in range(3)]
        stats = server.stats.snapshot()
    assert codes == [500, 200, 200]
    assert stats["retries"] == 1 and stats["requests"] == {"echo-simulator": 3}


def summary(log_dir) -> dict:
    """Per task: verdict, votes, stop reason and the whole conversation."""
    (path,) = log_dir.glob("*/*.eval")  # LOG_DIR/<the run's folder>/
    log = read_eval_log(str(path))
    out = {}
    for s in log.samples:
        score = s.scores["occubench_scorer"]
        out[s.id] = {
            "error": s.error.message if s.error else None,
            "verdict": score.value,
            "votes": [(v["is_correct"], v["feedback"]) for v in score.metadata["votes"]],
            "stop": s.store["Episode:stop_reason"],
            "messages": [
                (
                    m.role,
                    m.text,
                    [(c.function, c.arguments) for c in m.tool_calls or []]
                    if m.role == "assistant"
                    else None,
                )
                for m in s.messages
            ],
        }
    return out, log


def test_flaky_provider_run_matches_a_clean_run(occubench_run, monkeypatch, tmp_path):
    monkeypatch.setenv("LOCAL_API_KEY", "test-key")
    with ScriptedOpenAIServer() as server:
        monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
        clean = occubench_run("--log-dir", str(tmp_path / "clean"), "--no-preflight")
        clean_stats = server.stats.snapshot()
    assert clean.exit_code == 0, clean.output
    with ScriptedOpenAIServer(flaky=FLAKY) as server:
        monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
        flaky = occubench_run(
            "--log-dir", str(tmp_path / "flaky"), "--attempt-timeout", "1", "--no-preflight"
        )
        stats = server.stats.snapshot()
    assert flaky.exit_code == 0, flaky.output
    assert clean_stats["failures"] == {}
    assert set(stats["failures"]) == {k.value for k in FailureKind}
    assert stats["retries"] == sum(stats["failures"].values())  # every failed request asked again
    assert stats["distinct"] == clean_stats["distinct"]  # and nothing else was asked

    expected, _ = summary(tmp_path / "clean")
    got, log = summary(tmp_path / "flaky")
    assert sorted(got) == RELEASE_IDS
    assert all(v["error"] is None for v in got.values())  # every sample scored
    assert got == expected
    assert "infrastructure error" not in flaky.output
    last = [line for line in flaky.output.splitlines() if "│ all" in line][-1]
    assert " 10 " in last and "100.0" in last
    # Inspect's part: SDK retries are invisible; attempt timeouts are Inspect retries,
    # malformed bodies (not retried by the SDK or Inspect) re-run their sample.
    sample_retries = sum(len(s.error_retries or []) for s in log.samples)
    malformed = stats["failures"][FailureKind.BAD_JSON] + stats["failures"][FailureKind.NO_CHOICES]
    assert 1 <= sample_retries <= malformed
    print(
        f"\nflaky run: requests {sum(stats['requests'].values())} (clean "
        f"{sum(clean_stats['requests'].values())}), injected {stats['failures']}, "
        f"retried {stats['retries']}, sample re-runs {sample_retries}, scored {len(got)}/10"
    )
