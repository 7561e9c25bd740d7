"""The floor: a bare asyncio client replaying a run's captured requests.

Reads the requests the benchmark server captured during an ``occubench run``
(``serve.py --record FILE``: one JSON line per request, its arrival time and raw
body), groups them into each task's chain (the task is the ``Benchmark instance N``
its prompt names, the preflight's requests left out; the order is the order of
arrival; consecutive judge requests are one round, sent at once as the harness sends
the k votes), and sends every chain
concurrently, each request after the previous answer, over the HTTP client occubench's
fast path uses (aiohttp, no connection limit; ``--httpx`` for the client of Inspect's
own OpenAI-compatible path: the OpenAI SDK's httpx client with Inspect's pool and
timeout defaults). It parses each answer as JSON and does nothing else: no SDK, no
Inspect, no logging, so its CPU per call and its wall time are what any harness must
at least spend for the same requests on the same server with that client.

Prints one JSON object: calls, CPU (whole process, and from the first request to the
last answer), wall time, the first and last call times, and the longest chain.

    python benchmarks/bare_client.py REQUESTS.jsonl --base-url http://127.0.0.1:8000/v1 \
        --count 3600 --judge scripted-judge
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
from collections import defaultdict
from contextlib import AsyncExitStack
from pathlib import Path

import aiohttp
from inspect_ai._util.http_defaults_httpx2 import default_client_kwargs
from openai import DefaultAsyncHttpxClient

INSTANCE = re.compile(rb"Benchmark instance (\d+)\.")


def chains(lines: list[bytes], judge: str) -> list[list[list[bytes]]]:
    """Each task's requests in arrival order, as rounds (a judge round holds its votes)."""
    by_task: dict[int, list[tuple[float, bytes, bool]]] = defaultdict(list)
    for line in lines:
        record = json.loads(line)
        body = record["body"].encode()
        found = INSTANCE.search(body)
        if found is None:  # the preflight's requests: no task's
            continue
        is_judge = json.loads(body).get("model") == judge
        by_task[int(found.group(1))].append((record["t"], body, is_judge))
    result = []
    for requests in by_task.values():
        rounds: list[list[bytes]] = []
        previous_judge = False
        for _, body, is_judge in sorted(requests, key=lambda r: r[0]):
            if is_judge and previous_judge:
                rounds[-1].append(body)
            else:
                rounds.append([body])
            previous_judge = is_judge
        result.append(rounds)
    return result


async def replay(
    base_url: str, key: str, tasks: list[list[list[bytes]]], httpx: bool = False
) -> tuple[float, float]:
    """Send every chain concurrently; returns the times of the first request and last answer."""
    url = f"{base_url.rstrip('/')}/chat/completions"
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    first, last = float("inf"), 0.0
    async with AsyncExitStack() as stack:
        if httpx:
            client = await stack.enter_async_context(
                DefaultAsyncHttpxClient(**default_client_kwargs())
            )

            async def post(body: bytes) -> bytes:
                response = await client.post(url, content=body, headers=headers)
                response.raise_for_status()
                return response.content

        else:
            session = await stack.enter_async_context(
                aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
            )

            async def post(body: bytes) -> bytes:
                async with session.post(url, data=body, headers=headers) as response:
                    response.raise_for_status()
                    return await response.read()

        async def send(body: bytes) -> None:
            nonlocal first, last
            first = min(first, time.time())
            json.loads(await post(body))["choices"]
            last = max(last, time.time())

        async def chain(rounds: list[list[bytes]]) -> None:
            for bodies in rounds:
                await asyncio.gather(*(send(b) for b in bodies))

        await asyncio.gather(*(chain(rounds) for rounds in tasks))
    return first, last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("requests", type=Path)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--api-key", required=True, help="the key the run sent")
    parser.add_argument(
        "--httpx", action="store_true", help="the SDK's httpx client instead of aiohttp"
    )
    parser.add_argument("--count", type=int, required=True, help="requests of the run to replay")
    parser.add_argument("--skip", type=int, default=0, help="of those, the first ones left out")
    parser.add_argument("--judge", required=True, help="model name of the judge")
    args = parser.parse_args()
    with args.requests.open("rb") as f:
        lines = [line for _, line in zip(range(args.count), f, strict=False)][args.skip :]
    tasks = chains(lines, args.judge)
    cpu0, start = time.process_time(), time.perf_counter()
    first, last = asyncio.run(replay(args.base_url, args.api_key, tasks, args.httpx))
    cpu1, wall = time.process_time(), time.perf_counter() - start
    json.dump(
        {
            "calls": len(lines),
            "cpu_steady": cpu1 - cpu0,
            "wall": wall,
            "first_call": first,
            "last_call": last,
            "chain": max(len(rounds) for rounds in tasks),
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
