"""What every strict local wire server shares: loopback serving, routing, refusals, counts.

A wire server speaks one provider's native API (Anthropic Messages, OpenAI Responses,
Google generateContent, OpenAI-compatible chat with reasoning) on 127.0.0.1, answers each
request with a scripted behaviour (``occubench.scripted``) named by the request's model,
and refuses, with that provider's own status and error shape, what the real API refuses.
A subclass implements ``route`` (one request in, one ``JsonAnswer`` or ``StreamAnswer``
out) and raises ``Refused`` for a request the real API would refuse; the base answers
it, counts it in ``WireStats.refused`` and keeps the request when recording.

``PrefixCache`` is the prompt cache the servers account with: the longest stored prefix
of a request is read from cache, and what the request marks (or the provider stores by
itself) is written, each provider with its own rules.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import ipaddress
import json
import secrets
import select
import socket
import sys
import threading
import time
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple, Self, cast
from urllib.parse import parse_qs, urlsplit

from inspect_ai.model import ChatMessage
from inspect_ai.tool import ToolInfo

from occubench.errors import UsageError
from occubench.providers import Event, sse
from occubench.scripted import BEHAVIOURS, Behaviour, Reply
from occubench.testing._hooks import FailureKind, Flakiness, at_turn
from occubench.testing._rate_limits import (
    RateLimiter,
    RateLimits,
    rate_limit_error,
    retry_after_headers,
)

MAX_BODY_BYTES = 32 * 1024 * 1024
"""A request body larger than this is refused before it is read (413)."""


class WireRequest(NamedTuple):
    """One request as it reached a wire server."""

    method: str
    path: str
    """The path without its query."""
    query: dict[str, str]
    """The query's parameters (the last value of each)."""
    headers: dict[str, str]
    """Header names lower-cased."""
    body: Any
    """The JSON body (None for a request without one)."""
    raw: bytes


class JsonAnswer(NamedTuple):
    """A JSON response."""

    status: int
    payload: Any
    headers: Mapping[str, str] = {}


class StreamAnswer(NamedTuple):
    """A server-sent-events response: (event name or None, data) in order."""

    events: Sequence[Event]
    headers: Mapping[str, str] = {}


class RawAnswer(NamedTuple):
    """A body sent as it is, as JSON (a flaky endpoint's cut-off completion)."""

    status: int
    data: bytes
    headers: Mapping[str, str] = {}


class NoAnswer(NamedTuple):
    """No status line: the connection closes, with no answer (a timeout, a dropped line).

    ``hang``: seconds to wait first for the client to give up (close its end), which
    ``gave_up`` is told.
    """

    hang: float = 0.0
    gave_up: Callable[[], None] | None = None


Answer = JsonAnswer | StreamAnswer | RawAnswer | NoAnswer
Send = Callable[[Answer], None]
"""Sends one answer to the request being served."""


class Refused(Exception):  # noqa: N818 - a refusal the wire answers, not a bug
    """A request the real API refuses: answered ``status`` with the provider's error body."""

    def __init__(self, status: int, payload: Any, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.payload = payload
        self.message = message


class WireStats:
    """Counts kept by a wire server (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests: Counter[str] = Counter()
        """Requests per model (every request that named one, refused or not)."""
        self.answered: Counter[str] = Counter()
        """Requests answered 200 per model."""
        self.refused: list[str] = []
        """The message of each refusal, in order."""
        self.input_tokens: Counter[str] = Counter()
        """Input tokens billed per model (cache reads and writes included)."""
        self.cache_read_tokens: Counter[str] = Counter()
        """Input tokens read from the prompt cache, per model."""
        self.cache_write_tokens: Counter[str] = Counter()
        """Input tokens written to the prompt cache, per model."""
        self.output_tokens: Counter[str] = Counter()
        """Output tokens (reasoning included) per model."""
        self.held = 0
        """Requests held at ``hold_turn`` so far."""

    def hold(self) -> None:
        """A request is held."""
        with self._lock:
            self.held += 1

    def request(self, model: str) -> None:
        """A request for ``model`` arrived."""
        with self._lock:
            self.requests[model] += 1

    def refuse(self, message: str) -> None:
        """A request was refused."""
        with self._lock:
            self.refused.append(message)

    def answer(
        self, model: str, *, input_tokens: int, output_tokens: int, read: int = 0, written: int = 0
    ) -> None:
        """A request was answered with this usage."""
        with self._lock:
            self.answered[model] += 1
            self.input_tokens[model] += input_tokens
            self.output_tokens[model] += output_tokens
            self.cache_read_tokens[model] += read
            self.cache_write_tokens[model] += written

    def snapshot(self) -> dict[str, Any]:
        """The counts as JSON."""
        with self._lock:
            return {
                "requests": dict(self.requests),
                "answered": dict(self.answered),
                "refused": list(self.refused),
                "input_tokens": dict(self.input_tokens),
                "cache_read_tokens": dict(self.cache_read_tokens),
                "cache_write_tokens": dict(self.cache_write_tokens),
                "output_tokens": dict(self.output_tokens),
            }


def digest(value: Any) -> str:
    """A stable digest of a JSON value (keys sorted)."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


class PrefixCache:
    """A prompt cache keyed by prefix digests (thread-safe; never evicts within a test).

    A request offers its cacheable prefixes, shortest first, each as (digest, tokens):
    ``read`` gives the tokens of the longest one stored; ``write`` stores some.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stored: dict[str, int] = {}

    def read(self, prefixes: Sequence[tuple[str, int]]) -> int:
        """Tokens of the longest stored prefix among ``prefixes`` (0 if none)."""
        with self._lock:
            hits = [tokens for key, tokens in prefixes if key in self._stored]
        return max(hits, default=0)

    def write(self, prefixes: Sequence[tuple[str, int]]) -> None:
        """Store these prefixes."""
        with self._lock:
            self._stored.update(prefixes)


class Signer:
    """Signs the reasoning a server hands out, and checks what comes back (HMAC-SHA256).

    A provider's signature (Anthropic's thinking ``signature``, Gemini's
    ``thoughtSignature``, OpenAI's ``encrypted_content``) proves the reasoning returned is
    the reasoning the provider gave; each server signs with a secret of its own.
    """

    def __init__(self) -> None:
        self._key = secrets.token_bytes(32)

    def sign(self, text: str) -> str:
        """The signature of ``text`` (base64)."""
        mac = hmac.new(self._key, text.encode(), hashlib.sha256).digest()
        return base64.b64encode(mac).decode()

    def verify(self, text: str, signature: str) -> bool:
        """Whether ``signature`` is this server's signature of ``text``."""
        return hmac.compare_digest(self.sign(text), signature)


def reasoning_text(model: str, turn: int) -> str:
    """The reasoning a server says its model did before answering turn ``turn``."""
    return f"{model} considers the task and its tools before answer {turn}."


def scripted_reply(
    behaviours: Mapping[str, Behaviour],
    model: str,
    messages: list[ChatMessage],
    tools: list[ToolInfo],
) -> Reply:
    """The reply of the behaviour ``model`` names (its last ``/`` part)."""
    name = model.split("/")[-1]
    behaviour = behaviours.get(name)
    if behaviour is None:
        raise KeyError(name)
    return behaviour(messages, tools)


def run_async(work: Callable[[], Awaitable[Any]]) -> Any:
    """Run one coroutine from a request thread (which has no event loop of its own)."""
    return asyncio.run(cast(Any, work()))


class _Handler(BaseHTTPRequestHandler):
    """The one request handler of every local server: it reads, parses, keeps and sends."""

    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """Stay quiet: tests read the stats instead."""

    def do_GET(self) -> None:  # noqa: N802
        self._serve("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._serve("POST")

    def _serve(self, method: str) -> None:
        local = self.server.local
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            self.close_connection = True
            self._json(JsonAnswer(413, {"error": {"message": "request too large"}}))
            return
        raw = self.rfile.read(length) if length else b""
        split = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(split.query).items()}
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            self._send(local.malformed("the request body is not valid JSON"))
            return
        request = WireRequest(method, split.path, query, headers, body, raw)
        local.keep(request)
        local.respond(request, self._send)

    def _send(self, answer: Answer) -> None:
        if isinstance(answer, StreamAnswer):
            self._stream(answer)
        elif isinstance(answer, RawAnswer):
            self._bytes(answer)
        elif isinstance(answer, NoAnswer):
            self._drop(answer)
        else:
            self._json(answer)

    def _bytes(self, answer: RawAnswer) -> None:
        self.send_response(answer.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer.data)))
        for name, value in answer.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(answer.data)

    def _drop(self, answer: NoAnswer) -> None:
        if answer.hang and self._client_gave_up(answer.hang) and answer.gave_up is not None:
            answer.gave_up()
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

    def _json(self, answer: JsonAnswer) -> None:
        data = json.dumps(answer.payload).encode()
        self._bytes(RawAnswer(answer.status, data, answer.headers))

    def _stream(self, answer: StreamAnswer) -> None:
        payload = b"".join(sse(answer.events))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in answer.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    local: LocalServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away is expected: no traceback on stderr."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class LocalServer(ABC):
    """A local HTTP server on a loopback address, served from a daemon thread.

    The one HTTP stack of every server here: it reads each request (a body over
    ``MAX_BODY_BYTES`` is refused 413 unread), parses its JSON (``malformed`` answers one
    that is not), keeps it when recording, and hands it to ``respond``, which answers it.
    Beside answering, a server has the hooks of ``occubench.testing._hooks``: holds
    (``wait_released`` until ``release()``), per-minute limits (``admit``), a fixed
    latency (``pace``) and injected failures (``failure``).

    Args:
        host: A loopback address (anything else is refused).
        port: Port to bind (0: any free port).
        record: Keep every request, in arrival order (``requests``).
        latency: Seconds every answer takes at least, work included (``pace``).
        flaky: The failures ``failure`` answers (see ``Flakiness``).
        rate_limits: Per-minute request and token limits (``admit``).
    """

    base_path = ""
    """The path the provider's SDK is given after host and port (e.g. ``/v1``)."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        record: bool = False,
        latency: float = 0.0,
        flaky: Flakiness | None = None,
        rate_limits: RateLimits | None = None,
    ) -> None:
        if not ipaddress.ip_address(host).is_loopback:
            raise UsageError(f"the test server binds to loopback only, not {host}")
        self.latency = latency
        self.flaky = flaky
        self.limiter = RateLimiter(rate_limits) if rate_limits else None
        self._record = record
        self._requests: list[WireRequest] = []
        self._lock = threading.Lock()
        self._server = _HTTPServer((host, port), _Handler)
        self._server.local = self
        self._thread: threading.Thread | None = None
        self._released = threading.Event()

    @abstractmethod
    def respond(self, request: WireRequest, reply: Send) -> None:
        """Answer one request: call ``reply`` once, with the answer."""

    @abstractmethod
    def malformed(self, message: str) -> JsonAnswer:
        """The provider's answer to a body that is not JSON."""

    def keep(self, request: WireRequest) -> None:
        """Record the request (with ``record=True``)."""
        if self._record:
            with self._lock:
                self._requests.append(request)

    @property
    def requests(self) -> list[WireRequest]:
        """The requests so far, in arrival order (``record=True``)."""
        with self._lock:
            return list(self._requests)

    def wait_released(self) -> None:
        """Hold the request being served until ``release()`` (at once if it was)."""
        self._released.wait()

    def release(self) -> None:
        """Answer the held requests, and every later one at once."""
        self._released.set()

    def admit(self, tokens: int) -> JsonAnswer | None:
        """None when the limits admit a request of ``tokens``; else the 429 to answer."""
        wait = self.limiter.admit(tokens) if self.limiter is not None else None
        if wait is None:
            return None
        return JsonAnswer(429, rate_limit_error(wait), retry_after_headers(wait))

    def pace(self, arrived: float) -> None:
        """Wait until ``latency`` seconds have passed since ``arrived`` (monotonic)."""
        if self.latency:
            time.sleep(max(0.0, arrived + self.latency - time.monotonic()))

    def failure(
        self,
        kind: FailureKind,
        answer: JsonAnswer,
        request: WireRequest,
        gave_up: Callable[[], None],
    ) -> Answer:
        """The answer of a request failed as ``kind`` in place of ``answer`` (``flaky``).

        ``gave_up`` is told when the client ends a timeout itself.
        """
        flaky = self.flaky or Flakiness()
        if kind is FailureKind.RATE_LIMIT:
            headers = {"Retry-After": f"{flaky.retry_after:g}"}
            return _error(429, "rate limit reached (injected)", "rate_limit_error", headers)
        if kind is FailureKind.SERVER_ERROR:
            return _error(500, "internal error (injected)", "server_error")
        if kind is FailureKind.BAD_JSON:
            data = json.dumps(answer.payload).encode()
            return RawAnswer(200, data[: len(data) // 2])  # cut off mid-object
        if kind is FailureKind.NO_CHOICES:
            payload = {k: v for k, v in answer.payload.items() if k != "choices"}
            return JsonAnswer(200, payload)
        if kind is FailureKind.AUTH_ERROR:
            key = request.headers.get("authorization", "").removeprefix("Bearer ")
            return _error(401, f"Incorrect API key provided: {key}", "invalid_api_key")
        return NoAnswer(flaky.hang if kind is FailureKind.TIMEOUT else 0.0, gave_up)

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:PORT``."""
        host, port = cast(tuple[str, int], self._server.server_address[:2])
        return f"http://{host}:{port}"

    @property
    def base_url(self) -> str:
        """The base URL to give the provider's SDK (origin and ``base_path``)."""
        return f"{self.origin}{self.base_path}"

    def start(self) -> Self:
        """Serve in a daemon thread."""
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port (held requests are let go)."""
        self.release()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _error(
    status: int, message: str, kind: str, headers: Mapping[str, str] | None = None
) -> JsonAnswer:
    """An error in OpenAI's shape (``{"error": {"message", "type"}}``)."""
    return JsonAnswer(status, {"error": {"message": message, "type": kind}}, headers or {})


class WireServer(LocalServer):
    """A strict local server for one provider's API.

    ``with AnthropicServer() as server: server.base_url``. Subclasses implement ``route``
    and ``malformed`` and name their base URL's path in ``base_path``.

    Args:
        host: A loopback address (anything else is refused).
        port: Port to bind (0: any free port).
        behaviours: More models, by name, beside ``BEHAVIOURS``.
        record: Keep every request, in arrival order (``requests``).
        hold_turn: Hold each request whose messages hold this many assistant turns or more
            (never the preflight's) unanswered until ``release()``: every sample of a run
            stops at that turn, however fast the machine (counted in ``stats.held``).
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        behaviours: Mapping[str, Behaviour] | None = None,
        record: bool = False,
        hold_turn: int | None = None,
    ) -> None:
        super().__init__(host, port, record=record)
        self.behaviours: dict[str, Behaviour] = {**BEHAVIOURS, **(behaviours or {})}
        self.stats = WireStats()
        self.cache = PrefixCache()
        self.signer = Signer()
        self.hold_turn = hold_turn

    def respond(self, request: WireRequest, reply: Send) -> None:
        """Hold the request at ``hold_turn``, then answer ``route``'s answer or refusal."""
        self.wait_if_held(request.body)
        try:
            answer = self.route(request)
        except Refused as refused:
            self.stats.refuse(refused.message)
            answer = JsonAnswer(refused.status, refused.payload)
        reply(answer)

    def wait_if_held(self, body: Any) -> None:
        """Hold a request at ``hold_turn`` until ``release()`` (others pass at once)."""
        if self.hold_turn is None or self._released.is_set() or not isinstance(body, dict):
            return
        if at_turn(body, self.hold_turn):
            self.stats.hold()
            self.wait_released()

    @abstractmethod
    def route(self, request: WireRequest) -> Answer:
        """Answer one request, or raise ``Refused`` with the provider's error."""


def approx_tokens(value: Any) -> int:
    """A stable token count for a JSON value or text: one token per 4 characters, at least 1."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return max(1, len(text) // 4)
