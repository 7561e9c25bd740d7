"""Requests in flight per model that follow the endpoint: AIMD with Retry-After.

A real endpoint limits requests and tokens per minute and answers a request over the
limit with HTTP 429 and a ``Retry-After``. A fixed number of connections is wrong one
way or the other: too many and the run spends its time in backoff, too few and it
leaves throughput unused. ``AdaptiveLimit`` is the window of requests one model may
have in flight, adjusted by what the endpoint answers:

- every answer grows the window by ``1 / window`` (one more request per window of
  answers, additive increase), up to the ceiling (``--max-connections``, the run's
  upper bound); it starts at the ceiling, so an endpoint without limits never waits;
- a rate-limited answer (429) halves it (multiplicative decrease, never below one), at
  most once per round: a further cut needs as many responses since the last cut as the
  window then held, so one burst of 429s is one cut;
- a ``Retry-After`` (seconds) pauses the model's new attempts until that time, retries
  included: the endpoint said when it takes requests again.

Everything is counted in responses, not time, so tests drive it with scripted answers;
only the Retry-After pause reads a clock (``clock``, replaceable). Each model (its
provider and connection key, as Inspect pools connections) has one limit per process
(``limit_for``), shared by every role that calls it; ``concurrency_report`` says what
each reached, for a run's summary.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import anyio
from pydantic import BaseModel, Field

MULTIPLICATIVE_DECREASE = 0.5
"""The window after a rate-limited answer, as a share of the window before it."""


class ModelConcurrency(BaseModel):
    """What one model's adaptive limit reached in a run (one process)."""

    model: str = Field(description="The model (provider/model).")
    ceiling: int = Field(description="The upper bound: the model's max connections.")
    peak_in_flight: int = Field(description="Most requests in flight at once.")
    window: int = Field(description="Requests the window allowed at the end.")
    lowest_window: int = Field(description="The smallest window after a rate-limited answer.")
    answers: int = Field(description="Answers received (any status but 429).")
    rate_limited: int = Field(description="Rate-limited answers (HTTP 429) received.")
    paused_seconds: float = Field(
        description="Seconds new attempts waited for a Retry-After, summed over the pauses."
    )

    def line(self) -> str:
        """One line for a run's summary."""
        text = (
            f"{self.model}: up to {self.peak_in_flight} requests in flight (limit {self.ceiling})"
        )
        if self.rate_limited:
            text += (
                f"; {self.rate_limited} rate-limited answer(s): the window went down to "
                f"{self.lowest_window} and ended at {self.window}, "
                f"{self.paused_seconds:.1f} s paused for Retry-After"
            )
        return text


class AdaptiveLimit:
    """The adaptive window of one model's requests in flight (see the module's docstring).

    Args:
        model: The model's name, for reports.
        ceiling: Requests in flight at most (the window starts there).
        clock: Monotonic seconds (a test's fake clock).
    """

    def __init__(
        self, model: str, ceiling: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if ceiling < 1:
            raise ValueError(f"the ceiling must be at least 1 (got {ceiling})")
        self.model = model
        self.ceiling = ceiling
        self.window = float(ceiling)
        self.lowest = ceiling
        self.in_flight = 0
        self.peak = 0
        self.answers = 0
        self.rate_limited = 0
        self.resume_at = -math.inf
        self.paused = 0.0
        self.clock = clock
        self._since_cut = 0
        self._round = 0
        self._waiters: deque[anyio.Event] = deque()

    @property
    def allowed(self) -> int:
        """Requests the window lets be in flight now (at least one)."""
        return max(1, int(self.window))

    def raise_ceiling(self, ceiling: int) -> None:
        """Let the window grow to ``ceiling`` if that is more than now (a model shared by roles)."""
        if ceiling > self.ceiling:
            self.window += ceiling - self.ceiling
            self.ceiling = ceiling

    def can_start(self) -> bool:
        """Whether one more request may start now (window and Retry-After pause)."""
        return self.in_flight < self.allowed and self.clock() >= self.resume_at

    def started(self) -> None:
        """A request started (the caller checked ``can_start``)."""
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)

    def answered(self) -> None:
        """A request ended with an answer (any status but 429): the window grows."""
        self._ended()
        self.answers += 1
        self.window = min(float(self.ceiling), self.window + 1.0 / self.window)
        self._wake()

    def throttled(self, retry_after: float | None = None) -> None:
        """A request was answered 429: halve the window once per round, honour Retry-After."""
        self._ended()
        self.rate_limited += 1
        if self._since_cut >= self._round:
            self.window = max(1.0, self.window * MULTIPLICATIVE_DECREASE)
            self.lowest = min(self.lowest, self.allowed)
            self._round, self._since_cut = self.allowed, 0
        if retry_after is not None and math.isfinite(retry_after) and retry_after > 0:
            now = self.clock()
            until = now + retry_after
            if until > self.resume_at:
                self.paused += until - max(now, self.resume_at)
                self.resume_at = until
        self._wake()

    def failed(self) -> None:
        """A request ended without an answer to learn from (5xx, timeout): no change."""
        self._ended()
        self._wake()

    def _ended(self) -> None:
        self.in_flight = max(0, self.in_flight - 1)
        self._since_cut += 1

    def _wake(self) -> None:
        """Wake as many waiters as may start now (each checks again itself)."""
        free = self.allowed - self.in_flight
        while free > 0 and self._waiters:
            self._waiters.popleft().set()
            free -= 1

    async def acquire(self) -> None:
        """Wait until a request may start (window, Retry-After), then count it in flight."""
        while not self.can_start():
            wait = self.resume_at - self.clock()
            if wait > 0:
                await anyio.sleep(wait)
                continue
            event = anyio.Event()
            self._waiters.append(event)
            try:
                await event.wait()
            except BaseException:  # cancelled: leave the queue, pass a wake-up on
                if event in self._waiters:
                    self._waiters.remove(event)
                elif event.is_set():
                    self._wake()
                raise
        self.started()
        self._wake()  # more room (a grown window, the end of a pause): pass the turn on

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[Attempt]:
        """``async with limit.slot() as attempt:`` one request, which reports how it ended.

        An attempt that ends without a report (cancelled, an unexpected error) counts as
        ``failed``.
        """
        await self.acquire()
        attempt = Attempt(self)
        try:
            yield attempt
        finally:
            if not attempt.reported:
                self.failed()

    def report(self) -> ModelConcurrency:
        """What this limit reached so far."""
        return ModelConcurrency(
            model=self.model,
            ceiling=self.ceiling,
            peak_in_flight=self.peak,
            window=self.allowed,
            lowest_window=self.lowest,
            answers=self.answers,
            rate_limited=self.rate_limited,
            paused_seconds=round(self.paused, 3),
        )


class Attempt:
    """One request in flight under an ``AdaptiveLimit``: reports its end once."""

    def __init__(self, limit: AdaptiveLimit) -> None:
        self.limit = limit
        self.reported = False

    def answered(self) -> None:
        """It got an answer (any status but 429)."""
        self._report(self.limit.answered)

    def throttled(self, retry_after: float | None = None) -> None:
        """It was rate-limited (429), with the answer's Retry-After seconds if any."""
        self._report(lambda: self.limit.throttled(retry_after))

    def failed(self) -> None:
        """It got no answer to learn from (5xx, timeout, dropped connection)."""
        self._report(self.limit.failed)

    def _report(self, report: Callable[[], None]) -> None:
        if not self.reported:
            self.reported = True
            report()


_lock = threading.Lock()
_limits: dict[str, AdaptiveLimit] = {}


def limit_for(key: str, model: str, ceiling: int) -> AdaptiveLimit:
    """The process's adaptive limit of the model with this connection key (made once).

    ``key`` tells endpoints and accounts apart (it may hold a secret: it is never shown);
    ``model`` names it in reports.
    """
    with _lock:
        found = _limits.get(key)
        if found is None:
            found = _limits[key] = AdaptiveLimit(model, ceiling)
        else:
            found.raise_ceiling(ceiling)
        return found


def reset_concurrency() -> None:
    """Forget every model's limit (a new run starts from its ceilings)."""
    with _lock:
        _limits.clear()


def concurrency_report() -> list[ModelConcurrency]:
    """What each model's limit reached since the last reset, by model name."""
    with _lock:
        limits = list(_limits.values())
    return sorted((limit.report() for limit in limits), key=lambda r: r.model)
