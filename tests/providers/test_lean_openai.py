"""The lean path against Inspect's: same wire, same results, same errors.

The lean provider (``occubench-openai``) and Inspect's ``openai-api`` and ``vllm`` models
put on the lean path (``fast_path``), each against Inspect's own path.
"""

from __future__ import annotations

import asyncio
import json

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

from occubench.calls import check_answer, reset_concurrency, resilient
from occubench.defaults import DEFAULT_MAX_RETRY_AFTER
from occubench.providers import PROVIDER, LeanOpenAIAPI, fast_path

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


async def raw_generate(provider: str, base_url: str) -> ModelOutput | Exception:
    """One attempt through the provider itself (no Inspect retry, no quick retry)."""
    m = model(provider, base_url, max_retries=0)
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
    with pytest.raises(openai.RateLimitError):
        asyncio.run(m.api.generate(MESSAGES, TOOLS, "auto", GenerateConfig()))
    assert len(recorder.requests) == 4  # the first attempt and three retries
    decision = m.api.should_retry(openai.RateLimitError("x", response=FakeResponse(), body=None))
    assert decision and decision.kind == "rate_limit"  # then Inspect's retry
    reset_concurrency()


class FakeResponse:
    """Just enough of a response for the SDK's exception."""

    status_code = 429
    headers: dict = {}
    request = None


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
