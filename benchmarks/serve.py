"""The benchmark's OpenAI-compatible server: the scripted behaviours on uvicorn (asyncio).

The package's server (``python -m occubench.testing.openai_server``) runs a thread
per connection and a fresh event loop per request; it is made for tests (it can also
inject failures). Here it would compete for the harness's cores: on a 2-core machine
it used 10-13 s of CPU in a 100-task run, about 3 ms per request. A remote endpoint
costs the harness no CPU, so the benchmark serves the same behaviours (the same
``answer_async`` and response bodies) from one asyncio loop under uvicorn, an Inspect
dependency, with a deep listen backlog (a hundred samples open their first
connections at once; a short queue drops SYNs, which the clients retry after 1 s).

The latency is the whole answer time: it counts from the request's arrival, so the
answer's own work is hidden inside it, as at a real endpoint.

    python benchmarks/serve.py --port 8000 --latency 1.0 [--record REQUESTS.jsonl]
    GET /v1/stats -> requests and prompt tokens per model, peak in-flight requests

``--rpm`` and ``--tpm`` limit requests and tokens (prompt and completion) per minute as
an endpoint does (``occubench.testing.RateLimiter``: token buckets holding ``--burst``
seconds of each): a request over a limit is answered 429 at once with its Retry-After,
and counted apart (``rate_limited``) from the answers (``answered``, the billed calls).

``--record`` appends each completion request to a file as it arrives (one JSON line:
``t``, the arrival time, and ``body``, the raw request body), for the bare client
(``bare_client.py``) to replay.

``/stats`` also gives the timeline of the requests (wall-clock times): ``first_arrival``
and ``last_done`` of the run's requests, and the same of the preflight's
(``preflight``: requests whose last message is the preflight's prompt). ``POST
/v1/stats/reset`` starts the counts and the timeline again (the next run's).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import IO, Any

import uvicorn

from occubench.scale._interpreter import tuned_gc
from occubench.scale._preflight import PREFLIGHT_PROMPT
from occubench.testing import RateLimiter, RateLimits
from occubench.testing._openai_server import ServerStats, answer_async, completion_body
from occubench.testing._rate_limits import rate_limit_error, retry_after_headers

LISTEN_BACKLOG = 2048

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class ScriptedApp:
    """A raw ASGI app: ``POST .../chat/completions`` and ``GET .../stats``."""

    def __init__(
        self, latency: float, record: IO[str] | None = None, limits: RateLimits | None = None
    ) -> None:
        self.latency = latency
        self.stats = ServerStats()
        self.record = record
        self.limiter = RateLimiter(limits) if limits else None
        self.spans: dict[str, list[float]] = {}
        """Per kind of request (``run``, ``preflight``): the first arrival, the last answer."""
        self.preflight_answers = 0

    def span(self, kind: str, arrived: float, done: float) -> None:
        """Widen the kind's span to cover one request (wall-clock seconds)."""
        first, last = self.spans.get(kind, [arrived, done])
        self.spans[kind] = [min(first, arrived), max(last, done)]

    def timeline(self) -> dict[str, Any]:
        """The run's and the preflight's first arrival and last answer."""
        run = self.spans.get("run", [None, None])
        return {
            "first_arrival": run[0],
            "last_done": run[1],
            "preflight": self.spans.get("preflight"),
            "preflight_answers": self.preflight_answers,
        }

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":  # startup
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        path = scope["path"].rstrip("/")
        if scope["method"] == "GET" and path.endswith("/stats"):
            await respond(send, 200, {**self.stats.snapshot(), **self.timeline()})
        elif scope["method"] == "POST" and path.endswith("/stats/reset"):
            self.stats, self.spans, self.preflight_answers = ServerStats(), {}, 0
            await respond(send, 200, {})
        elif scope["method"] == "POST" and path.endswith("/chat/completions"):
            await self.complete(receive, send)
        else:
            await respond(send, 404, {"error": {"message": f"no route {scope['path']}"}})

    async def complete(self, receive: Receive, send: Send) -> None:
        arrived, arrived_wall = asyncio.get_running_loop().time(), time.time()
        try:
            raw = await read_body(receive)
            if self.record is not None:
                self.record.write(json.dumps({"t": time.time(), "body": raw.decode()}) + "\n")
                self.record.flush()
            body = json.loads(raw or b"{}")
            model, reply, prompt_tokens = await answer_async(body)
        except (KeyError, ValueError) as e:
            error = {"message": str(e), "type": "invalid_request_error"}
            await respond(send, 400, {"error": error})
            return
        self.stats.enter(model, prompt_tokens)
        try:
            completion = completion_body(model, reply, prompt_tokens)
            if self.limiter is not None:
                refused = self.limiter.admit(completion["usage"]["total_tokens"])
                if refused is not None:  # at once, as an endpoint does; not billed
                    self.stats.limit(model)
                    headers = retry_after_headers(refused)
                    await respond(send, 429, rate_limit_error(refused), headers)
                    return
            wait = arrived + self.latency - asyncio.get_running_loop().time()
            if wait > 0:
                await asyncio.sleep(wait)
            await respond(send, 200, completion)
            self.stats.answer(model)
            self.preflight_answers += kind_of(body) == "preflight"
        finally:
            self.stats.leave()
        self.span(kind_of(body), arrived_wall, time.time())


def kind_of(body: dict[str, Any]) -> str:
    """``preflight`` for the preflight's tiny request, else ``run``."""
    messages = body.get("messages") or [{}]
    return "preflight" if messages[-1].get("content") == PREFLIGHT_PROMPT else "run"


async def read_body(receive: Receive) -> bytes:
    """The whole request body (ASGI delivers it in chunks)."""
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


async def respond(
    send: Send, status: int, payload: dict[str, Any], extra: dict[str, str] | None = None
) -> None:
    """Send ``payload`` as a JSON response (with ``extra`` headers)."""
    data = json.dumps(payload).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    headers += [(k.lower().encode(), v.encode()) for k, v in (extra or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


async def serve(
    host: str,
    port: int,
    latency: float,
    record: IO[str] | None = None,
    limits: RateLimits | None = None,
) -> None:
    """Serve until cancelled; prints ``serving URL`` once the socket listens."""
    config = uvicorn.Config(
        ScriptedApp(latency, record, limits),
        host=host,
        port=port,
        backlog=LISTEN_BACKLOG,
        log_level="warning",
        access_log=False,
        timeout_keep_alive=600,
    )
    server = uvicorn.Server(config)
    running = asyncio.create_task(server.serve())
    while not server.started and not running.done():
        await asyncio.sleep(0.01)
    print(f"serving http://{host}:{port}/v1", flush=True)
    await running


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per request")
    parser.add_argument("--record", type=Path, help="append every request to this JSONL file")
    parser.add_argument("--rpm", type=float, help="requests per minute (429 beyond)")
    parser.add_argument("--tpm", type=float, help="tokens per minute (429 beyond)")
    parser.add_argument("--burst", type=float, default=1.0, help="seconds of each limit held")
    args = parser.parse_args()
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        parser.error("the benchmark server binds to a loopback address only")
    record = args.record.open("a", encoding="utf-8") if args.record else None
    limits = (
        RateLimits(
            requests_per_minute=args.rpm, tokens_per_minute=args.tpm, burst_seconds=args.burst
        )
        if args.rpm or args.tpm
        else None
    )
    with tuned_gc():  # no full collections stalling every answer at once
        asyncio.run(serve(args.host, args.port, args.latency, record, limits))


if __name__ == "__main__":
    main()
