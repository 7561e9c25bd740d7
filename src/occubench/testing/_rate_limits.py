"""An endpoint's per-minute limits: requests and tokens, answered 429 with a Retry-After.

Real endpoints limit requests per minute (RPM) and tokens per minute (TPM) and answer a
request over either limit with HTTP 429 and the seconds to wait. ``RateLimiter`` does
the same with two token buckets, refilled continuously at the per-minute rates and
holding at most ``burst_seconds`` worth each (so a run cannot borrow a whole minute
up front): a request takes one request and its tokens (prompt and completion) from
both buckets, or, when either holds too little, takes nothing and is told how long
until both hold enough. A refused request costs nothing, as at a real endpoint.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

from pydantic import BaseModel, Field

MAX_RETRY_AFTER = 3600.0
"""The longest wait a refusal names (a request larger than a bucket can ever hold)."""


class RateLimits(BaseModel):
    """Per-minute limits of the test server (None: no such limit)."""

    requests_per_minute: float | None = Field(
        default=None, gt=0, description="Requests per minute (RPM)."
    )
    tokens_per_minute: float | None = Field(
        default=None, gt=0, description="Tokens per minute (TPM), prompt and completion."
    )
    burst_seconds: float = Field(
        default=1.0, gt=0, description="Seconds of each limit a bucket holds at most."
    )


class _Bucket:
    """One continuously refilled bucket: ``rate`` per second, at most ``capacity``."""

    def __init__(self, per_minute: float, burst_seconds: float, now: float) -> None:
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate * burst_seconds)
        self.level = self.capacity
        self.at = now

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.at) * self.rate)
        self.at = now

    def wait(self, cost: float) -> float:
        """Seconds until the bucket holds ``cost`` (0: it does now)."""
        if cost <= self.level:
            return 0.0
        if cost > self.capacity:  # never fits: as long as a full bucket takes
            return min(MAX_RETRY_AFTER, cost / self.rate)
        return (cost - self.level) / self.rate


class RateLimiter:
    """Admits or refuses requests under ``RateLimits`` (thread-safe).

    Args:
        limits: The per-minute limits.
        clock: Monotonic seconds (a test's fake clock).
    """

    def __init__(self, limits: RateLimits, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._lock = threading.Lock()
        now = clock()
        self._requests = (
            _Bucket(limits.requests_per_minute, limits.burst_seconds, now)
            if limits.requests_per_minute
            else None
        )
        self._tokens = (
            _Bucket(limits.tokens_per_minute, limits.burst_seconds, now)
            if limits.tokens_per_minute
            else None
        )

    def admit(self, tokens: int) -> float | None:
        """Take one request of ``tokens`` tokens: None when admitted, else the seconds to wait."""
        with self._lock:
            now = self.clock()
            wanted = [(b, c) for b, c in ((self._requests, 1.0), (self._tokens, tokens)) if b]
            for bucket, _ in wanted:
                bucket.refill(now)
            wait = max((bucket.wait(cost) for bucket, cost in wanted), default=0.0)
            if wait > 0:
                return wait
            for bucket, cost in wanted:
                bucket.level -= cost
            return None


def retry_after_headers(seconds: float) -> dict[str, str]:
    """The headers of a 429 that asks to wait ``seconds``, as OpenAI sends them.

    ``Retry-After`` in whole seconds (rounded up, as the header allows no fraction) and
    ``retry-after-ms`` in milliseconds, which clients read first.
    """
    return {
        "Retry-After": str(max(1, math.ceil(seconds))),
        "retry-after-ms": str(max(1, math.ceil(seconds * 1000))),
    }


def rate_limit_error(seconds: float) -> dict[str, object]:
    """The body of a 429, in OpenAI's error shape."""
    return {
        "error": {
            "message": f"Rate limit reached (test server); try again in {seconds:.3f}s.",
            "type": "requests",
            "code": "rate_limit_exceeded",
        }
    }
