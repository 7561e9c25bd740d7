"""The strict local reasoning chat server, through Inspect's openai-api provider and the SDK."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from inspect_ai.model import (
    ChatMessage,
    ChatMessageUser,
    ContentReasoning,
    GenerateConfig,
    Model,
    ModelOutput,
    get_model,
)

from occubench.errors import UsageError
from occubench.providers import fast_path
from occubench.scripted import BEHAVIOURS
from occubench.testing._reasoning_chat_server import (
    DEFAULT_DIALECTS,
    ChatDialect,
    ReasoningChatServer,
)
from wire_turns import TOOL, answered, two_turns

KEY = "test-key"
SERVICES = {
    ChatDialect.DEEPSEEK: "deepseek",
    ChatDialect.MOONSHOT: "moonshot",
    ChatDialect.ZHIPU: "zhipu",
    ChatDialect.MINIMAX: "minimax",
    ChatDialect.QWEN: "dashscope",
}
MODELS = {dialect: name for name, dialect in DEFAULT_DIALECTS.items() if name != "deepseek-chat"}
CONFIGS = {ChatDialect.QWEN: GenerateConfig(extra_body={"enable_thinking": True})}
SDK_TOOL: Any = {
    "type": "function",
    "function": {
        "name": "lookup",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
    },
}
DEEPSEEK_MISSING = (
    "Missing `reasoning_content` field in the assistant message at message index 1. For more "
    "information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls"
)
MOONSHOT_MISSING = (
    "thinking is enabled but reasoning_content is missing in assistant tool call message at index 1"
)


@pytest.fixture
def server() -> Iterator[ReasoningChatServer]:
    agent = BEHAVIOURS["schema-agent"]
    with ReasoningChatServer(behaviours={n: agent for n in DEFAULT_DIALECTS}, record=True) as s:
        yield s


def inspect_model(server: ReasoningChatServer, dialect: ChatDialect) -> Model:
    return get_model(
        f"openai-api/{SERVICES[dialect]}/{MODELS[dialect]}",
        base_url=server.base_url,
        api_key=KEY,
        config=CONFIGS.get(dialect, GenerateConfig()),
        memoize=False,
    )


def sdk(server: ReasoningChatServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0)


@pytest.mark.parametrize("dialect", list(ChatDialect))
def test_a_kept_history_is_accepted_with_its_reasoning(
    server: ReasoningChatServer, dialect: ChatDialect
) -> None:
    first, second = asyncio.run(two_turns(inspect_model(server, dialect)))
    reasoning = [c for c in first.message.content if isinstance(c, ContentReasoning)]
    assert reasoning and first.choices[0].stop_reason == "tool_calls"
    assert second.completion.startswith("Final answer") and server.refused == []
    assert second.choices[0].stop_reason == "stop" and server.degraded == []
    sent = server.requests[-1].body["messages"][1]
    if dialect is ChatDialect.MINIMAX:  # Inspect sends it back inline, as MiniMax writes it
        assert sent["content"].lstrip().startswith("<think")
    else:
        assert sent["reasoning_content"] == reasoning[0].reasoning


@pytest.mark.parametrize(
    ("dialect", "refusal"),
    [(ChatDialect.DEEPSEEK, DEEPSEEK_MISSING), (ChatDialect.MOONSHOT, MOONSHOT_MISSING)],
)
def test_rebuilt_from_text_and_calls_is_refused_where_reasoning_must_come_back(
    server: ReasoningChatServer, dialect: ChatDialect, refusal: str
) -> None:
    with pytest.raises(RuntimeError) as raised:  # Inspect's error for a 400
        asyncio.run(two_turns(inspect_model(server, dialect), rebuild=True))
    assert refusal in str(raised.value)
    assert server.refused == [refusal]


@pytest.mark.parametrize("dialect", [ChatDialect.ZHIPU, ChatDialect.QWEN, ChatDialect.MINIMAX])
def test_rebuilt_from_text_and_calls_is_accepted_elsewhere(
    server: ReasoningChatServer, dialect: ChatDialect
) -> None:
    """MiniMax's inline ``<think>`` stays in Inspect's message text, so it survives too."""
    _, second = asyncio.run(two_turns(inspect_model(server, dialect), rebuild=True))
    assert second.completion.startswith("Final answer") and server.refused == []
    assert server.degraded == []


def test_minimax_without_its_reasoning_is_accepted_but_counted_degraded(
    server: ReasoningChatServer,
) -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    messages: Any = [
        {"role": "user", "content": "Look up A1."},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "found"},
    ]
    answer = sdk(server).chat.completions.create(model="MiniMax-M2", messages=messages)
    assert answer.choices[0].finish_reason == "stop" and server.refused == []
    assert server.degraded == ["MiniMax-M2: assistant tool call message 1 without reasoning"]


def test_zhipu_preserved_thinking_counts_a_dropped_reasoning_as_degraded(
    server: ReasoningChatServer,
) -> None:
    model = get_model(
        "openai-api/zhipu/glm-4.6",
        base_url=server.base_url,
        api_key=KEY,
        config=GenerateConfig(
            extra_body={"thinking": {"type": "enabled", "clear_thinking": False}}
        ),
        memoize=False,
    )
    asyncio.run(two_turns(model, rebuild=True))
    assert server.refused == [] and len(server.degraded) == 1


def test_deepseek_wants_reasoning_back_in_later_turns_too(server: ReasoningChatServer) -> None:
    first, _ = asyncio.run(two_turns(inspect_model(server, ChatDialect.DEEPSEEK)))
    call = first.message.tool_calls[0]  # type: ignore[index]
    history: list[Any] = [
        {"role": "user", "content": "Look up A1."},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": "lookup", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": call.id, "content": "found"},
        {"role": "assistant", "content": "Done.", "reasoning_content": "r"},
        {"role": "user", "content": "And B2?"},
    ]
    with pytest.raises(openai.BadRequestError) as raised:
        sdk(server).chat.completions.create(model="deepseek-reasoner", messages=history)
    assert raised.value.message.endswith(DEEPSEEK_MISSING)
    assert raised.value.code == "invalid_request_error"
    history[1]["reasoning_content"] = "r"
    accepted = sdk(server).chat.completions.create(model="deepseek-reasoner", messages=history)
    assert accepted.choices[0].finish_reason == "stop"


def test_thinking_off_needs_no_reasoning_back(server: ReasoningChatServer) -> None:
    model = get_model(
        "openai-api/deepseek/deepseek-chat",
        base_url=server.base_url,
        api_key=KEY,
        config=GenerateConfig(extra_body={"thinking": {"type": "disabled"}}),
        memoize=False,
    )
    first, second = asyncio.run(two_turns(model, rebuild=True))
    assert not any(isinstance(c, ContentReasoning) for c in first.message.content)
    assert second.completion.startswith("Final answer") and server.refused == []


def test_tool_messages_must_answer_the_calls_before_them(server: ReasoningChatServer) -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    user: Any = {"role": "user", "content": "Look up A1."}
    orphan: Any = [user, {"role": "tool", "tool_call_id": "call_9", "content": "x"}]
    unanswered: Any = [user, {"role": "assistant", "tool_calls": [call]}, user]
    with pytest.raises(openai.BadRequestError) as raised:
        sdk(server).chat.completions.create(
            model="qwen3-max",
            messages=orphan,
        )
    assert raised.value.message.endswith(
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
        "message with 'tool_calls'."
    )
    with pytest.raises(openai.BadRequestError) as missing:
        sdk(server).chat.completions.create(
            model="qwen3-max",
            messages=unanswered,
        )
    assert missing.value.message.endswith(
        "An assistant message with 'tool_calls' must be followed by tool messages responding "
        "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        "call_1"
    )
    with pytest.raises(openai.BadRequestError, match="Messages with role 'tool' must be a"):
        sdk(server).chat.completions.create(
            model="deepseek-reasoner",
            messages=orphan,
        )


def test_minimax_split_reasoning_comes_in_reasoning_details(server: ReasoningChatServer) -> None:
    completion = sdk(server).chat.completions.create(
        model="MiniMax-M2",
        messages=[{"role": "user", "content": "Look up A1."}],
        tools=[SDK_TOOL],
        extra_body={"reasoning_split": True},
    )
    message = completion.model_dump()["choices"][0]["message"]
    assert message["reasoning_details"][0]["type"] == "reasoning.text"
    assert completion.choices[0].finish_reason == "tool_calls"


def test_deepseek_caches_a_long_prefix_in_64_token_units(server: ReasoningChatServer) -> None:
    model = inspect_model(server, ChatDialect.DEEPSEEK)
    first, second = asyncio.run(two_turns(model, system="Be careful. " * 200))
    assert first.usage is not None and not first.usage.input_tokens_cache_read
    assert second.usage is not None and second.usage.input_tokens_cache_read
    assert second.usage.input_tokens_cache_read % 64 == 0
    system: Any = {"role": "system", "content": "Be careful. " * 200}
    for _ in range(2):
        raw = sdk(server).chat.completions.create(model="deepseek-reasoner", messages=[system])
    usage = raw.usage.model_dump()  # type: ignore[union-attr]
    assert usage["prompt_cache_hit_tokens"] > 0 and usage["prompt_cache_hit_tokens"] % 64 == 0
    assert (
        usage["prompt_cache_hit_tokens"] + usage["prompt_cache_miss_tokens"]
        == (usage["prompt_tokens"])
    )
    assert usage["prompt_tokens_details"]["cached_tokens"] == usage["prompt_cache_hit_tokens"]


def test_the_lean_path_carries_reasoning_back_as_inspects_path_does(
    server: ReasoningChatServer,
) -> None:
    """occubench's fast path posts the same second-turn body as Inspect's, and it is accepted."""
    inspects = inspect_model(server, ChatDialect.DEEPSEEK)
    lean = inspect_model(server, ChatDialect.DEEPSEEK)
    assert fast_path(lean)

    async def run() -> list[ModelOutput]:
        history: list[ChatMessage] = [ChatMessageUser(content="Look up A1.")]
        first = await inspects.generate(history, tools=[TOOL])
        history += [first.message, *answered(first.message)]
        return [await m.generate(history, tools=[TOOL]) for m in (inspects, lean)]

    outputs = asyncio.run(run())
    sdk_body, lean_body = (r.raw for r in server.requests[-2:])
    assert lean_body == sdk_body and b'"reasoning_content"' in lean_body
    assert [o.completion for o in outputs] == [outputs[0].completion] * 2
    assert server.refused == []


def test_a_wrong_key_and_an_unknown_model_are_refused(server: ReasoningChatServer) -> None:
    client = openai.OpenAI(base_url=server.base_url, api_key="sk-wrong-secret", max_retries=0)
    with pytest.raises(openai.AuthenticationError) as raised:
        client.chat.completions.create(model="deepseek-reasoner", messages=[])
    assert "sk-wrong" not in str(raised.value)
    with pytest.raises(openai.NotFoundError, match="does not exist"):
        sdk(server).chat.completions.create(
            model="nobody", messages=[{"role": "user", "content": "hi"}]
        )


def test_binds_loopback_only() -> None:
    with pytest.raises(UsageError, match="loopback"):
        ReasoningChatServer(host="10.0.0.1")
