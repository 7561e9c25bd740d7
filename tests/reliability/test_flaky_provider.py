"""Flaky providers: 429s, 500s, timeouts, dropped connections and malformed bodies.

A run of the 10 sample tasks through Inspect's ``openai-api`` provider against the local
server, once clean and once failing a seeded share of the requests at first, must end
with every sample scored and the very same trajectories and verdicts.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import pytest
from inspect_ai.log import read_eval_log

from conftest import HANG_BOUND, HANG_LIMIT, RELEASE_IDS
from occubench.agent import episode_in
from occubench.testing import TRANSIENT_KINDS, FailureKind, Flakiness, ScriptedOpenAIServer
from occubench.testing._hooks import request_key

FLAKY = Flakiness(rate=0.15, seed=5, hang=HANG_BOUND)
"""With this seed every failure kind occurs in the fixture run, the timeout once: the
server hangs until the client gives up at ``HANG_LIMIT``."""


def attempt_timeout(flaky: Flakiness) -> str:
    """``--attempt-timeout`` of a flaky run: reached by a hang alone, however busy the machine
    (a slow answer given up on would be asked again and billed twice, its count lost)."""
    return str(HANG_LIMIT if FailureKind.TIMEOUT in flaky.kinds else HANG_BOUND)


def post(
    base_url: str, body: dict, timeout: float = HANG_BOUND
) -> tuple[int, dict[str, str], bytes]:
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
    assert set(failing) == set(TRANSIENT_KINDS)
    assert all(Flakiness(rate=0.0).planned(k) is None for k in keys[:100])


@pytest.mark.parametrize("kind", TRANSIENT_KINDS)
def test_each_failure_kind_then_the_clean_answer(kind):
    flaky = Flakiness(rate=1.0, kinds=[kind], hang=HANG_BOUND, retry_after=0.25)
    with ScriptedOpenAIServer(flaky=flaky) as server:
        if kind in (FailureKind.TIMEOUT, FailureKind.DISCONNECT):
            with pytest.raises(OSError):  # socket timeout, reset connection, URLError
                post(server.base_url, body("hello"), timeout=0.5)
            # the failure is counted before the request is asked again (a busy server may
            # read the first request after the client gave up on it)
            deadline = time.monotonic() + HANG_BOUND
            while server.stats.snapshot()["failures"] != {kind.value: 1}:
                assert time.monotonic() < deadline, "the server never read the request"
                time.sleep(0.01)
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
        if kind is FailureKind.TIMEOUT:  # the hung handler notices the closed socket in its
            deadline = time.monotonic() + HANG_BOUND  # own time, on a busy machine later
            while server.stats.snapshot()["abandoned"] != 1:
                assert time.monotonic() < deadline, "the server never saw the client give up"
                time.sleep(0.01)
        stats = server.stats.snapshot()
    assert stats["failures"] == {kind.value: 1}
    assert stats["retries"] == 1 and stats["distinct"] == 1
    assert stats["abandoned"] == (1 if kind is FailureKind.TIMEOUT else 0)  # it gave up on the hang


def test_identical_requests_share_one_failure():
    flaky = Flakiness(rate=1.0, kinds=[FailureKind.SERVER_ERROR])
    with ScriptedOpenAIServer(flaky=flaky) as server:
        codes = [post(server.base_url, body("vote"))[0] for _ in range(3)]
        stats = server.stats.snapshot()
    assert codes == [500, 200, 200]
    assert stats["retries"] == 1 and stats["requests"] == {"echo-simulator": 3}


def test_per_attempt_failures_can_repeat_and_are_seeded():
    flaky = Flakiness(rate=0.5, seed=4, kinds=[FailureKind.SERVER_ERROR], per_attempt=True)
    with ScriptedOpenAIServer(flaky=flaky) as server:
        codes = [post(server.base_url, body("same"))[0] for _ in range(40)]
        stats = server.stats.snapshot()
    expected = [
        500 if flaky.planned(f"{request_key(body('same'))}:{n}") else 200 for n in range(1, 41)
    ]
    assert codes == expected  # the n-th attempt of a request fails by (seed, body, n)
    assert 10 < codes.count(500) < 30
    assert any(a == b == 500 for a, b in zip(codes, codes[1:], strict=False))  # fails again
    assert stats["failures"] == {"server_error": codes.count(500)}
    assert stats["repeated"] == 39 and stats["distinct"] == 1


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
            "stop": episode_in(s.store).stop_reason,
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


RANDOM_20 = Flakiness(
    rate=0.2,
    seed=0,
    kinds=[FailureKind.RATE_LIMIT, FailureKind.SERVER_ERROR, FailureKind.BAD_JSON],
    per_attempt=True,
)
"""Issue 15's endpoint: a fifth of all attempts fail (429, 500, a 200 cut off mid-body)."""


@pytest.mark.parametrize("flaky", [FLAKY, RANDOM_20], ids=["first-attempts", "random-20pc"])
def test_flaky_provider_run_matches_a_clean_run(occubench_run, monkeypatch, tmp_path, flaky):
    """Every failure, unreadable 200s included, is retried at the call: every sample is
    scored as in a clean run, no sample is restarted, and the answers paid for are the
    clean run's."""
    monkeypatch.setenv("LOCAL_API_KEY", "test-key")
    with ScriptedOpenAIServer() as server:
        monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
        clean = occubench_run("--log-dir", str(tmp_path / "clean"), "--no-preflight")
        clean_stats = server.stats.snapshot()
    assert clean.exit_code == 0, clean.output
    with ScriptedOpenAIServer(flaky=flaky) as server:
        monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
        run = occubench_run(
            "--log-dir",
            str(tmp_path / "flaky"),
            "--attempt-timeout",
            attempt_timeout(flaky),
            "--no-preflight",
        )
        stats = server.stats.snapshot()
    assert run.exit_code == 0, run.output
    assert clean_stats["failures"] == {}
    assert set(stats["failures"]) == {k.value for k in flaky.kinds}
    assert stats["abandoned"] == stats["failures"].get("timeout", 0)  # each hang: given up
    injected = sum(stats["failures"].values())
    assert stats["retries"] == injected  # every failed attempt asked again ...
    assert stats["distinct"] == clean_stats["distinct"]  # ... and nothing else was asked
    requests, clean_requests = (
        sum(stats["requests"].values()),
        sum(clean_stats["requests"].values()),
    )
    assert requests - injected == clean_requests  # billed answers: the clean run's

    expected, _ = summary(tmp_path / "clean")
    got, log = summary(tmp_path / "flaky")
    assert sorted(got) == RELEASE_IDS
    assert all(v["error"] is None for v in got.values())  # every sample scored
    assert got == expected  # same trajectories and verdicts
    assert "infrastructure error" not in run.output
    sample_restarts = sum(len(s.error_retries or []) for s in log.samples)
    assert sample_restarts == 0  # unreadable bodies are retried at the call now
    unreadable = stats["failures"].get("bad_json", 0) + stats["failures"].get("no_choices", 0)
    counted = sum(s.store.get("CallCounts:unreadable", 0) for s in log.samples)
    assert unreadable > 0 and counted == unreadable  # each one counted in its sample
    print(
        f"\n{flaky.rate:.0%} faults ({'every attempt' if flaky.per_attempt else 'first attempts'})"
        f": requests {requests} (clean {clean_requests}), injected {stats['failures']}, "
        f"call-level retries {stats['retries']}, sample restarts {sample_restarts}, "
        f"billed answers {requests - injected} (clean {clean_requests}), scored {len(got)}/10"
    )
