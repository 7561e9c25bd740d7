"""A local OpenAI-compatible server that answers with the scripted behaviours.

It lets the real HTTP path (Inspect's ``openai-api`` provider, the OpenAI SDK, httpx)
run offline: the request's ``model`` names a behaviour (``schema-agent``,
``echo-simulator``, ``scripted-judge``), ``latency`` adds a fixed delay per request.
It binds to a loopback address only. ``GET /stats`` returns the request counts.

With ``rate_limits=RateLimits(...)`` it enforces requests and tokens per minute as an
endpoint does: a request over either limit is answered 429 at once, with the seconds to
wait in ``Retry-After`` and ``retry-after-ms`` (``occubench.testing._rate_limits``).

With ``flaky=Flakiness(...)`` it behaves like a real, unreliable endpoint: a seeded
share of the distinct completion requests fail on their first attempt(s) with a 429
(with ``Retry-After``), a 500, no answer (timeout), a dropped connection, or a 200
whose body is truncated (not JSON) or has no ``choices``. Which requests fail, and how,
is a pure function of the seed and the request body; a request asked again after its
failures gets the scripted answer, which is itself a function of the body. So a client
that retries ends with exactly the answers of a clean run. With ``per_attempt=True``
every attempt fails with that probability instead, independently (a retry can fail
again): the n-th attempt of a request fails or not by the seed, the body and n.

With ``hold=Hold(...)`` a run stops part-way at a count of samples, however fast or slow
the machine: the server answers the first request of that many samples, then leaves each
later sample's first request unanswered until ``release()``; with ``Hold(turn=N)`` every
sample's agent request at its N-th turn is held instead (every sample in flight, N turns
answered; the strict wire servers take ``hold_turn``). A test kills or interrupts the run
there, by what was done rather than by how long it took.

Run it alone with ``python -m occubench.testing.openai_server --port 8000``, then
``LOCAL_BASE_URL=http://127.0.0.1:8000/v1 LOCAL_API_KEY=x`` and models
``openai-api/local/schema-agent`` etc.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
import time
from collections import Counter
from collections.abc import Mapping
from typing import Any, NamedTuple

from inspect_ai.model import messages_from_openai
from inspect_ai.tool import ToolInfo, ToolParams

from occubench.calls import prompt_tokens, reply_tokens
from occubench.providers import FunctionCall
from occubench.providers import completion_body as chat_completion_body
from occubench.scripted import BEHAVIOURS, Behaviour, Reply
from occubench.testing._hooks import FailureKind, Flakiness, HardFailure, Hold, request_key
from occubench.testing._rate_limits import RateLimits
from occubench.testing._server import JsonAnswer, LocalServer, Send, WireRequest


class Sent(NamedTuple):
    """One request as it reached the server."""

    body: bytes
    """The raw body."""
    headers: dict[str, str]
    """Its headers, as sent."""


class ServerStats:
    """Counts kept by the server: requests per model, injected failures, retries, peak load."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests: Counter[str] = Counter()
        self.prompt_tokens: Counter[str] = Counter()
        self.answered: Counter[str] = Counter()
        self.rate_limited: Counter[str] = Counter()
        self.failures: Counter[str] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self.abandoned = 0
        """Timeouts that the client ended itself (it closed the connection it waited on)."""
        self.held = 0
        """Requests held by ``Hold`` so far."""
        self._started: set[str] = set()
        self._attempts: Counter[str] = Counter()
        self._failed: Counter[str] = Counter()
        self._keys: set[str] = set()

    def enter(self, model: str, prompt_tokens: int) -> int:
        """A request for ``model`` started; its number among that model's requests."""
        with self._lock:
            self.requests[model] += 1
            self.prompt_tokens[model] += prompt_tokens
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            return self.requests[model]

    def answer(self, model: str) -> None:
        """A completion was answered (HTTP 200, a billed call)."""
        with self._lock:
            self.answered[model] += 1

    def limit(self, model: str) -> None:
        """A request was refused by the rate limits (HTTP 429, not billed)."""
        with self._lock:
            self.rate_limited[model] += 1

    def fail_hard(self) -> None:
        """A request was refused for good (``HardFailure``)."""
        with self._lock:
            self.failures["hard"] += 1

    def authorized(self, headers: Mapping[str, str]) -> None:
        """Note the keys a request carried (as digests: the keys themselves are not kept).

        The bearer token of ``Authorization`` and the values of ``X-Api-Key``/``Api-Key``.
        """
        lower = {name.lower(): value for name, value in headers.items()}
        bearer = lower.get("authorization") or ""
        found = [bearer[7:]] if bearer.startswith("Bearer ") else []
        found += [lower[name] for name in ("x-api-key", "api-key") if lower.get(name)]
        with self._lock:
            self._keys.update(hashlib.sha256(k.encode()).hexdigest() for k in found)

    def saw_key(self, key: str) -> bool:
        """Whether some request carried this API key (never served at ``/stats``)."""
        with self._lock:
            return hashlib.sha256(key.encode()).hexdigest() in self._keys

    def leave(self) -> None:
        """A request ended."""
        with self._lock:
            self.in_flight -= 1

    def abandon(self) -> None:
        """The client gave up on a request that timed out (closed its connection)."""
        with self._lock:
            self.abandoned += 1

    def holds(self, hold: Hold | None, model: str, body: dict[str, Any]) -> bool:
        """Whether ``hold`` keeps this request unanswered (counted in ``held`` if so)."""
        if hold is not None and hold.at_turn(model, body):
            with self._lock:
                self.held += 1
            return True
        if hold is None or hold.turn is not None or not hold.starts_sample(model, body):
            return False
        key = request_key(body)
        with self._lock:
            if key in self._started or len(self._started) < hold.samples:
                self._started.add(key)
                return False
            self.held += 1
            return True

    def attempt(self, key: str, flaky: Flakiness | None) -> FailureKind | None:
        """Count one attempt of the request ``key``; the failure to inject, if any."""
        with self._lock:
            self._attempts[key] += 1
            if flaky is None:
                return None
            if flaky.per_attempt:
                kind = flaky.planned(f"{key}:{self._attempts[key]}")
            else:
                kind = flaky.planned(key)
                if kind is not None and self._failed[key] >= flaky.failures:
                    kind = None
            if kind is None:
                return None
            self._failed[key] += 1
            self.failures[kind.value] += 1
            return kind

    @property
    def retries(self) -> int:
        """Attempts that followed an injected failure of the same request."""
        with self._lock:
            return sum(min(self._attempts[k] - 1, n) for k, n in self._failed.items())

    @property
    def repeated(self) -> int:
        """Attempts beyond the first of each distinct request (retries and repeats alike)."""
        with self._lock:
            return sum(n - 1 for n in self._attempts.values())

    @property
    def distinct(self) -> int:
        """Distinct request bodies seen."""
        with self._lock:
            return len(self._attempts)

    def snapshot(self) -> dict[str, Any]:
        """The counts as JSON (served at ``GET /stats``)."""
        retries, repeated, distinct = self.retries, self.repeated, self.distinct
        with self._lock:
            return {
                "requests": dict(self.requests),
                "prompt_tokens": dict(self.prompt_tokens),
                "answered": dict(self.answered),
                "rate_limited": dict(self.rate_limited),
                "failures": dict(self.failures),
                "retries": retries,
                "repeated": repeated,
                "distinct": distinct,
                "in_flight": self.in_flight,
                "max_in_flight": self.max_in_flight,
                "abandoned": self.abandoned,
                "held": self.held,
            }


def completion_body(model: str, reply: Reply, prompt_tokens: int) -> dict[str, Any]:
    """An OpenAI chat.completion response for a scripted reply."""
    return chat_completion_body(
        completion_id=f"chatcmpl-{prompt_tokens}",
        model=model,
        content=reply.content or None,
        tool_calls=[
            FunctionCall(f"call_{i}_{prompt_tokens}", name, args)
            for i, (name, args) in enumerate(reply.tool_calls)
        ],
        prompt_tokens=prompt_tokens,
        completion_tokens=reply_tokens(reply.content, reply.tool_calls),
    )


async def answer_async(
    body: dict[str, Any], behaviours: Mapping[str, Behaviour] = BEHAVIOURS
) -> tuple[str, Reply, int]:
    """Run the behaviour the request's model names; returns (model, reply, prompt tokens)."""
    model = str(body.get("model", "")).split("/")[-1]
    if model not in behaviours:
        raise KeyError(f"unknown model {model!r}; known: {', '.join(sorted(behaviours))}")
    messages = await messages_from_openai(body.get("messages", []))
    tools = [
        ToolInfo(
            name=t["function"]["name"],
            description=t["function"].get("description", ""),
            parameters=ToolParams.model_validate(t["function"].get("parameters") or {}),
        )
        for t in body.get("tools") or []
    ]
    prompt = prompt_tokens(messages, tools)
    return model, behaviours[model](messages, tools), prompt


def answer(
    body: dict[str, Any], behaviours: Mapping[str, Behaviour] = BEHAVIOURS
) -> tuple[str, Reply, int]:
    """``answer_async`` for a thread without an event loop (one request handler)."""
    return asyncio.run(answer_async(body, behaviours))


class ScriptedOpenAIServer(LocalServer):
    """The server, run in a background thread: ``with ScriptedOpenAIServer() as s: s.base_url``.

    Args:
        host: A loopback address (anything else is refused).
        port: Port to bind (0: any free port).
        latency: Seconds added to every completion request.
        flaky: Fail a seeded share of the requests at first (see ``Flakiness``).
        behaviours: More models, by name, beside ``BEHAVIOURS`` (e.g. a test's own agent).
        record: Keep every completion request, in arrival order (``recorded``: the bodies,
            ``sent``: raw bodies and headers).
        hard_failures: Requests refused for good with HTTP 400 (a forced sample error).
        rate_limits: Per-minute request and token limits, answered 429 with a Retry-After
            (``RateLimits``).
        hold: Leave the first request of the samples past a count unanswered until
            ``release()`` (see ``Hold``).
    """

    base_path = "/v1"

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        latency: float = 0.0,
        flaky: Flakiness | None = None,
        behaviours: Mapping[str, Behaviour] | None = None,
        record: bool = False,
        hard_failures: list[HardFailure] | None = None,
        rate_limits: RateLimits | None = None,
        hold: Hold | None = None,
    ) -> None:
        super().__init__(
            host, port, record=record, latency=latency, flaky=flaky, rate_limits=rate_limits
        )
        self.stats = ServerStats()
        """Request counts so far."""
        self.behaviours: dict[str, Behaviour] = {**BEHAVIOURS, **(behaviours or {})}
        self.hard_failures = list(hard_failures or [])
        self.hold = hold

    def malformed(self, message: str) -> JsonAnswer:
        """A body that is not JSON: 400."""
        return JsonAnswer(400, {"error": {"message": message, "type": "invalid_request_error"}})

    def keep(self, request: WireRequest) -> None:
        """Record a completion request (the model list and the stats are not kept)."""
        if request.method == "POST":
            super().keep(request)

    def respond(self, request: WireRequest, reply: Send) -> None:
        """The stats and model list (GET), or a completion with the hooks on the way."""
        if request.method == "GET":
            reply(self._listing(request.path))
            return
        arrived = time.monotonic()
        body = request.body if request.body is not None else {}
        try:
            model, scripted, prompt_tokens = answer(body, self.behaviours)
        except (KeyError, ValueError) as e:
            reply(self.malformed(str(e)))
            return
        stats = self.stats
        number = stats.enter(model, prompt_tokens)
        stats.authorized(request.headers)
        try:
            if HardFailure(model=model, call=number) in self.hard_failures:
                stats.fail_hard()
                error = {
                    "message": f"request {number} refused (injected)",
                    "type": "invalid_request",
                }
                reply(JsonAnswer(400, {"error": error}))
                return
            if stats.holds(self.hold, model, body):
                self.wait_released()
            completion = JsonAnswer(200, completion_body(model, scripted, prompt_tokens))
            refusal = self.admit(completion.payload["usage"]["total_tokens"])
            if refusal is not None:  # refused at once, as an endpoint does
                stats.limit(model)
                reply(refusal)
                return
            self.pace(arrived)  # the latency is the whole answer time, work included
            failure = stats.attempt(request_key(body), self.flaky)
            if failure is None:
                reply(completion)
                stats.answer(model)
            else:
                reply(self.failure(failure, completion, request, stats.abandon))
        finally:
            stats.leave()

    def _listing(self, path: str) -> JsonAnswer:
        if path.rstrip("/").endswith("/stats"):
            return JsonAnswer(200, self.stats.snapshot())
        if path.rstrip("/").endswith("/models"):
            models = [
                {"id": n, "object": "model", "owned_by": "occubench"} for n in self.behaviours
            ]
            return JsonAnswer(200, {"object": "list", "data": models})
        return JsonAnswer(404, {"error": {"message": f"no route {path}"}})

    @property
    def recorded(self) -> list[dict[str, Any]]:
        """The completion requests' bodies so far, in arrival order (with ``record=True``)."""
        return [json.loads(sent.body) for sent in self.sent]

    @property
    def sent(self) -> list[Sent]:
        """The completion requests as they arrived: raw body and headers (``record=True``)."""
        return [Sent(request.raw, request.headers) for request in self.requests]
