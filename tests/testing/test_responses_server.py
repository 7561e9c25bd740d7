"""The strict local OpenAI Responses server, through Inspect's openai provider and the SDK."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    Model,
    get_model,
)
from inspect_ai.tool import ToolCall

from occubench.errors import UsageError
from occubench.scripted import BEHAVIOURS
from occubench.testing._responses_server import Effort, ResponsesServer
from wire_turns import TOOL, two_turns

KEY = "test-key"
AGENT = "gpt-5.2"
SDK_TOOL: Any = {
    "type": "function",
    "name": "lookup",
    "description": "Look a thing up.",
    "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
    "strict": False,
}
LONG_SYSTEM = "You are a careful agent. " * 400
"""About 2,500 tokens as the server counts: over the 1024-token caching minimum."""


@pytest.fixture
def server() -> Iterator[ResponsesServer]:
    agent = BEHAVIOURS["schema-agent"]
    with ResponsesServer(behaviours={AGENT: agent, "gpt-5": agent}, record=True) as s:
        yield s


def inspect_model(server: ResponsesServer, name: str = AGENT, effort: str = "high") -> Model:
    return get_model(
        f"openai/{name}",
        base_url=server.base_url,
        api_key=KEY,
        config=GenerateConfig(reasoning_effort=effort),  # type: ignore[arg-type]
        memoize=False,
    )


def sdk(server: ResponsesServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0)


def create(server: ResponsesServer, **request: Any) -> Any:
    """One ``responses.create`` (store off, encrypted reasoning included, as Inspect asks)."""
    params: dict[str, Any] = {
        "model": AGENT,
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "reasoning": {"effort": "high"},
        "tools": [SDK_TOOL],
        **request,
    }
    return sdk(server).responses.create(**params)


def first_turn(server: ResponsesServer) -> list[dict[str, Any]]:
    """A user message and the model's output items (reasoning, function call), as dicts."""
    user = {"role": "user", "content": "Look up A1."}
    response = create(server, input=[user])
    return [user, *(item.model_dump(exclude_none=True) for item in response.output)]


def output_for(items: list[dict[str, Any]]) -> dict[str, Any]:
    call = next(i for i in items if i.get("type") == "function_call")
    return {"type": "function_call_output", "call_id": call["call_id"], "output": "found"}


def test_a_kept_history_is_accepted_with_its_encrypted_reasoning(server: ResponsesServer) -> None:
    first, second = asyncio.run(two_turns(inspect_model(server)))
    assert first.message.tool_calls and second.completion.startswith("Final answer")
    assert second.usage is not None and second.usage.reasoning_tokens
    assert server.refused == []
    body = server.requests[-1].body
    assert body["store"] is False and body["include"] == ["reasoning.encrypted_content"]
    reasoning = [i for i in body["input"] if i["type"] == "reasoning"]
    assert reasoning and reasoning[0]["encrypted_content"] and reasoning[0]["id"].startswith("rs_")


def test_inspect_rebuilt_from_text_and_calls_replays_the_call_id_and_is_refused(
    server: ResponsesServer,
) -> None:
    """Inspect replays a call it produced with its ``fc_`` id: the reasoning it needs is gone."""
    with pytest.raises(RuntimeError, match="required 'reasoning' item: 'rs_"):  # Inspect's 400
        asyncio.run(two_turns(inspect_model(server), rebuild=True))
    assert "of type 'function_call' was provided without its required" in server.refused[-1]


def test_a_history_rebuilt_elsewhere_without_reasoning_is_accepted(server: ResponsesServer) -> None:
    """Calls Inspect never produced go without ids: dropping reasoning is then accepted."""
    call = ToolCall(id="c1", function="lookup", arguments={"query": "A1"})
    history: list[ChatMessage] = [
        ChatMessageUser(content="Look up A1."),
        ChatMessageAssistant(content="", tool_calls=[call]),
        ChatMessageTool(content="found", tool_call_id="c1", function="lookup"),
    ]
    output = asyncio.run(inspect_model(server).generate(history, tools=[TOOL]))
    assert output.completion.startswith("Final answer") and server.refused == []
    sent = server.requests[-1].body["input"]
    assert [i["type"] for i in sent] == ["message", "function_call", "function_call_output"]


def test_dropping_reasoning_items_is_accepted_when_ids_go_too(server: ResponsesServer) -> None:
    items = first_turn(server)
    kept = [
        {k: v for k, v in i.items() if k != "id"} for i in items if i.get("type") != "reasoning"
    ]
    response = create(server, input=[*kept, output_for(items)])
    assert response.output_text.startswith("Final answer")


def test_a_reasoning_item_by_id_alone_is_not_found_without_store(server: ResponsesServer) -> None:
    items = first_turn(server)
    for item in items:
        item.pop("encrypted_content", None)
    with pytest.raises(openai.NotFoundError) as raised:
        create(server, input=[*items, output_for(items)])
    rid = next(i["id"] for i in items if i.get("type") == "reasoning")
    assert raised.value.body == {
        "message": f"Item with id '{rid}' not found. Items are not persisted when `store` is "
        "set to false. Try again with `store` set to true, or remove this item from your input.",
        "type": "invalid_request_error",
        "param": "input",
        "code": None,
    }


def test_a_reasoning_item_by_id_is_found_when_stored(server: ResponsesServer) -> None:
    user = {"role": "user", "content": "Look up A1."}
    response = create(server, input=[user], store=True, include=[])
    items = [user, *(i.model_dump(exclude_none=True) for i in response.output)]
    assert "encrypted_content" not in items[1]
    followed = create(server, input=[*items, output_for(items)], store=True, include=[])
    assert followed.output_text.startswith("Final answer")


def test_tampered_encrypted_content_is_refused(server: ResponsesServer) -> None:
    items = first_turn(server)
    reasoning = next(i for i in items if i.get("type") == "reasoning")
    reasoning["encrypted_content"] = "x" + reasoning["encrypted_content"][1:]
    with pytest.raises(openai.BadRequestError, match="could not be verified") as raised:
        create(server, input=[*items, output_for(items)])
    assert raised.value.code == "invalid_encrypted_content"


def test_a_reasoning_item_needs_its_following_item(server: ResponsesServer) -> None:
    items = first_turn(server)
    last = [i for i in items if i.get("type") != "function_call"]
    with pytest.raises(openai.BadRequestError, match="without its required following item"):
        create(server, input=last)


def test_tool_outputs_and_calls_must_pair(server: ResponsesServer) -> None:
    items = first_turn(server)
    stray = {"type": "function_call_output", "call_id": "call_nobody", "output": "x"}
    with pytest.raises(openai.BadRequestError) as raised:
        create(server, input=[*items, output_for(items), stray])
    assert raised.value.message.endswith(
        "No tool call found for function call output with call_id call_nobody."
    )
    call_id = output_for(items)["call_id"]
    with pytest.raises(
        openai.BadRequestError, match=f"No tool output found for function call {call_id}"
    ):
        create(server, input=items)


def test_an_effort_the_model_refuses_surfaces_through_inspect(server: ResponsesServer) -> None:
    text = (
        "Unsupported value: 'reasoning.effort' does not support 'xhigh' with this model. "
        "Supported values are: 'minimal', 'low', 'medium', and 'high'."
    )
    with pytest.raises(RuntimeError) as raised:  # Inspect's error for a 400
        asyncio.run(two_turns(inspect_model(server, "gpt-5", effort="xhigh")))
    assert text in str(raised.value)
    assert ResponsesServer().reasoning["gpt-5"] == (
        Effort.MINIMAL,
        Effort.LOW,
        Effort.MEDIUM,
        Effort.HIGH,
    )


def test_a_long_shared_prefix_is_read_from_the_cache(server: ResponsesServer) -> None:
    first, second = asyncio.run(two_turns(inspect_model(server), system=LONG_SYSTEM))
    assert first.usage is not None and not first.usage.input_tokens_cache_read
    assert second.usage is not None and second.usage.input_tokens_cache_read
    cached = second.usage.input_tokens_cache_read
    assert cached >= 1024 and cached % 128 == 0
    assert server.cache_read_tokens[AGENT] == cached


def test_a_different_prompt_cache_key_shares_nothing(server: ResponsesServer) -> None:
    user = {"role": "developer", "content": LONG_SYSTEM}
    first = create(server, input=[user, {"role": "user", "content": "hi"}], prompt_cache_key="a")
    again = create(server, input=[user, {"role": "user", "content": "hi"}], prompt_cache_key="a")
    other = create(server, input=[user, {"role": "user", "content": "hi"}], prompt_cache_key="b")
    assert first.usage.input_tokens_details.cached_tokens == 0
    assert again.usage.input_tokens_details.cached_tokens > 1024
    assert other.usage.input_tokens_details.cached_tokens == 0


def test_streamed_events_end_with_the_completed_response(server: ResponsesServer) -> None:
    stream = sdk(server).responses.create(
        model=AGENT, input="Look up A1.", tools=[SDK_TOOL], reasoning={"effort": "low"}, stream=True
    )
    events = list(stream)
    kinds = [e.type for e in events]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert "response.function_call_arguments.delta" in kinds
    assert "response.output_item.done" in kinds
    assert events[-1].response.output[-1].type == "function_call"  # type: ignore[union-attr]


def test_a_wrong_key_is_refused_in_openais_shape_without_the_key(server: ResponsesServer) -> None:
    client = openai.OpenAI(base_url=server.base_url, api_key="sk-wrong-secret", max_retries=0)
    with pytest.raises(openai.AuthenticationError) as raised:
        client.responses.create(model=AGENT, input="hi")
    assert raised.value.code == "invalid_api_key" and "sk-wrong" not in str(raised.value)
    body: Any = raised.value.body
    assert set(body) == {"message", "type", "param", "code"}


def test_an_unknown_model_and_parameter_are_refused(server: ResponsesServer) -> None:
    with pytest.raises(openai.NotFoundError, match="does not exist"):
        sdk(server).responses.create(model="gpt-nobody", input="hi")
    with pytest.raises(openai.BadRequestError, match="Unknown parameter: 'frobnicate'"):
        sdk(server).responses.create(model=AGENT, input="hi", extra_body={"frobnicate": 1})


def test_binds_loopback_only() -> None:
    with pytest.raises(UsageError, match="loopback"):
        ResponsesServer(host="0.0.0.0")
