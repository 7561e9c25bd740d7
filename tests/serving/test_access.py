"""The access checks of a served environment: token, hosts, and bounded messages (stdio and HTTP).

The end-to-end attacks are in ``test_serve.py`` and ``test_agent_command.py``; here each
rule at its edges, in process.
"""

from __future__ import annotations

import asyncio
import json

import anyio
import httpx
import pytest
from pydantic import SecretStr

from occubench.defaults import DEFAULT_MAX_JSON_DEPTH, DEFAULT_MAX_MESSAGE_DEPTH
from occubench.serving import serve_token
from occubench.serving._access import (
    Access,
    _AccessChecks,
    bearer_matches,
    leading_id,
    origin_allowed,
    too_deep,
)
from occubench.serving._transports import _PipeLines
from occubench.text import json_nesting
from occubench.webapp import host_allowed

TOKEN = "t0ken-of-this-sample-1234567890"


def call(id: int, arguments: bytes) -> bytes:
    return (
        (
            f'{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"x","arguments":'
        ).encode()
        + arguments
        + b"}}"
    )


def nested(depth: int) -> bytes:
    return b'{"a":' * depth + b"1" + b"}" * depth


def test_a_tool_call_with_arguments_as_deep_as_the_rule_passes_and_one_more_does_not():
    deepest = call(1, nested(DEFAULT_MAX_JSON_DEPTH))
    assert json_nesting(deepest) == DEFAULT_MAX_MESSAGE_DEPTH
    assert too_deep(deepest, DEFAULT_MAX_MESSAGE_DEPTH) is None
    error = too_deep(call(1, nested(DEFAULT_MAX_JSON_DEPTH + 1)), DEFAULT_MAX_MESSAGE_DEPTH)
    assert error is not None and error.id == 1 and error.error.code == -32600
    # many brackets, none deep: the scan says so
    wide = call(2, b"[" + b"[]," * 10_000 + b"[]]")
    assert too_deep(wide, DEFAULT_MAX_MESSAGE_DEPTH) is None


def test_the_id_is_recovered_only_when_it_leads_the_message():
    assert leading_id(b'{"jsonrpc":"2.0","id":7,"method":"x"}') == 7
    assert leading_id(b' { "method" : "x" , "id" : "a-1" , "params": {}}') == "a-1"
    assert leading_id(b'{"params":{"id":3},"id":4}') is None  # not searched past params
    assert leading_id(b'{"jsonrpc":"2.0","params":{"id":3}}') is None
    assert leading_id(b"[" * 1000) is None
    assert leading_id(b'{"id":' + b"9" * 40 + b"}") is None  # no unbounded number


def test_the_bearer_token_is_checked_whole_and_never_raises():
    token = SecretStr(TOKEN)
    assert bearer_matches(f"Bearer {TOKEN}".encode(), token)
    assert bearer_matches(f"bearer  {TOKEN} ".encode(), token)
    assert not bearer_matches(f"Bearer {TOKEN[:-1]}".encode(), token)
    assert not bearer_matches(f"Basic {TOKEN}".encode(), token)
    assert not bearer_matches(TOKEN.encode(), token)
    assert not bearer_matches("Bearer tökén".encode("latin-1"), token)
    assert not bearer_matches(None, token)
    assert TOKEN not in repr(Access.of(TOKEN, ["127.0.0.1"]))


def test_host_and_origin_must_name_an_allowed_host():
    hosts = Access.of(TOKEN, ["127.0.0.1", "localhost", "[::1]", "Lab.Example"]).hosts
    for good in ("127.0.0.1:8765", "localhost", "[::1]:80", "lab.example:1"):
        assert host_allowed(good, hosts), good
    for bad in ("evil.test", "127.0.0.1@evil.test", "evil.test/127.0.0.1", "", None):
        assert not host_allowed(bad, hosts), bad
    assert origin_allowed(None, hosts)
    assert origin_allowed("http://localhost:3000", hosts)
    assert origin_allowed("https://lab.example", hosts)
    for bad in ("null", "http://evil.test", "file://localhost", "http://[::1"):
        assert not origin_allowed(bad, hosts), bad


def test_the_serve_token_comes_from_the_environment_and_is_checked():
    assert serve_token({}) is None
    assert serve_token({"OCCUBENCH_SERVE_TOKEN": TOKEN}) == TOKEN
    for bad in ("short", "has spaces in it, sixteen+", "x" * 513):
        with pytest.raises(ValueError) as refused:
            serve_token({"OCCUBENCH_SERVE_TOKEN": bad})
        assert bad not in str(refused.value)


class _Wire:
    """What the stdio lines write refusals to."""

    def __init__(self) -> None:
        self.written = b""

    def write(self, data: bytes) -> None:
        self.written += data

    async def drain(self) -> None:
        pass


def test_stdio_lines_refuse_a_longer_or_deeper_line_and_read_the_next():
    limit = 64

    async def read(data: bytes) -> tuple[list[str], list[dict]]:
        reader = asyncio.StreamReader(limit=limit)
        reader.feed_data(data)
        reader.feed_eof()
        wire = _Wire()
        lines = [line async for line in _PipeLines(reader, wire, limit, 3)]  # type: ignore[arg-type]
        return lines, [json.loads(x) for x in wire.written.splitlines()]

    exact = b'{"id":1,"x":"' + b"a" * (limit - 15) + b'"}'
    assert len(exact) == limit
    longer = b'{"id":2,"x":"' + b"a" * 10 * limit + b'"}'
    deep = b'{"id":3,"x":[[[]]]}'
    lines, refusals = anyio.run(read, b"\n".join([exact, longer, deep, b'{"id":4}', b"last"]))
    assert lines == [exact.decode() + "\n", '{"id":4}\n', "last"]
    assert [(r["id"], r["error"]["code"]) for r in refusals] == [(2, -32600), (3, -32600)]
    # a longer last line, unterminated, is refused too
    lines, refusals = anyio.run(read, b'{"id":5}\n' + longer)
    assert lines == ['{"id":5}\n'] and [r["id"] for r in refusals] == [2]


async def _echo(scope, receive, send) -> None:
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"echo:" + body})


def test_http_guard_refuses_before_the_app_and_passes_a_good_body_whole():
    checks = _AccessChecks(_echo, Access.of(TOKEN, ["127.0.0.1"]), max_bytes=100, max_depth=3)
    auth = {"Authorization": f"Bearer {TOKEN}"}

    async def requests() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=checks)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            return [
                await http.post("/mcp", content=b'{"id":1}'),
                await http.post("/mcp", content=b'{"id":1}', headers={**auth, "Host": "x.test"}),
                await http.post("/mcp", content=b'{"id":1}', headers={**auth, "Origin": "null"}),
                await http.post(
                    "/mcp", content=b'{"id":1,"a":"' + b"b" * 200 + b'"}', headers=auth
                ),
                await http.post("/mcp", content=b'{"id":2,"a":[[[[]]]]}', headers=auth),
                await http.post("/mcp", content=b'{"id":3}', headers=auth),
                await http.post("/v1/models", content=b"[[[[[]]]]]", headers=auth),
            ]

    replies = anyio.run(requests)
    assert [r.status_code for r in replies] == [401, 421, 403, 413, 400, 200, 400]
    assert replies[0].headers["www-authenticate"] == "Bearer"
    assert replies[3].json()["id"] == 1 and replies[4].json()["id"] == 2
    assert replies[5].content == b'echo:{"id":3}'
    assert replies[6].json()["error"]["type"] == "invalid_request_error"
