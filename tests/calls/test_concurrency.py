"""The adaptive limit of requests in flight: driven by scripted answers, counted not timed."""

from __future__ import annotations

import asyncio

import pytest

from occubench.calls import AdaptiveLimit, concurrency_report, limit_for, reset_concurrency


class Clock:
    """A clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def started(limit: AdaptiveLimit, count: int) -> None:
    for _ in range(count):
        assert limit.can_start()
        limit.started()


def test_the_window_starts_at_the_ceiling_and_answers_keep_it_there():
    limit = AdaptiveLimit("m", ceiling=8)
    started(limit, 8)
    assert not limit.can_start()  # the ceiling is the upper bound
    for _ in range(100):
        limit.answered()
        limit.started()
    assert limit.allowed == 8 and limit.peak == 8 and limit.answers == 100


def test_a_429_halves_the_window_once_per_round_and_answers_grow_it_back():
    limit = AdaptiveLimit("m", ceiling=16)
    started(limit, 16)
    limit.throttled()
    assert limit.allowed == 8
    for _ in range(7):  # the rest of the same burst: one cut per round
        limit.throttled()
    assert limit.allowed == 8 and limit.rate_limited == 8
    for _ in range(8):  # a round of eight responses later, a new 429 cuts again
        limit.started()
        limit.answered()
    limit.started()
    limit.throttled()
    assert limit.allowed == 4 and limit.lowest == 4
    grown = []
    for _ in range(4 + 5 + 6):  # additive increase: one more per window of answers
        limit.started()
        limit.answered()
        grown.append(limit.allowed)
    assert grown == sorted(grown) and grown[0] == 4 and grown[-1] == 7


def test_the_window_never_goes_below_one():
    limit = AdaptiveLimit("m", ceiling=4)
    for _ in range(50):
        limit.started()
        limit.throttled()
    assert limit.allowed == 1 and limit.lowest == 1
    assert limit.can_start()


def test_retry_after_pauses_every_attempt_until_its_time():
    clock = Clock()
    limit = AdaptiveLimit("m", ceiling=4, clock=clock)
    limit.started()
    limit.throttled(retry_after=2.0)
    assert not limit.can_start()
    clock.now = 1.5
    limit.started()
    limit.throttled(retry_after=1.0)  # within the first pause: extends it by half a second
    assert limit.resume_at == 2.5 and limit.paused == pytest.approx(2.5)
    clock.now = 2.5
    assert limit.can_start()
    limit.started()
    limit.throttled(retry_after=float("inf"))  # not a usable wait: no pause
    assert limit.can_start()


def test_waiters_start_in_turn_as_requests_end():
    limit = AdaptiveLimit("m", ceiling=2)
    order: list[str] = []

    async def request(name: str, done: asyncio.Event) -> None:
        async with limit.slot() as attempt:
            order.append(f"start {name}")
            assert limit.in_flight <= limit.allowed
            await done.wait()
            attempt.answered()

    async def main() -> None:
        events = {name: asyncio.Event() for name in "abcd"}
        tasks = [asyncio.create_task(request(n, e)) for n, e in events.items()]
        for _ in range(5):
            await asyncio.sleep(0)
        assert order == ["start a", "start b"]  # the window holds two
        events["a"].set()
        for _ in range(5):
            await asyncio.sleep(0)
        assert order == ["start a", "start b", "start c"]
        for event in events.values():
            event.set()
        await asyncio.gather(*tasks)

    asyncio.run(main())
    assert limit.peak == 2 and limit.in_flight == 0 and limit.answers == 4


def test_an_attempt_that_never_reports_counts_as_failed():
    limit = AdaptiveLimit("m", ceiling=3)

    async def broken() -> None:
        async with limit.slot():
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        asyncio.run(broken())
    assert limit.in_flight == 0 and limit.answers == 0 and limit.allowed == 3


def test_one_limit_per_model_key_and_a_report_by_model():
    reset_concurrency()
    first = limit_for("key-a", "openai-api/local/agent", 4)
    assert limit_for("key-a", "openai-api/local/agent", 12) is first  # shared, raised
    assert first.ceiling == 12 and first.allowed == 12
    other = limit_for("key-b", "openai-api/local/judge", 6)
    other.started()
    other.throttled(retry_after=0.5)
    report = {r.model: r for r in concurrency_report()}
    assert report["openai-api/local/judge"].rate_limited == 1
    assert report["openai-api/local/judge"].lowest_window == 3
    assert "rate-limited" in report["openai-api/local/judge"].line()
    assert "rate-limited" not in report["openai-api/local/agent"].line()
    reset_concurrency()
    assert concurrency_report() == []
