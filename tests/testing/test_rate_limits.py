"""The test server's per-minute limits: token buckets, 429 with a Retry-After, nothing billed."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from occubench.testing import RateLimiter, RateLimits, ScriptedOpenAIServer


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_requests_per_minute_admit_a_burst_then_refuse_with_the_wait():
    clock = Clock()
    limiter = RateLimiter(RateLimits(requests_per_minute=120, burst_seconds=2), clock)
    assert [limiter.admit(10) for _ in range(4)] == [None] * 4  # two per second, 2 s held
    wait = limiter.admit(10)
    assert wait == pytest.approx(0.5)  # one request's worth at 2 per second
    clock.now += 0.5
    assert limiter.admit(10) is None
    assert limiter.admit(10) == pytest.approx(0.5)


def test_tokens_per_minute_refuse_what_the_bucket_cannot_hold_yet():
    clock = Clock()
    limiter = RateLimiter(RateLimits(tokens_per_minute=6000), clock)  # 100 a second
    assert limiter.admit(60) is None
    assert limiter.admit(60) == pytest.approx(0.2)  # 40 left: 20 more tokens needed
    clock.now += 0.2
    assert limiter.admit(60) is None
    assert limiter.admit(1000) == pytest.approx(10.0)  # never fits: a whole bucket's time


def test_a_refused_request_takes_nothing_from_either_bucket():
    clock = Clock()
    limiter = RateLimiter(RateLimits(requests_per_minute=60, tokens_per_minute=600), clock)
    assert limiter.admit(20) is not None  # over the 10-token bucket: refused
    assert limiter.admit(5) is None  # the request it did not take is still there


def post(base_url: str, key: str = "k") -> tuple[int, dict, dict]:
    body = {"model": "echo-simulator", "messages": [{"role": "user", "content": "hi"}]}
    request = urllib.request.Request(
        f"{base_url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as r:
            return r.status, dict(r.headers), json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), json.loads(e.read())


def test_the_server_answers_429_with_retry_after_beyond_its_limit():
    limits = RateLimits(requests_per_minute=2, burst_seconds=30)  # one request held
    with ScriptedOpenAIServer(rate_limits=limits) as server:
        first = post(server.base_url)
        refused = post(server.base_url)
        stats = server.stats.snapshot()
    assert first[0] == 200 and first[2]["choices"]
    status, headers, body = refused
    assert status == 429 and body["error"]["code"] == "rate_limit_exceeded"
    assert 29 <= int(headers["retry-after-ms"]) / 1000 <= 30  # until the bucket refills
    assert int(headers["Retry-After"]) == 30  # whole seconds, rounded up
    assert stats["answered"] == {"echo-simulator": 1}
    assert stats["rate_limited"] == {"echo-simulator": 1}
