"""What a local server can do besides answering: fail, refuse for good, hold.

The hooks of the one HTTP stack (``occubench.testing._server.LocalServer``), any server's
to use. ``Flakiness`` fails a seeded share of the requests as an unreliable endpoint
does, ``HardFailure`` refuses one request for good, ``Hold`` leaves requests unanswered
until the server is released (so a test stops a run part-way by what was done, not by how
long it took); the per-minute limits are ``occubench.testing._rate_limits``'.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from enum import Enum
from typing import Any

from pydantic import BaseModel, Field

from occubench.defaults import PREFLIGHT_TOOL_NAME


class FailureKind(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """How the flaky server fails one attempt of a completion request."""

    RATE_LIMIT = "rate_limit"
    """HTTP 429 with a ``Retry-After`` header."""
    SERVER_ERROR = "server_error"
    """HTTP 500 with an error body."""
    TIMEOUT = "timeout"
    """No answer until the client gives up (at most ``Flakiness.hang`` seconds), then the
    connection closes."""
    DISCONNECT = "disconnect"
    """The connection closes at once, with no answer."""
    BAD_JSON = "bad_json"
    """HTTP 200 whose body is not valid JSON: the completion cut off mid-object."""
    NO_CHOICES = "no_choices"
    """HTTP 200 with a JSON completion that has no ``choices``."""
    AUTH_ERROR = "auth_error"
    """HTTP 401 whose body quotes the API key the request carried, as some providers do."""


TRANSIENT_KINDS: list[FailureKind] = [k for k in FailureKind if k is not FailureKind.AUTH_ERROR]
"""The failures a client is right to retry (the default kinds)."""


class Flakiness(BaseModel):
    """Which completion requests the server fails, and how (seeded, deterministic)."""

    rate: float = Field(
        default=0.3, ge=0.0, le=1.0, description="Share of distinct requests that fail at first."
    )
    seed: int = Field(default=0, description="Seed of the choice of requests and kinds.")
    kinds: list[FailureKind] = Field(
        default_factory=lambda: list(TRANSIENT_KINDS),
        min_length=1,
        description="Failure kinds, chosen per request by the seeded hash.",
    )
    failures: int = Field(
        default=1, ge=1, description="Attempts of a chosen request that fail before it succeeds."
    )
    per_attempt: bool = Field(
        default=False,
        description="Fail every attempt with probability rate, independently (a retry can "
        "fail again), instead of the first attempts of a chosen share of the requests.",
    )
    retry_after: float = Field(
        default=0.1, ge=0.0, description="Seconds sent in the Retry-After header of a 429."
    )
    hang: float = Field(
        default=3.0,
        gt=0.0,
        description="Seconds a timeout holds the request at most: it ends sooner when the "
        "client gives up (closes the connection).",
    )

    def planned(self, key: str) -> FailureKind | None:
        """The failure planned for the request with this key, or None (always the same)."""
        digest = hashlib.sha256(f"{self.seed}:{key}".encode()).digest()
        if int.from_bytes(digest[:8], "big") / 2**64 >= self.rate:
            return None
        return self.kinds[int.from_bytes(digest[8:16], "big") % len(self.kinds)]


def turn_of(body: Mapping[str, Any]) -> int:
    """The assistant turns a request's messages hold (chat completions and Anthropic alike)."""
    messages = body.get("messages") or []
    return sum(isinstance(m, dict) and m.get("role") == "assistant" for m in messages)


def is_preflight(body: Mapping[str, Any]) -> bool:
    """Whether a request is the preflight's (its one tool, ``PREFLIGHT_TOOL_NAME``)."""
    tools = body.get("tools") or []
    names = {
        t.get("function", {}).get("name") or t.get("name") for t in tools if isinstance(t, dict)
    }
    return names == {PREFLIGHT_TOOL_NAME}


def at_turn(body: Mapping[str, Any], turn: int) -> bool:
    """Whether a request is of a sample at or past ``turn`` (never the preflight's)."""
    return turn_of(body) >= turn and not is_preflight(body)


class Hold(BaseModel):
    """Samples past a count wait: each later sample's first request is held, unanswered.

    A sample's first request is the agent model's request with tools and no assistant
    message yet. Those of the first ``samples`` distinct such requests are answered (a
    retry of one is answered too); each later one stays open, unanswered, until
    ``ScriptedOpenAIServer.release()``. Requests of samples already started, and of the
    other models, are answered as usual. A held request keeps its client's connection:
    where the client limits connections, run fewer samples at once than that limit
    (one at a time is surest), or the started samples wait behind the held ones.
    """

    model: str = Field(description="The agent's model, as requests name it (its last part).")
    samples: int = Field(ge=0, description="Samples whose first request is answered.")
    turn: int | None = Field(
        default=None,
        ge=1,
        description="Hold every sample at this turn instead: each request of ``model`` whose "
        "messages hold this many assistant turns or more is held (``samples`` is then unused).",
    )

    def at_turn(self, model: str, body: Mapping[str, Any]) -> bool:
        """Whether this request is of a sample at or past ``turn`` (never the preflight's)."""
        return self.turn is not None and model == self.model and at_turn(body, self.turn)

    def starts_sample(self, model: str, body: Mapping[str, Any]) -> bool:
        """Whether this request is the first of a sample (by ``model``, with no answer yet).

        The preflight's request (its one tool, ``PREFLIGHT_TOOL_NAME``) starts none.
        """
        return (
            model == self.model
            and bool(body.get("tools"))
            and not is_preflight(body)
            and turn_of(body) == 0
        )


class HardFailure(BaseModel):
    """One request the server refuses for good: the n-th for a model, answered HTTP 400."""

    model: str = Field(description="The model (behaviour) whose request fails.")
    call: int = Field(ge=1, description="Which of that model's requests fails (1-based).")


def request_key(body: dict[str, Any]) -> str:
    """A digest of a request body: equal bodies (a retry, a repeated vote) share it."""
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
