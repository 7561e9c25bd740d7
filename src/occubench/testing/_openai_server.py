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
import ipaddress
import json
import select
import socket
import sys
import threading
import time
from collections import Counter
from collections.abc import Mapping
from enum import Enum
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple, cast

from inspect_ai.model import messages_from_openai
from inspect_ai.tool import ToolInfo, ToolParams
from pydantic import BaseModel, Field

from occubench.calls import prompt_tokens, reply_tokens
from occubench.defaults import PREFLIGHT_TOOL_NAME
from occubench.errors import UsageError
from occubench.scripted import BEHAVIOURS, Behaviour, Reply
from occubench.testing._rate_limits import (
    RateLimiter,
    RateLimits,
    rate_limit_error,
    retry_after_headers,
)
from occubench.testing._server import is_preflight, turn_of


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
        if self.turn is None or model != self.model:
            return False
        return turn_of(body) >= self.turn and not is_preflight(body)

    def starts_sample(self, model: str, body: Mapping[str, Any]) -> bool:
        """Whether this request is the first of a sample (by ``model``, with no answer yet).

        The preflight's request (its one tool, ``PREFLIGHT_TOOL_NAME``) starts none.
        """
        messages = body.get("messages") or []
        tools = body.get("tools") or []
        names = {t.get("function", {}).get("name") for t in tools if isinstance(t, dict)}
        return (
            model == self.model
            and bool(tools)
            and names != {PREFLIGHT_TOOL_NAME}
            and not any(isinstance(m, dict) and m.get("role") == "assistant" for m in messages)
        )


class HardFailure(BaseModel):
    """One request the server refuses for good: the n-th for a model, answered HTTP 400."""

    model: str = Field(description="The model (behaviour) whose request fails.")
    call: int = Field(ge=1, description="Which of that model's requests fails (1-based).")


def request_key(body: dict[str, Any]) -> str:
    """A digest of a request body: equal bodies (a retry, a repeated vote) share it."""
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


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
    calls = [
        {
            "id": f"call_{i}_{prompt_tokens}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)},
        }
        for i, (name, args) in enumerate(reply.tool_calls)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
    if calls:
        message["tool_calls"] = calls
    completion_tokens = reply_tokens(reply.content, reply.tool_calls)
    return {
        "id": f"chatcmpl-{prompt_tokens}",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


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


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ScriptedOpenAIServer._HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """Stay quiet: tests and benchmarks read the stats instead."""

    def _send_bytes(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _send(
        self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        self._send_bytes(status, json.dumps(payload).encode(), headers)

    def do_GET(self) -> None:  # noqa: N802
        if self.path.rstrip("/").endswith("/stats"):
            self._send(200, self.server.stats.snapshot())
        elif self.path.rstrip("/").endswith("/models"):
            names = self.server.behaviours
            models = [{"id": n, "object": "model", "owned_by": "occubench"} for n in names]
            self._send(200, {"object": "list", "data": models})
        else:
            self._send(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:  # noqa: N802
        arrived = time.monotonic()
        length = int(self.headers.get("Content-Length", 0))
        try:
            raw = self.rfile.read(length)
            body = json.loads(raw or b"{}")
            if self.server.recorded is not None:
                with self.server.record_lock:
                    self.server.recorded.append(Sent(raw, dict(self.headers.items())))
            model, reply, prompt_tokens = answer(body, self.server.behaviours)
        except (KeyError, ValueError) as e:
            self._send(400, {"error": {"message": str(e), "type": "invalid_request_error"}})
            return
        stats = self.server.stats
        number = stats.enter(model, prompt_tokens)
        stats.authorized(dict(self.headers.items()))
        if HardFailure(model=model, call=number) in self.server.hard_failures:
            stats.fail_hard()
            error = {"message": f"request {number} refused (injected)", "type": "invalid_request"}
            self._send(400, {"error": error})
            stats.leave()
            return
        try:
            if stats.holds(self.server.hold, model, body):
                self.server.released.wait()
            completion = completion_body(model, reply, prompt_tokens)
            if self.server.limiter is not None:
                wait = self.server.limiter.admit(completion["usage"]["total_tokens"])
                if wait is not None:  # refused at once, as an endpoint does
                    stats.limit(model)
                    self._send(429, rate_limit_error(wait), retry_after_headers(wait))
                    return
            if self.server.latency:  # the latency is the whole answer time, work included
                time.sleep(max(0.0, arrived + self.server.latency - time.monotonic()))
            failure = stats.attempt(request_key(body), self.server.flaky)
            if failure is None:
                self._send(200, completion)
                stats.answer(model)
            else:
                self._fail(failure, completion)
        finally:
            stats.leave()

    def _fail(self, kind: FailureKind, completion: dict[str, Any]) -> None:
        flaky = self.server.flaky
        assert flaky is not None
        if kind is FailureKind.RATE_LIMIT:
            error = {"message": "rate limit reached (injected)", "type": "rate_limit_error"}
            self._send(429, {"error": error}, {"Retry-After": f"{flaky.retry_after:g}"})
        elif kind is FailureKind.SERVER_ERROR:
            error = {"message": "internal error (injected)", "type": "server_error"}
            self._send(500, {"error": error})
        elif kind is FailureKind.BAD_JSON:
            data = json.dumps(completion).encode()
            self._send_bytes(200, data[: len(data) // 2])  # cut off mid-object
        elif kind is FailureKind.NO_CHOICES:
            self._send(200, {k: v for k, v in completion.items() if k != "choices"})
        elif kind is FailureKind.AUTH_ERROR:
            key = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            error = {"message": f"Incorrect API key provided: {key}", "type": "invalid_api_key"}
            self._send(401, {"error": error})
        else:
            if kind is FailureKind.TIMEOUT and self._client_gave_up(flaky.hang):
                self.server.stats.abandon()
            self.close_connection = True  # no status line: the client sees a dropped connection

    def _client_gave_up(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for the client to close the connection; whether it did."""
        readable, _, _ = select.select([self.connection], [], [], seconds)
        if not readable:
            return False
        try:
            peeked: bytes = self.connection.recv(1, socket.MSG_PEEK)
        except ConnectionError:
            return True
        return peeked == b""


class ScriptedOpenAIServer:
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

    class _HTTPServer(ThreadingHTTPServer):
        daemon_threads = True
        stats: ServerStats
        latency: float
        flaky: Flakiness | None
        behaviours: Mapping[str, Behaviour]
        recorded: list[Sent] | None
        record_lock: threading.Lock
        hard_failures: list[HardFailure]
        limiter: RateLimiter | None
        hold: Hold | None
        released: threading.Event

        def handle_error(self, request: Any, client_address: Any) -> None:
            """A client that gave up (timeout, retry) is expected: no traceback on stderr."""
            if not isinstance(sys.exc_info()[1], ConnectionError):
                super().handle_error(request, client_address)

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
        if not ipaddress.ip_address(host).is_loopback:
            raise UsageError(f"the test server binds to loopback only, not {host}")
        self._server = self._HTTPServer((host, port), _Handler)
        self._server.stats = ServerStats()
        self._server.latency = latency
        self._server.flaky = flaky
        self._server.behaviours = {**BEHAVIOURS, **(behaviours or {})}
        self._server.recorded = [] if record else None
        self._server.record_lock = threading.Lock()
        self._server.hard_failures = list(hard_failures or [])
        self._server.limiter = RateLimiter(rate_limits) if rate_limits else None
        self._server.hold = hold
        self._server.released = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def recorded(self) -> list[dict[str, Any]]:
        """The completion requests' bodies so far, in arrival order (with ``record=True``)."""
        return [json.loads(sent.body) for sent in self.sent]

    @property
    def sent(self) -> list[Sent]:
        """The completion requests as they arrived: raw body and headers (``record=True``)."""
        with self._server.record_lock:
            return list(self._server.recorded or [])

    @property
    def stats(self) -> ServerStats:
        """Request counts so far."""
        return self._server.stats

    @property
    def base_url(self) -> str:
        """The OpenAI base URL (``http://127.0.0.1:PORT/v1``)."""
        host, port = cast(tuple[str, int], self._server.server_address[:2])
        return f"http://{host}:{port}/v1"

    def start(self) -> ScriptedOpenAIServer:
        """Serve in a daemon thread."""
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def release(self) -> None:
        """Answer the requests ``hold`` keeps, and every later one."""
        self._server.released.set()

    def stop(self) -> None:
        """Stop serving and release the port (held requests are let go)."""
        self.release()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
