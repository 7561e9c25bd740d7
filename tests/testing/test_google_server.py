"""The strict Gemini wire: Inspect's real google provider against GoogleServer."""

import asyncio
import base64
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    ContentReasoning,
    GenerateConfig,
    Model,
    ModelOutput,
    get_model,
)
from inspect_ai.tool import ToolInfo, ToolParam, ToolParams

from occubench.errors import UsageError
from occubench.scripted import BEHAVIOURS
from occubench.testing._google_server import GoogleServer, Signed, signed_payload

PRO3 = "gemini-3-pro-preview"
FLASH25 = "gemini-2.5-flash"
FLASH20 = "gemini-2.0-flash"
AGENT = BEHAVIOURS["schema-agent"]
TOOLS = [
    ToolInfo(
        name="lookup_order",
        description="Look an order up.",
        parameters=ToolParams(
            properties={"order_id": ToolParam(type="string", description="The order.")},
            required=["order_id"],
        ),
    )
]
MISSING = "Function call is missing a thought_signature in functionCall parts."
COUNT = "the number of function response parts is equal to the number of function call parts"


@pytest.fixture
def server() -> Iterator[GoogleServer]:
    names = {PRO3: AGENT, FLASH25: AGENT, FLASH20: AGENT}
    with GoogleServer(behaviours=names, record=True) as running:
        yield running


def gemini(server: GoogleServer, name: str = PRO3, **args: Any) -> Model:
    return get_model(
        f"google/{name}",
        base_url=server.base_url,
        api_key="test-key",
        config=GenerateConfig(reasoning_effort="high"),
        memoize=False,
        **args,
    )


def start(system: str = "You are a support agent.") -> list[ChatMessage]:
    return [ChatMessageSystem(content=system), ChatMessageUser(content="Where is order 7?")]


def generate(model: Model, messages: list[ChatMessage]) -> ModelOutput:
    return asyncio.run(model.generate(messages, tools=TOOLS))


def reasoning(output: ModelOutput) -> list[ContentReasoning]:
    content = output.message.content
    return (
        [c for c in content if isinstance(c, ContentReasoning)] if isinstance(content, list) else []
    )


def with_result(messages: list[ChatMessage], output: ModelOutput) -> list[ChatMessage]:
    """The history after the model's function call and its result."""
    assert output.message.tool_calls
    call = output.message.tool_calls[0]
    result = ChatMessageTool(content="shipped", tool_call_id=call.id, function=call.function)
    return [*messages, output.message, result]


def call_turn(model: Model, messages: list[ChatMessage]) -> list[ChatMessage]:
    """Ask for the function call, and add it and its result to the history."""
    return with_result(messages, generate(model, messages))


def rebuilt(history: list[ChatMessage]) -> list[ChatMessage]:
    """The history with the assistant message rebuilt from its text and tool calls only."""
    return [
        ChatMessageAssistant(content=m.text, tool_calls=m.tool_calls)
        if isinstance(m, ChatMessageAssistant)
        else m
        for m in history
    ]


def test_function_call_round_trip_is_accepted_when_the_message_is_kept(
    server: GoogleServer,
) -> None:
    model = gemini(server)
    first = generate(model, start())
    assert first.message.tool_calls and first.message.tool_calls[0].function == "lookup_order"
    # Gemini ends a function-call turn with STOP, which Inspect maps to "stop": the tool
    # calls ride on the message, not on the stop reason.
    assert first.stop_reason == "stop"
    assert [c.redacted for c in reasoning(first)] == [False, True]  # summary, then signature
    final = generate(model, with_result(start(), first))
    assert final.stop_reason == "stop" and "Final answer" in final.message.text
    assert server.refused == []


def test_rebuilt_assistant_message_is_refused_with_googles_text(server: GoogleServer) -> None:
    model = gemini(server)
    history = rebuilt(call_turn(model, start()))
    with pytest.raises(Exception, match=MISSING) as refused:
        generate(model, history)
    assert "default_api:lookup_order` , position 2." in str(refused.value)
    assert server.refused and server.refused[0].startswith(MISSING)


def test_tampered_signature_is_refused(server: GoogleServer) -> None:
    model = gemini(server)
    history = call_turn(model, start())
    assistant = history[2]
    assert isinstance(assistant, ChatMessageAssistant) and not isinstance(assistant.content, str)
    for item in assistant.content:
        if isinstance(item, ContentReasoning) and item.redacted:
            item.reasoning = base64.b64encode(b"not the server's signature").decode()
    with pytest.raises(Exception, match="Corrupted thought signature."):
        generate(model, history)


def test_function_response_count_must_match_the_calls(server: GoogleServer) -> None:
    model = gemini(server)
    history = call_turn(model, start())
    with pytest.raises(Exception, match=COUNT):
        generate(model, [*history, history[-1]])  # one call, two responses


def test_streaming_gives_the_same_content(server: GoogleServer) -> None:
    plain, streamed = gemini(server), gemini(server, streaming=True)
    history = call_turn(plain, start())
    for messages in (start(), history):
        a, b = generate(plain, messages), generate(streamed, messages)
        assert a.message.text == b.message.text
        assert [(c.function, c.arguments) for c in a.message.tool_calls or []] == [
            (c.function, c.arguments) for c in b.message.tool_calls or []
        ]
        assert [(r.reasoning, r.summary, r.redacted) for r in reasoning(a)] == [
            (r.reasoning, r.summary, r.redacted) for r in reasoning(b)
        ]
    assert any("streamGenerateContent" in r.path for r in server.requests)
    # a history rebuilt from a streamed answer is refused just the same
    streamed_history = call_turn(streamed, start())
    with pytest.raises(Exception, match=MISSING):
        generate(streamed, rebuilt(streamed_history))
    assert generate(streamed, streamed_history).message.text.startswith("Final answer")


def test_count_tokens(server: GoogleServer) -> None:
    model = gemini(server)
    total = asyncio.run(model.count_tokens(start()))
    assert total > 0
    answer = httpx.post(
        f"{server.base_url}/v1beta/models/{PRO3}:countTokens",
        headers={"x-goog-api-key": "k"},
        json={"contents": [{"role": "user", "parts": [{"text": "hello " * 40}]}]},
    )
    assert answer.status_code == 200
    assert answer.json()["totalTokens"] == answer.json()["promptTokensDetails"][0]["tokenCount"]


def test_implicit_cache_reports_the_shared_prefix(server: GoogleServer) -> None:
    model = gemini(server)
    system = "Policy: " + "refunds need a receipt. " * 300  # well over 1024 tokens
    first = generate(model, start(system))
    assert first.usage is not None and first.usage.input_tokens_cache_read is None
    history = call_turn(model, start(system))
    second = generate(model, history)
    assert second.usage is not None
    read = second.usage.input_tokens_cache_read
    assert read is not None and read > 1024
    assert second.usage.input_tokens > 0  # the new turns are not cached
    assert server.cached_tokens[PRO3] >= read
    assert server.stats.cache_write_tokens[PRO3] == 0  # implicit caching stores for free


def test_short_prompts_are_not_cached(server: GoogleServer) -> None:
    model = gemini(server)
    generate(model, start())
    usage = generate(model, start()).usage
    assert usage is not None and usage.input_tokens_cache_read is None


def test_non_thinking_model_needs_no_signature(server: GoogleServer) -> None:
    model = gemini(server, FLASH20)
    history = call_turn(model, start())
    # Inspect anchors each call with an empty reasoning block: no signature came with it
    assert [r.reasoning for r in reasoning(generate(model, start()))] == [""]
    assert "Final answer" in generate(model, rebuilt(history)).message.text


def test_gemini_25_does_not_enforce_signatures(server: GoogleServer) -> None:
    model = gemini(server, FLASH25)
    history = call_turn(model, start())
    assert all(r.reasoning for r in reasoning(generate(model, start())))  # it still signs
    assert "Final answer" in generate(model, rebuilt(history)).message.text


def test_binds_loopback_only() -> None:
    with pytest.raises(UsageError, match="loopback"):
        GoogleServer(host="0.0.0.0")


def test_unknown_model_surfaces_googles_message(server: GoogleServer) -> None:
    with pytest.raises(Exception, match="models/gemini-9-nope is not found for API version"):
        generate(gemini(server, "gemini-9-nope"), start())


def post(server: GoogleServer, model: str, body: dict[str, Any], **kw: Any) -> httpx.Response:
    headers = kw.pop("headers", {"x-goog-api-key": "k"})
    method = kw.pop("method", "generateContent")
    url = f"{server.base_url}/v1beta/models/{model}:{method}"
    return httpx.post(url, headers=headers, json=body, **kw)


USER = [{"role": "user", "parts": [{"text": "hi"}]}]


@pytest.mark.parametrize(
    ("model", "config", "message"),
    [
        (PRO3, {"thinkingConfig": {"thinkingLevel": "MINIMAL"}}, "Thinking level MINIMAL is not"),
        (FLASH25, {"thinkingConfig": {"thinkingLevel": "LOW"}}, "Thinking level is not supported"),
        ("gemini-2.5-pro", {"thinkingConfig": {"thinkingBudget": 0}}, "Budget 0 is invalid."),
        (
            PRO3,
            {"thinkingConfig": {"thinkingBudget": 128, "thinkingLevel": "HIGH"}},
            "You can only set only one of thinking budget and thinking level.",
        ),
        (FLASH20, {"thinkingConfig": {"includeThoughts": True}}, "thinking_config is not"),
        (PRO3, {"responseJsonSchema": {"type": "object"}}, "response_mime_type"),
        (PRO3, {"topZ": 1}, "Unknown name \"topZ\" at 'generation_config': Cannot find field."),
    ],
)
def test_generation_config_refusals(model: str, config: dict[str, Any], message: str) -> None:
    with GoogleServer(behaviours={model: AGENT}) as server:
        answer = post(server, model, {"contents": USER, "generationConfig": config})
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["status"] == "INVALID_ARGUMENT" and error["code"] == 400
    assert message in error["message"]


def test_snake_case_names_are_accepted(server: GoogleServer) -> None:
    config = {"thinking_config": {"include_thoughts": True, "thinking_level": "LOW"}}
    answer = post(server, PRO3, {"contents": USER, "generation_config": config})
    assert answer.status_code == 200
    parts = answer.json()["candidates"][0]["content"]["parts"]
    assert parts[0]["thought"] is True and "thoughtSignature" in parts[-1]


def test_auth_and_roles(server: GoogleServer) -> None:
    no_key = post(server, PRO3, {"contents": USER}, headers={})
    assert no_key.status_code == 403
    assert no_key.json()["error"]["status"] == "PERMISSION_DENIED"
    by_query = post(server, PRO3, {"contents": USER}, headers={}, params={"key": "k"})
    assert by_query.status_code == 200
    bad_role = post(server, PRO3, {"contents": [{"role": "assistant", "parts": [{"text": "x"}]}]})
    assert bad_role.json()["error"]["message"] == "Please use a valid role: user, model."


def test_function_response_must_follow_a_call(server: GoogleServer) -> None:
    answer = post(
        server,
        PRO3,
        {
            "contents": [
                *USER,
                {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]},
            ]
        },
    )
    assert "function response turn comes immediately after a function call" in answer.text


def test_sse_and_json_array_streams(server: GoogleServer) -> None:
    body = {"contents": USER, "generationConfig": {"thinkingConfig": {"includeThoughts": True}}}
    sse = post(server, PRO3, body, method="streamGenerateContent", params={"alt": "sse"})
    assert sse.headers["content-type"] == "text/event-stream"
    chunks = [json.loads(line[6:]) for line in sse.text.splitlines() if line.startswith("data: ")]
    array = post(server, PRO3, body, method="streamGenerateContent").json()
    assert chunks == array
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    assert "usageMetadata" in chunks[-1] and "usageMetadata" not in chunks[0]


def call(name: str, signature: str | None = None) -> dict[str, Any]:
    part: dict[str, Any] = {"functionCall": {"name": name, "args": {}}}
    return part | ({"thoughtSignature": signature} if signature else {})


def reply(*names: str) -> dict[str, Any]:
    parts = [{"functionResponse": {"name": n, "response": {"output": "ok"}}} for n in names]
    return {"role": "user", "parts": parts}


def signature(server: GoogleServer, name: str) -> str:
    return server.signer.sign(Signed(PRO3, signed_payload(call(name))).text())


def test_parallel_calls_need_only_the_first_signature(server: GoogleServer) -> None:
    signed = {"role": "model", "parts": [call("a", signature(server, "a")), call("b")]}
    assert post(server, PRO3, {"contents": [*USER, signed, reply("a", "b")]}).status_code == 200
    swapped = {"role": "model", "parts": [call("a"), call("b", signature(server, "b"))]}
    answer = post(server, PRO3, {"contents": [*USER, swapped, reply("a", "b")]})
    assert "function call `default_api:a` , position 2." in answer.json()["error"]["message"]


def test_only_the_current_turn_is_validated_and_dummies_pass(server: GoogleServer) -> None:
    old_turn = [*USER, {"role": "model", "parts": [call("a")]}, reply("a")]
    done = {"role": "model", "parts": [{"text": "done"}]}
    later = [*old_turn, done, *USER]
    assert post(server, PRO3, {"contents": later}).status_code == 200
    dummy = {"role": "model", "parts": [call("a", "skip_thought_signature_validator")]}
    assert post(server, PRO3, {"contents": [*USER, dummy, reply("a")]}).status_code == 200


def test_openapi_parameters_and_repeated_fields_are_strict(server: GoogleServer) -> None:
    schema = {"type": "OBJECT", "properties": {"a": {"type": "STRING", "const": "x"}}}
    tools = [{"functionDeclarations": [{"name": "f", "parameters": schema}]}]
    answer = post(server, PRO3, {"contents": USER, "tools": tools})
    where = "tools[0].function_declarations[0].parameters.properties[0].value"
    assert f"Unknown name \"const\" at '{where}'" in answer.json()["error"]["message"]
    single = post(server, PRO3, {"contents": USER[0]})
    assert single.status_code == 400 and "Invalid value at 'contents'" in single.text


def test_output_limit_ends_with_max_tokens(server: GoogleServer) -> None:
    model = get_model(
        f"google/{PRO3}",
        base_url=server.base_url,
        api_key="test-key",
        config=GenerateConfig(max_tokens=1),
        memoize=False,
    )
    assert generate(model, start()).stop_reason == "max_tokens"
