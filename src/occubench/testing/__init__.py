"""A local OpenAI-compatible server (flaky, recording) for trying settings offline and for tests.

Run it alone with ``python -m occubench.testing.openai_server``.
"""

from occubench.testing._openai_server import (
    TRANSIENT_KINDS,
    FailureKind,
    Flakiness,
    HardFailure,
    ScriptedOpenAIServer,
    ServerStats,
)
from occubench.testing._rate_limits import RateLimiter, RateLimits

__all__ = [
    "TRANSIENT_KINDS",
    "FailureKind",
    "Flakiness",
    "HardFailure",
    "RateLimiter",
    "RateLimits",
    "ScriptedOpenAIServer",
    "ServerStats",
]
