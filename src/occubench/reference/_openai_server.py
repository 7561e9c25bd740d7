"""A local OpenAI-compatible server that answers with the scripted behaviours.

It lets the real HTTP path (Inspect's ``openai-api`` provider, the OpenAI SDK, httpx)
run offline: the request's ``model`` names a behaviour (``schema-agent``,
``echo-simulator``, ``scripted-judge``), ``latency`` adds a fixed delay per request.
It binds to a loopback address only.

Run it alone with ``python -m occubench.reference.openai_server --port 8000``, then
``LOCAL_BASE_URL=http://127.0.0.1:8000/v1 LOCAL_API_KEY=x`` and models
``openai-api/local/schema-agent`` etc.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from inspect_ai.model import messages_from_openai
from inspect_ai.tool import ToolInfo, ToolParams

from occubench.reference._behaviours import BEHAVIOURS, Reply
from occubench.reference._provider import estimate_tokens


class ServerStats:
    """Counts kept by the server: requests per model and the peak of concurrent ones."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests: Counter[str] = Counter()
        self.prompt_tokens: Counter[str] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0

    def enter(self, model: str, prompt_tokens: int) -> None:
        """A request for ``model`` started."""
        with self._lock:
            self.requests[model] += 1
            self.prompt_tokens[model] += prompt_tokens
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def leave(self) -> None:
        """A request ended."""
        with self._lock:
            self.in_flight -= 1


def completion_body(model: str, reply: Reply, prompt_tokens: int) -> dict[str, Any]:
    """An OpenAI chat.completion response for a scripted reply."""
    calls = [
        {"id": f"call_{i}_{prompt_tokens}", "type": "function",
         "function": {"name": name, "arguments": json.dumps(args)}}
        for i, (name, args) in enumerate(reply.tool_calls)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
    if calls:
        message["tool_calls"] = calls
    completion_tokens = estimate_tokens(reply.content + json.dumps(reply.tool_calls))
    return {
        "id": f"chatcmpl-{prompt_tokens}", "object": "chat.completion", "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message,
                     "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


def answer(body: dict[str, Any]) -> tuple[str, Reply, int]:
    """Run the behaviour the request's model names; returns (model, reply, prompt tokens)."""
    model = str(body.get("model", "")).split("/")[-1]
    if model not in BEHAVIOURS:
        raise KeyError(f"unknown model {model!r}; known: {', '.join(sorted(BEHAVIOURS))}")
    messages = asyncio.run(messages_from_openai(body.get("messages", [])))
    tools = [
        ToolInfo(
            name=t["function"]["name"],
            description=t["function"].get("description", ""),
            parameters=ToolParams.model_validate(t["function"].get("parameters") or {}),
        )
        for t in body.get("tools") or []
    ]
    prompt_tokens = sum(estimate_tokens(m.text) for m in messages)
    return model, BEHAVIOURS[model](messages, tools), prompt_tokens


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ScriptedOpenAIServer._HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """Stay quiet: tests and benchmarks read the stats instead."""

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        if self.path.rstrip("/").endswith("/models"):
            models = [{"id": name, "object": "model", "owned_by": "occubench"} for name in BEHAVIOURS]
            self._send(200, {"object": "list", "data": models})
        else:
            self._send(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length", 0))
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
            model, reply, prompt_tokens = answer(body)
        except (KeyError, ValueError) as e:
            self._send(400, {"error": {"message": str(e), "type": "invalid_request_error"}})
            return
        stats = self.server.stats
        stats.enter(model, prompt_tokens)
        try:
            if self.server.latency:
                time.sleep(self.server.latency)
            self._send(200, completion_body(model, reply, prompt_tokens))
        finally:
            stats.leave()


class ScriptedOpenAIServer:
    """The server, run in a background thread: ``with ScriptedOpenAIServer() as s: s.base_url``.

    Args:
        host: A loopback address (anything else is refused).
        port: Port to bind (0: any free port).
        latency: Seconds added to every completion request.
    """

    class _HTTPServer(ThreadingHTTPServer):
        daemon_threads = True
        stats: ServerStats
        latency: float

    def __init__(self, host: str = "127.0.0.1", port: int = 0, latency: float = 0.0) -> None:
        if not ipaddress.ip_address(host).is_loopback:
            raise ValueError(f"the test server binds to loopback only, not {host}")
        self._server = self._HTTPServer((host, port), _Handler)
        self._server.stats = ServerStats()
        self._server.latency = latency
        self._thread: threading.Thread | None = None

    @property
    def stats(self) -> ServerStats:
        """Request counts so far."""
        return self._server.stats

    @property
    def base_url(self) -> str:
        """The OpenAI base URL (``http://127.0.0.1:PORT/v1``)."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> ScriptedOpenAIServer:
        """Serve in a daemon thread."""
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port."""
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
