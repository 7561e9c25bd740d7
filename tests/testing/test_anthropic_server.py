"""The strict local Anthropic server, through Inspect's anthropic provider and the SDK."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import pytest
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    ContentReasoning,
    GenerateConfig,
    Model,
    ModelOutput,
    get_model,
)

from occubench.scripted import BEHAVIOURS
from occubench.testing._anthropic_server import (
    ADAPTIVE_MODEL,
    BAD_SIGNATURE,
    BUDGET_TOO_LARGE,
    BUDGET_TOO_SMALL,
    EXTRA_INPUT,
    KEY_REQUIRED,
    MISSING_RESULTS,
    NO_ADAPTIVE,
    NO_THINKING,
    TEMPERATURE,
    THINKING_FIRST,
    TOO_MANY_BREAKPOINTS,
    TOP_K,
    UNEXPECTED_RESULT,
    VERSION_REQUIRED,
    AnthropicServer,
    ModelSupport,
)
from wire_turns import TOOL

AGENT = "claude-sonnet-4-5"
ADAPTIVE = "claude-sonnet-4-6"
THINKING = GenerateConfig(reasoning_tokens=2048, max_tokens=8192)
SDK_TOOL: Any = {
    "name": "lookup",
    "description": "Look a thing up.",
    "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}},
}
QUESTION = ChatMessageUser(content="Find x.")
OLD_VERSION = {"anthropic-version": "2023-06-01"}


@pytest.fixture
def server() -> Iterator[AnthropicServer]:
    """A server whose real-looking model names are the schema agent."""
    agent = BEHAVIOURS["schema-agent"]
    with AnthropicServer(
        behaviours={AGENT: agent, ADAPTIVE: agent, "claude-3-haiku": agent},
        models={ADAPTIVE: ADAPTIVE_MODEL, "claude-3-haiku": ModelSupport(thinking=False)},
        record=True,
    ) as running:
        yield running


def inspect_model(server: AnthropicServer, name: str = AGENT, **kwargs: Any) -> Model:
    config = kwargs.pop("config", THINKING)
    return get_model(
        f"anthropic/{name}", base_url=server.base_url, api_key="test-key", config=config, **kwargs
    )


def sdk(server: AnthropicServer, **headers: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=server.base_url, api_key="test-key", max_retries=0, default_headers=headers
    )


def generate(model: Model, messages: list[ChatMessage]) -> ModelOutput:
    return asyncio.run(model.generate(messages, tools=[TOOL]))


def tool_round(model: Model) -> tuple[ChatMessageAssistant, ChatMessageTool]:
    """The agent's first turn (a tool call) and the tool's result."""
    first = generate(model, [QUESTION]).message
    assert first.tool_calls
    call = first.tool_calls[0]
    return first, ChatMessageTool(content="x is 4", tool_call_id=call.id, function=call.function)


def refusal(message: str) -> str:
    """A ``pytest.raises`` pattern for a refusal's text (its first line, literally)."""
    return re.escape(message.splitlines()[0])


def test_thinking_kept_as_inspect_returned_it_is_accepted(server: AnthropicServer) -> None:
    model = inspect_model(server)
    assistant, result = tool_round(model)
    reasoning = [c for c in assistant.content if isinstance(c, ContentReasoning)]
    assert reasoning and reasoning[0].summary and reasoning[0].reasoning
    final = generate(model, [QUESTION, assistant, result])
    assert "x is 4" in final.message.text
    assert server.refused == []
    assert all(r.body.get("stream") for r in server.requests if r.path == "/v1/messages")


def test_thinking_dropped_from_the_history_is_refused(server: AnthropicServer) -> None:
    model = inspect_model(server)
    assistant, result = tool_round(model)
    rebuilt = ChatMessageAssistant(content=assistant.text, tool_calls=assistant.tool_calls)
    expected = THINKING_FIRST.format(index=1, found="text")
    with pytest.raises(Exception, match=refusal(expected)):  # what occubench shows users
        generate(model, [QUESTION, rebuilt, result])
    assert server.refused == [expected]


def test_a_tampered_signature_is_refused(server: AnthropicServer) -> None:
    model = inspect_model(server)
    assistant, result = tool_round(model)
    tampered = [
        c.model_copy(update={"reasoning": c.reasoning[:-2] + "AA"})
        if isinstance(c, ContentReasoning)
        else c
        for c in assistant.content
    ]
    forged = assistant.model_copy(update={"content": tampered})
    with pytest.raises(Exception, match=refusal(BAD_SIGNATURE.format(index=1, block=0))):
        generate(model, [QUESTION, forged, result])


def test_redacted_thinking_is_carried_back_and_accepted() -> None:
    agent = BEHAVIOURS["schema-agent"]
    with AnthropicServer(behaviours={AGENT: agent}, redact_every=1, record=True) as server:
        model = inspect_model(server)
        assistant, result = tool_round(model)
        reasoning = [c for c in assistant.content if isinstance(c, ContentReasoning)]
        assert reasoning[0].redacted and reasoning[0].summary is None
        generate(model, [QUESTION, assistant, result])
        sent = [r.body for r in server.requests if r.path == "/v1/messages"][-1]
        replayed = sent["messages"][1]["content"][0]
    assert replayed["type"] == "redacted_thinking"
    assert server.refused == []


def test_adaptive_thinking_with_effort(server: AnthropicServer) -> None:
    config = GenerateConfig(reasoning_effort="medium", max_tokens=8192)
    model = inspect_model(server, ADAPTIVE, config=config)
    assistant, result = tool_round(model)
    generate(model, [QUESTION, assistant, result])
    body = [r.body for r in server.requests if r.path == "/v1/messages"][-1]
    assert body["thinking"]["type"] == "adaptive" and body["output_config"]["effort"] == "medium"
    assert server.refused == []
    client = sdk(server)
    with pytest.raises(anthropic.BadRequestError, match=NO_ADAPTIVE):
        client.messages.create(
            model=AGENT,
            max_tokens=100,
            messages=[{"role": "user", "content": "hi"}],
            thinking={"type": "adaptive"},
        )


def test_streaming_and_not_streaming_answer_the_same(server: AnthropicServer) -> None:
    outputs = []
    for streaming in (True, False):
        model = inspect_model(server, streaming=streaming)
        assistant, result = tool_round(model)
        outputs.append((assistant, generate(model, [QUESTION, assistant, result]).message))
    assert outputs[0][0].content == outputs[1][0].content
    assert outputs[0][0].tool_calls == outputs[1][0].tool_calls
    assert outputs[0][1].content == outputs[1][1].content
    streams = [r.body.get("stream", False) for r in server.requests if r.path == "/v1/messages"]
    assert streams == [True, True, False, False]


def test_stream_events_come_in_the_api_order(server: AnthropicServer) -> None:
    client = sdk(server)
    with client.messages.stream(
        model=AGENT,
        max_tokens=4096,
        messages=[{"role": "user", "content": "Find x."}],
        tools=[SDK_TOOL],
        thinking={"type": "enabled", "budget_tokens": 1024},
    ) as stream:
        kinds = [(e.type, getattr(getattr(e, "delta", None), "type", None)) for e in stream]
        message = stream.get_final_message()
    raw = [k for k, _ in kinds if k in ("message_start", "message_delta", "message_stop")]
    assert raw == ["message_start", "message_delta", "message_stop"]
    deltas = [d for k, d in kinds if k == "content_block_delta"]
    assert {"thinking_delta", "signature_delta", "input_json_delta"} <= set(deltas)
    assert [b.type for b in message.content] == ["thinking", "tool_use"]
    call = message.content[1]
    assert isinstance(call, anthropic.types.ToolUseBlock) and call.id.startswith("toolu_")
    assert message.stop_reason == "tool_use"


def test_tool_pairing_is_enforced(server: AnthropicServer) -> None:
    client = sdk(server)
    use: Any = {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {}}
    result: Any = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "4"}
    stray: Any = {"type": "tool_result", "tool_use_id": "toolu_9", "content": "4"}
    cases: list[tuple[list[Any], str]] = [
        (
            [{"role": "assistant", "content": [use]}, {"role": "user", "content": "go on"}],
            MISSING_RESULTS.format(index=1, ids="toolu_1"),
        ),
        (
            [
                {"role": "assistant", "content": [use]},
                {"role": "user", "content": [{"type": "text", "text": "here"}, result]},
            ],
            MISSING_RESULTS.format(index=1, ids="toolu_1"),
        ),
        (
            [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result, stray]}],
            UNEXPECTED_RESULT.format(index=2, block=1, id="toolu_9"),
        ),
    ]
    for tail, expected in cases:
        with pytest.raises(anthropic.BadRequestError, match=refusal(expected)):
            client.messages.create(
                model=AGENT,
                max_tokens=100,
                tools=[SDK_TOOL],
                messages=[{"role": "user", "content": "Find x."}, *tail],
            )
    answer = client.messages.create(
        model=AGENT,
        max_tokens=100,
        tools=[SDK_TOOL],
        messages=[
            {"role": "user", "content": "Find x."},
            {"role": "assistant", "content": [use]},
            {"role": "user", "content": [result, {"type": "text", "text": "and then?"}]},
        ],
    )
    assert answer.stop_reason == "end_turn"


def test_count_tokens_matches_the_billed_input(server: AnthropicServer) -> None:
    client = sdk(server)
    request: Any = {
        "model": AGENT,
        "system": "You look things up.",
        "tools": [SDK_TOOL],
        "messages": [{"role": "user", "content": "Find x."}],
    }
    counted = client.messages.count_tokens(**request).input_tokens
    usage = client.messages.create(max_tokens=100, **request).usage
    assert counted > 0
    assert counted == usage.input_tokens + (usage.cache_read_input_tokens or 0)
    model = inspect_model(server, config=GenerateConfig())
    assert asyncio.run(model.count_tokens([ChatMessageUser(content="Find x.")])) > 0


def test_a_shared_marked_prefix_is_read_from_cache(server: AnthropicServer) -> None:
    client = sdk(server)
    system: Any = [
        {"type": "text", "text": "rules " * 2000, "cache_control": {"type": "ephemeral"}}
    ]
    usages = [
        client.messages.create(
            model=AGENT,
            max_tokens=100,
            system=system,
            messages=[{"role": "user", "content": question}],
        ).usage
        for question in ("Find x.", "Find y.")
    ]
    written = usages[0].cache_creation_input_tokens
    assert written and written >= 1024 and usages[0].cache_read_input_tokens == 0
    assert usages[1].cache_read_input_tokens == written
    assert usages[1].cache_creation_input_tokens == 0
    assert usages[1].input_tokens == usages[0].input_tokens  # only the uncached rest
    totals = server.usage(AGENT)
    assert totals.cache_read_input_tokens == written == totals.cache_creation_input_tokens
    short: Any = [{"type": "text", "text": "short", "cache_control": {"type": "ephemeral"}}]
    small = client.messages.create(
        model=AGENT, max_tokens=100, system=short, messages=[{"role": "user", "content": "hi"}]
    ).usage
    assert small.cache_creation_input_tokens == 0  # under the model's minimum


def test_inspect_reads_its_own_breakpoints_back(server: AnthropicServer) -> None:
    model = inspect_model(server, config=GenerateConfig(max_tokens=1000))
    long = ChatMessageUser(content="Find x. " + "context " * 1000)
    first = generate(model, [long])
    assert first.message.tool_calls
    call = first.message.tool_calls[0]
    result = ChatMessageTool(content="x is 4", tool_call_id=call.id, function="lookup")
    second = generate(model, [long, first.message, result])
    assert second.usage and second.usage.input_tokens_cache_read
    assert second.usage.input_tokens_cache_read >= 1000


def test_more_than_four_breakpoints_are_refused(server: AnthropicServer) -> None:
    mark: Any = {"type": "ephemeral"}
    blocks: Any = [{"type": "text", "text": f"part {n}", "cache_control": mark} for n in range(5)]
    with pytest.raises(anthropic.BadRequestError, match=TOO_MANY_BREAKPOINTS.format(count=5)):
        sdk(server).messages.create(
            model=AGENT, max_tokens=100, messages=[{"role": "user", "content": blocks}]
        )


def test_sampling_parameters_follow_the_api_version(server: AnthropicServer) -> None:
    question: Any = [{"role": "user", "content": "hi"}]
    thinking: Any = {"type": "enabled", "budget_tokens": 1024}
    with pytest.raises(anthropic.BadRequestError, match=EXTRA_INPUT.format(field="temperature")):
        sdk(server).messages.create(
            model=AGENT, max_tokens=100, messages=question, extra_body={"temperature": 1}
        )
    old = sdk(server, **OLD_VERSION)
    for extra, expected in (({"temperature": 0.5}, TEMPERATURE), ({"top_k": 5}, TOP_K)):
        with pytest.raises(anthropic.BadRequestError, match=refusal(expected)):
            old.messages.create(
                model=AGENT, max_tokens=2048, messages=question, thinking=thinking, extra_body=extra
            )
    answer = old.messages.create(
        model=AGENT,
        max_tokens=2048,
        messages=question,
        thinking=thinking,
        extra_body={"temperature": 1},
    )
    assert answer.content[0].type == "thinking"


def test_thinking_budget_and_model_support_are_checked(server: AnthropicServer) -> None:
    client = sdk(server)
    question: Any = [{"role": "user", "content": "hi"}]
    cases: list[tuple[str, int, int, str]] = [
        (AGENT, 512, 4096, BUDGET_TOO_SMALL),
        (AGENT, 4096, 4096, BUDGET_TOO_LARGE),
        ("claude-3-haiku", 1024, 4096, NO_THINKING.format(model="claude-3-haiku")),
    ]
    for name, budget, max_tokens, expected in cases:
        with pytest.raises(anthropic.BadRequestError, match=refusal(expected)):
            client.messages.create(
                model=name,
                max_tokens=max_tokens,
                messages=question,
                thinking={"type": "enabled", "budget_tokens": budget},
            )


def test_auth_and_version_headers_are_required(server: AnthropicServer) -> None:
    body = {"model": AGENT, "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    url = f"{server.base_url}/v1/messages"
    no_key = httpx.post(url, json=body, headers={"anthropic-version": "2023-06-01"})
    assert no_key.status_code == 401
    assert no_key.json()["error"] == {"type": "authentication_error", "message": KEY_REQUIRED}
    no_version = httpx.post(url, json=body, headers={"x-api-key": "test-key"})
    assert no_version.status_code == 400
    assert no_version.json()["error"]["message"] == VERSION_REQUIRED
    both = httpx.post(url, json=body, headers={"x-api-key": "k", **OLD_VERSION})
    assert both.status_code == 200 and "request-id" in both.headers


def test_unknown_models_are_not_found(server: AnthropicServer) -> None:
    with pytest.raises(anthropic.NotFoundError, match="model: claude-nothing"):
        sdk(server).messages.create(
            model="claude-nothing", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        )


def test_binds_loopback_only() -> None:
    with pytest.raises(ValueError, match="loopback"):
        AnthropicServer(host="0.0.0.0")
