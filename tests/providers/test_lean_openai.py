"""The lean path against Inspect's: same wire, same results, same errors.

The lean provider (``occubench-openai``) and Inspect's ``openai-api`` and ``vllm`` models
put on the lean path (``fast_path``), each against Inspect's own path. The last tests use
raw socket servers, so that an answer can be cut, withheld or made as large as a test needs.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import queue
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import openai
import pytest
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ModelOutput,
    get_model,
)
from inspect_ai.model._openai import OpenAIResponseError
from inspect_ai.tool import ToolCall, ToolInfo, ToolParams

from conftest import HANG_BOUND
from occubench.calls import check_answer, reset_concurrency, resilient
from occubench.defaults import DEFAULT_MAX_ANSWER_BYTES, DEFAULT_MAX_RETRY_AFTER
from occubench.errors import UsageError
from occubench.providers import PROVIDER, LeanOpenAIAPI, fast_path
from occubench.providers._http import QuickRetry, post_chat, request_body
from occubench.providers._sessions import LoopSessions, client_timeout
from occubench.testing._openai_server import answer, completion_body

KEY = "sk-occubench-test-0123456789"
PROVIDERS = ("openai-api", PROVIDER)
TOOLS = [
    ToolInfo(
        name="get_order",
        description="Look an order up.",
        parameters=ToolParams.model_validate(
            {
                "type": "object",
                "properties": {
                    "order_id": {"type": "string", "description": "The order's id."},
                    "fields": {
                        "type": "array",
                        "items": {"type": "string", "enum": ["status", "items"]},
                        "description": "Fields wanted.",
                    },
                },
                "required": ["order_id"],
            }
        ),
    ),
    ToolInfo(name="list_orders", description="Every order, ünïcode too."),
]
MESSAGES = [
    ChatMessageSystem(content='You are an agent. « quotes » and "escapes" \\ too.'),
    ChatMessageUser(content="Find order A1."),
    ChatMessageAssistant(
        content="Looking.",
        tool_calls=[ToolCall(id="c1", function="get_order", arguments={"order_id": "A1"})],
    ),
    ChatMessageTool(content='{"status": "shipped"}', tool_call_id="c1", function="get_order"),
    ChatMessageUser(content="And now? 日本語"),
]
CONFIGS = [
    {},
    {"temperature": 0.0, "max_tokens": 256, "seed": 7, "top_p": 0.9},
    {"stop_seqs": ["END"], "parallel_tool_calls": False, "extra_body": {"top_k": 5}},
]


def model(provider: str, base_url: str, **args: object) -> Model:
    return get_model(
        f"{provider}/local/schema-agent", base_url=base_url, api_key=KEY, memoize=False, **args
    )


async def generate(provider: str, base_url: str, config: dict) -> ModelOutput:
    async with model(provider, base_url) as m:
        return await m.generate(MESSAGES, tools=TOOLS, config=GenerateConfig(**config))


def comparable(output: ModelOutput) -> dict:
    """An output without what differs by construction (fresh message ids, timings)."""
    return {
        "choices": [c.model_dump(exclude={"message": {"id"}}) for c in output.choices],
        "usage": output.usage,
        "model": output.model,
    }


@pytest.mark.parametrize("config", CONFIGS)
def test_the_same_bytes_on_the_wire_and_the_same_output(recorder, config):
    outputs = [asyncio.run(generate(p, recorder.base_url, config)) for p in PROVIDERS]
    sdk, lean = recorder.requests
    assert lean.body == sdk.body  # byte for byte
    assert json.loads(lean.body)["messages"][2]["tool_calls"][0]["id"] == "c1"
    assert lean.path == sdk.path == "/v1/chat/completions"
    for header in ("authorization", "content-type", "accept"):
        assert lean.headers[header] == sdk.headers[header]
    assert lean.headers["x-irid"]  # Inspect's request id: its hooks time the request
    assert comparable(outputs[1]) == comparable(outputs[0])
    assert outputs[1].choices[0].message.tool_calls


def test_no_tools_sends_no_tool_fields(recorder):
    async def plain(provider: str) -> ModelOutput:
        async with model(provider, recorder.base_url) as m:
            return await m.generate([ChatMessageUser(content="hello")])

    outputs = [asyncio.run(plain(p)) for p in PROVIDERS]
    sdk, lean = recorder.requests
    assert lean.body == sdk.body and "tools" not in json.loads(lean.body)
    assert comparable(outputs[1]) == comparable(outputs[0])


async def raw_generate(provider: str, base_url: str, **args: object) -> ModelOutput | Exception:
    """One attempt through the provider itself (no Inspect retry, no quick retry)."""
    m = model(provider, base_url, max_retries=0, **args)
    if isinstance(m.api, LeanOpenAIAPI):
        m.api.quick_retry = type(m.api.quick_retry)(retries=0)
    try:
        result = await m.api.generate(MESSAGES, TOOLS, "auto", GenerateConfig())
        return result[0] if isinstance(result, tuple) else result
    except Exception as ex:
        return ex
    finally:
        await m.api.aclose()


ERROR_BODY = json.dumps({"error": {"message": "it failed", "type": "server_error"}}).encode()
CONTEXT_BODY = json.dumps(
    {
        "error": {
            "message": "This model's maximum context length is 8192 tokens.",
            "code": "context_length_exceeded",
            "type": "invalid_request_error",
        }
    }
).encode()


@pytest.mark.parametrize(
    ("status", "payload", "headers"),
    [
        (429, ERROR_BODY, {"Retry-After": "2"}),
        (500, ERROR_BODY, {}),
        (502, b"<html>bad gateway</html>", {}),
        (503, ERROR_BODY, {}),
        (408, ERROR_BODY, {}),
        (401, ERROR_BODY, {}),
        (404, ERROR_BODY, {}),
        (400, CONTEXT_BODY, {}),
        (422, ERROR_BODY, {}),
    ],
)
def test_status_answers_fail_as_with_the_sdk(recorder, status, payload, headers):
    recorder.reply = (status, payload, headers)
    sdk, lean = [asyncio.run(raw_generate(p, recorder.base_url)) for p in PROVIDERS]
    assert type(lean) is type(sdk)
    api = model(PROVIDER, recorder.base_url).api
    if isinstance(sdk, ModelOutput):  # a bad request Inspect turns into an output
        assert isinstance(lean, ModelOutput)
        assert (lean.stop_reason, lean.completion) == (sdk.stop_reason, sdk.completion)
        return
    assert isinstance(lean, openai.APIStatusError) and isinstance(sdk, openai.APIStatusError)
    assert (lean.status_code, str(lean), lean.body) == (sdk.status_code, str(sdk), sdk.body)
    assert (lean.code, lean.type) == (sdk.code, sdk.type)
    assert api.should_retry(lean) == api.should_retry(sdk)
    assert api.is_auth_failure(lean) == api.is_auth_failure(sdk) == (status == 401)


def test_no_answer_fails_as_with_the_sdk():
    closed = "http://127.0.0.1:9/v1"  # discard port: nothing listens
    sdk, lean = [asyncio.run(raw_generate(p, closed)) for p in PROVIDERS]
    assert type(lean) is type(sdk) is openai.APIConnectionError
    assert model(PROVIDER, closed).api.should_retry(lean).kind == "transient"


@pytest.mark.parametrize(
    "payload",
    [b'{"id": "x", "choices": [{"index": 0, "mess', b"[]", b'{"id": "x", "object": "x"}', b""],
)
def test_an_unreadable_answer_is_a_server_error_retried_at_the_call(recorder, payload):
    recorder.reply = (200, payload, {})
    lean = asyncio.run(raw_generate(PROVIDER, recorder.base_url))
    assert isinstance(lean, OpenAIResponseError) and lean.code == "server_error"
    decision = model(PROVIDER, recorder.base_url).api.should_retry(lean)
    assert decision and decision.kind == "transient"  # as a 5xx


def test_an_answer_missing_optional_fields_reads_as_with_the_sdk(recorder):
    recorder.reply = (
        200,
        json.dumps(
            {
                "model": "m",  # no id, object or created; a finish reason the SDK does not know
                "choices": [
                    {"message": {"role": "assistant", "content": "hi"}, "finish_reason": "eos"}
                ],
            }
        ).encode(),
        {},
    )
    sdk, lean = [asyncio.run(raw_generate(p, recorder.base_url)) for p in PROVIDERS]
    assert isinstance(lean, ModelOutput) and isinstance(sdk, ModelOutput)
    assert comparable(lean) == comparable(sdk) and lean.completion == "hi"


def test_the_api_key_never_reaches_error_text(recorder):
    echoed = json.dumps({"error": {"message": f"bad key {KEY}", "type": "server_error"}})
    recorder.reply = (500, echoed.encode(), {})
    lean = asyncio.run(raw_generate(PROVIDER, recorder.base_url))
    assert isinstance(lean, openai.InternalServerError)
    assert KEY not in str(lean) and KEY not in repr(lean.body) and KEY not in lean.message
    recorder.reply = (200, f"not json {KEY}".encode(), {})
    unreadable = asyncio.run(raw_generate(PROVIDER, recorder.base_url))
    assert isinstance(unreadable, OpenAIResponseError) and KEY not in str(unreadable)
    assert recorder.requests[-1].headers["authorization"] == f"Bearer {KEY}"


def test_quick_retries_follow_the_sdk(recorder):
    recorder.reply = (503, ERROR_BODY, {"Retry-After": "0.05"})
    m = model(PROVIDER, recorder.base_url)
    with pytest.raises(openai.InternalServerError):
        asyncio.run(m.api.generate(MESSAGES, TOOLS, "auto", GenerateConfig()))
    assert len(recorder.requests) == 3  # the first attempt and two quick retries
    assert len({r.headers["x-irid"] for r in recorder.requests}) == 1  # one request id
    recorder.requests.clear()
    recorder.reply = (400, ERROR_BODY, {})
    asyncio.run(m.api.generate(MESSAGES, TOOLS, "auto", GenerateConfig()))
    assert len(recorder.requests) == 1  # a bad request is not retried


@pytest.mark.parametrize("arg", ["stream", "responses_api", "emulate_tools"])
def test_unsupported_options_are_refused(recorder, arg):
    with pytest.raises(ValueError, match=f"does not support {arg}"):
        model(PROVIDER, recorder.base_url, **{arg: True})


def test_the_trio_backend_keeps_inspects_path(recorder, monkeypatch):
    """aiohttp runs on asyncio only: under Inspect's trio backend the lean path is not taken."""
    monkeypatch.setenv("INSPECT_ASYNC_BACKEND", "trio")
    inspects = get_model(
        "openai-api/local/schema-agent", base_url=recorder.base_url, api_key=KEY, memoize=False
    )
    assert not fast_path(inspects) and not isinstance(inspects.api, LeanOpenAIAPI)
    with pytest.raises(UsageError, match="does not support the trio async backend"):
        model(PROVIDER, recorder.base_url)


def test_reads_service_variables(recorder, monkeypatch):
    monkeypatch.setenv("MYSVC_BASE_URL", recorder.base_url)
    monkeypatch.setenv("MYSVC_API_KEY", KEY)
    m = get_model(f"{PROVIDER}/mysvc/echo-simulator", memoize=False)
    output = asyncio.run(m.generate("hello"))
    assert output.completion
    assert recorder.requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert json.loads(recorder.requests[0].body)["model"] == "echo-simulator"


def built(name: str, base_url: str, fast: bool, **args: object) -> Model:
    model = get_model(name, base_url=base_url, api_key=KEY, memoize=False, **args)
    if fast:
        assert fast_path(model)
    return model


async def generate_with(model: Model, config: dict) -> ModelOutput:
    async with model:
        return await model.generate(MESSAGES, tools=TOOLS, config=GenerateConfig(**config))


VARYING = {"x-irid"}
"""Headers whose value differs between any two requests (Inspect's request id)."""


@pytest.mark.parametrize("name", ["openai-api/local/schema-agent", "vllm/schema-agent"])
@pytest.mark.parametrize("config", CONFIGS)
def test_the_fast_path_sends_inspects_request_byte_for_byte(recorder, name, config):
    inspect_path = built(name, recorder.base_url, fast=False)
    lean_path = built(name, recorder.base_url, fast=True)
    assert isinstance(lean_path.api, LeanOpenAIAPI)
    assert not isinstance(inspect_path.api, LeanOpenAIAPI)
    assert str(lean_path) == str(inspect_path) == name  # its name, in logs and reports
    assert type(lean_path.api).__name__ == type(inspect_path.api).__name__  # its pool
    outputs = [asyncio.run(generate_with(m, config)) for m in (inspect_path, lean_path)]
    posts = [r for r in recorder.requests if r.path.endswith("/chat/completions")]
    sdk, lean = posts
    assert lean.body == sdk.body  # byte for byte
    assert lean.path == sdk.path
    assert lean.headers.keys() == sdk.headers.keys()  # the SDK's headers, every one
    for header in sdk.headers.keys() - VARYING:
        assert lean.headers[header] == sdk.headers[header], header
    assert comparable(outputs[1]) == comparable(outputs[0])


def test_credentials_in_the_base_url_are_sent_as_httpx_sends_them(recorder):
    """``user:password@`` in the base URL: Basic credentials in place of the API key's."""
    base_url = recorder.base_url.replace("://", "://us%40er:p%3Aw@")
    paths = [built("openai-api/local/schema-agent", base_url, fast) for fast in (False, True)]
    outputs = [asyncio.run(generate_with(m, {})) for m in paths]
    sdk, lean = recorder.requests
    assert lean.path == sdk.path == "/v1/chat/completions"
    assert lean.headers["authorization"] == sdk.headers["authorization"] == "Basic dXNAZXI6cDp3"
    assert comparable(outputs[1]) == comparable(outputs[0])


@pytest.mark.parametrize(("status", "kind"), [(500, openai.InternalServerError), (404, None)])
def test_failures_are_the_sdks_exceptions(recorder, status, kind):
    recorder.reply = (status, ERROR_BODY, {})
    errors = []
    for fast in (False, True):
        model = built("openai-api/local/schema-agent", recorder.base_url, fast, max_retries=0)
        try:
            asyncio.run(model.api.generate(MESSAGES, TOOLS, "auto", GenerateConfig()))
        except openai.APIStatusError as ex:
            errors.append(ex)
    sdk, lean = errors
    assert type(lean) is type(sdk) and (kind is None or type(lean) is kind)
    assert (lean.status_code, str(lean), lean.body) == (sdk.status_code, str(sdk), sdk.body)


def test_what_the_lean_path_does_not_send_keeps_inspects_path(recorder):
    streaming = get_model(
        "openai-api/local/schema-agent",
        base_url=recorder.base_url,
        api_key=KEY,
        memoize=False,
        stream=True,
    )
    assert not fast_path(streaming) and not isinstance(streaming.api, LeanOpenAIAPI)
    scripted = get_model("occubench/schema-agent", memoize=False)
    assert not fast_path(scripted)
    lean = get_model("occubench-openai/local/schema-agent", base_url=recorder.base_url, api_key=KEY)
    assert fast_path(lean)  # the lean provider is on it already


def test_the_fast_path_answers_once_for_a_json_error(recorder):
    """An unreadable answer is read once, by the lean path (no second check on the client)."""
    model = built("openai-api/local/schema-agent", recorder.base_url, fast=True)
    made = resilient(model)
    assert check_answer not in made.api.http_client.event_hooks["response"]
    recorder.reply = (200, json.dumps({"id": "x"}).encode(), {})
    with pytest.raises(Exception, match="unreadable chat completion"):
        asyncio.run(model.api.generate(MESSAGES, TOOLS, "auto", GenerateConfig(max_retries=0)))


RATE_LIMITED = json.dumps(
    {"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}
).encode()


def lean_model(base_url: str, **retry: int) -> Model:
    """A lean model whose calls Inspect does not retry (only the lean path's own retries)."""
    m = model(PROVIDER, base_url, max_retries=0)
    assert isinstance(m.api, LeanOpenAIAPI)
    if retry:
        m.api.quick_retry = type(m.api.quick_retry)(**retry)
    return m


def limit_of(m: Model):
    return m.api.adaptive_limit(GenerateConfig(max_connections=16))


def test_rate_limited_attempts_are_retried_after_their_wait_and_halve_the_window(recorder):
    reset_concurrency()
    recorder.replies = [(429, RATE_LIMITED, {"retry-after-ms": "10"})] * 3
    m = lean_model(recorder.base_url)
    output = asyncio.run(
        m.api.generate(MESSAGES, TOOLS, "auto", GenerateConfig(max_connections=16))
    )
    output = output[0] if isinstance(output, tuple) else output
    assert isinstance(output, ModelOutput) and output.choices  # answered on the 4th attempt
    counts = [r.headers["x-stainless-retry-count"] for r in recorder.requests]
    assert counts == ["0", "1", "2", "3"]
    assert len({r.body for r in recorder.requests}) == 1  # the same request, not billed
    limit = limit_of(m)
    assert (limit.rate_limited, limit.answers) == (3, 1)
    assert limit.lowest == 8  # one burst, one cut: 16 -> 8
    assert limit.paused == pytest.approx(0.03)  # the three waits asked, one after another
    reset_concurrency()


def test_rate_limited_retries_are_bounded_then_inspect_retries(recorder):
    reset_concurrency()
    recorder.reply = (429, RATE_LIMITED, {"retry-after-ms": "1"})
    m = lean_model(recorder.base_url, rate_limit_retries=3)
    with pytest.raises(openai.RateLimitError) as raised:
        asyncio.run(m.api.generate(MESSAGES, TOOLS, "auto", GenerateConfig()))
    assert len(recorder.requests) == 4  # the first attempt and three retries
    # the exception the path raised itself (never one built by hand from the SDK's internals)
    decision = m.api.should_retry(raised.value)
    assert decision and decision.kind == "rate_limit"  # then Inspect's retry
    reset_concurrency()


def test_a_retry_after_beyond_a_minute_is_left_to_inspect_and_its_pause_is_bounded(recorder):
    reset_concurrency()
    recorder.reply = (429, RATE_LIMITED, {"Retry-After": "86400"})  # a day
    m = lean_model(recorder.base_url)
    with pytest.raises(openai.RateLimitError):
        asyncio.run(m.api.generate(MESSAGES, TOOLS, "auto", GenerateConfig(max_connections=16)))
    assert len(recorder.requests) == 1  # not retried here (as the SDK: over 60 s)
    limit = limit_of(m)
    assert limit.paused == pytest.approx(DEFAULT_MAX_RETRY_AFTER, abs=1)  # cut to the bound
    reset_concurrency()


COMPLETION = json.dumps(
    completion_body(
        *answer({"model": "schema-agent", "messages": [{"role": "user", "content": "hi"}]})
    )
).encode()


@dataclass
class RawServer:
    """A socket server on 127.0.0.1 that answers each connection's one request by hand."""

    base_url: str
    sent: int = 0
    """Bytes of answers the server managed to write."""
    closed_by_client: queue.Queue[bool] = field(default_factory=queue.Queue)
    """Per connection left waiting (``until_closed``), whether the client closed it."""

    def closed(self, connections: int) -> list[bool]:
        """Whether the client closed each of ``connections`` waits, once they have ended."""
        return [self.closed_by_client.get(timeout=HANG_BOUND) for _ in range(connections)]


def read_request(conn: socket.socket) -> bytes:
    """One HTTP request off the connection (headers, then ``Content-Length`` bytes)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return head


def head(status: str, length: int | None, *extra: str) -> bytes:
    """An answer's status line and headers (``Connection: close``: one request a connection)."""
    lines = [f"HTTP/1.1 {status}", "Content-Type: application/json", "Connection: close", *extra]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def send(conn: socket.socket, server: RawServer, data: bytes) -> None:
    conn.sendall(data)
    server.sent += len(data)


def until_closed(conn: socket.socket) -> bool:
    """Wait (at most ``HANG_BOUND``) for the client to close; whether it did."""
    conn.settimeout(HANG_BOUND)
    try:
        return conn.recv(1) == b""
    except OSError:
        return True


@contextmanager
def raw_server(behaviour: Callable[[socket.socket, RawServer], None]) -> Iterator[RawServer]:
    listener = socket.create_server(("127.0.0.1", 0))
    server = RawServer(f"http://127.0.0.1:{listener.getsockname()[1]}/v1")

    def handle(conn: socket.socket) -> None:
        with conn:
            read_request(conn)
            try:
                behaviour(conn, server)
            except OSError:
                pass  # the client went away

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield server
    finally:
        listener.close()


def test_a_gzip_answer_reads_as_with_the_sdk(recorder):
    recorder.reply = (200, gzip.compress(COMPLETION), {"Content-Encoding": "gzip"})
    sdk, lean = [asyncio.run(raw_generate(p, recorder.base_url)) for p in PROVIDERS]
    assert isinstance(lean, ModelOutput) and isinstance(sdk, ModelOutput)
    assert comparable(lean) == comparable(sdk) and lean.completion
    assert recorder.requests[1].headers["accept-encoding"] == "gzip, deflate"


def test_a_gzip_error_answer_keeps_its_message(recorder):
    error = json.dumps({"error": {"message": "it failed", "type": "server_error"}}).encode()
    recorder.reply = (500, gzip.compress(error), {"Content-Encoding": "gzip"})
    sdk, lean = [asyncio.run(raw_generate(p, recorder.base_url)) for p in PROVIDERS]
    assert isinstance(lean, openai.InternalServerError)
    assert (str(lean), lean.body) == (str(sdk), sdk.body)


def test_a_dropped_connection_fails_as_with_the_sdk():
    def drop(conn: socket.socket, server: RawServer) -> None:
        conn.shutdown(socket.SHUT_RDWR)

    with raw_server(drop) as server:
        sdk, lean = [asyncio.run(raw_generate(p, server.base_url)) for p in PROVIDERS]
    assert type(lean) is type(sdk) is openai.APIConnectionError
    assert model(PROVIDER, server.base_url).api.should_retry(lean).kind == "transient"


def test_an_answer_cut_short_fails_as_with_the_sdk():
    def cut(conn: socket.socket, server: RawServer) -> None:
        send(conn, server, head("200 OK", len(COMPLETION)) + COMPLETION[:20])

    with raw_server(cut) as server:
        sdk, lean = [asyncio.run(raw_generate(p, server.base_url)) for p in PROVIDERS]
    assert type(lean) is type(sdk) is openai.APIConnectionError


def test_a_read_timeout_fails_as_with_the_sdk():
    """The SDK's read timeout (``client_timeout``) applies: a server that never answers."""

    def withhold(conn: socket.socket, server: RawServer) -> None:
        server.closed_by_client.put(until_closed(conn))

    lean_model = model(PROVIDER, "http://127.0.0.1:9/v1", client_timeout=1)
    assert isinstance(lean_model.api, LeanOpenAIAPI)
    assert lean_model.api.wire().timeout.sock_read == 1  # the SDK's timeout, in aiohttp's terms

    with raw_server(withhold) as server:
        sdk, lean = [
            asyncio.run(raw_generate(p, server.base_url, client_timeout=1)) for p in PROVIDERS
        ]
    assert type(lean) is type(sdk) is openai.APITimeoutError
    assert server.closed(2) == [True, True]  # each client gave up, not the server
    assert model(PROVIDER, server.base_url).api.should_retry(lean).kind == "transient"


def test_an_answer_over_the_bound_is_refused_before_it_is_read():
    """A ``Content-Length`` over 64 MiB: refused as unreadable, the connection closed."""
    closed = threading.Event()

    def huge(conn: socket.socket, server: RawServer) -> None:
        send(conn, server, head("200 OK", DEFAULT_MAX_ANSWER_BYTES + 1))
        block = b" " * 2**20
        try:
            while server.sent < 2 * DEFAULT_MAX_ANSWER_BYTES:  # bounded if never refused
                send(conn, server, block)
        finally:
            closed.set()

    with raw_server(huge) as server:
        lean = asyncio.run(raw_generate(PROVIDER, server.base_url))
        assert closed.wait(HANG_BOUND)
    assert isinstance(lean, OpenAIResponseError) and lean.code == "server_error"
    assert "more than 67108864 bytes" in lean.message
    assert server.sent < DEFAULT_MAX_ANSWER_BYTES  # the client stopped reading at once


def post(base_url: str, max_bytes: int) -> Exception | object:
    """One ``post_chat`` with a bound of ``max_bytes`` (no retry); the result or the error."""

    async def run() -> object:
        reset_concurrency()
        sessions = LoopSessions(keepalive=5.0)
        url = f"{base_url}/chat/completions"
        try:
            return await post_chat(
                await sessions.session(url),
                url,
                request_body({"model": "m", "messages": []}),
                {"content-type": "application/json"},
                timeout=client_timeout(60.0, None),
                limit=model(PROVIDER, base_url).api.adaptive_limit(GenerateConfig()),
                retry=QuickRetry(retries=0),
                max_bytes=max_bytes,
            )
        except Exception as ex:
            return ex
        finally:
            await sessions.aclose()
            reset_concurrency()

    return asyncio.run(run())


@pytest.mark.parametrize("encoding", ["identity", "gzip"])
def test_an_answer_growing_past_the_bound_is_cut_off_as_it_arrives(encoding):
    """No ``Content-Length``: read up to the bound (decoded: a gzip bomb too), then refused."""
    bound = 2**20
    block = b" " * 2**20
    compressed = gzip.compress(b" " * 64 * 2**20)  # 64 KB that inflate to 64 MiB

    def endless(conn: socket.socket, server: RawServer) -> None:
        if encoding == "gzip":
            send(conn, server, head("200 OK", None, "Content-Encoding: gzip") + compressed)
            server.closed_by_client.put(until_closed(conn))
            return
        send(conn, server, head("200 OK", None))
        while server.sent < 64 * bound:  # bounded if never refused
            send(conn, server, block)

    with raw_server(endless) as server:
        found = post(server.base_url, bound)
    assert isinstance(found, OpenAIResponseError), found
    assert f"more than {bound} bytes" in found.message
    assert server.sent < 32 * bound  # not read to the end
    assert server.closed(1 if encoding == "gzip" else 0) == [True] * (encoding == "gzip")


def test_an_answer_within_the_bound_is_read(recorder):
    recorder.reply = (200, COMPLETION, {})
    found = post(recorder.base_url, len(COMPLETION))
    assert not isinstance(found, Exception) and found.choices  # type: ignore[attr-defined]


def test_the_logged_call_is_timed_from_its_last_attempt():
    """Inspect's request tracking sees each attempt: the call's time is the answered one's."""
    delay, retry_after = 0.2, 0.5
    answers = [head("503 Service Unavailable", 2, f"Retry-After: {retry_after}") + b"{}"]

    def reply(conn: socket.socket, server: RawServer) -> None:
        if answers:
            send(conn, server, answers.pop(0))
            return
        time.sleep(delay)  # the answered attempt takes at least this long
        send(conn, server, head("200 OK", len(COMPLETION)) + COMPLETION)

    with raw_server(reply) as server:
        m = model(PROVIDER, server.base_url, max_retries=0)
        attempts: list[str] = []
        hooks = m.api._http_hooks
        track = hooks.update_request_time

        def counted(request_id: str) -> None:
            attempts.append(request_id)
            track(request_id)

        hooks.update_request_time = counted  # type: ignore[method-assign]
        start = time.monotonic()
        output, call = asyncio.run(m.api.generate(MESSAGES, TOOLS, "auto", GenerateConfig()))
        elapsed = time.monotonic() - start
    assert isinstance(output, ModelOutput) and output.completion
    assert len(attempts) == 2 and len(set(attempts)) == 1  # one request, two attempts
    assert call.time is not None
    assert delay <= call.time <= elapsed - retry_after  # the last attempt, not the wait
