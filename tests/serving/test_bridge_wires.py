"""The bridge endpoint's wires, driven by the real SDKs: Anthropic Messages, OpenAI Responses
and chat completions.

Each test serves the endpoint inside an Inspect sample (as ``--agent-command`` does)
whose model is scripted (``occubench/replay``: a tool call, then an answer), drives it
with the provider's own client over HTTP, and checks the answer, the tool call round
trip, and that every generation is an Inspect model call with its usage in the sample's
log, and told to the endpoint's owner with its wire (``BridgedCall``). The credential
rules and the unknown-route answer are checked on the same app; the event streams are
checked event by event against the SDKs' types.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import anthropic
import anyio
import httpx
import openai
import pytest
from anthropic.types import Message
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalSample
from inspect_ai.solver import Generate, Solver, TaskState, solver
from mcp.server.lowlevel import Server
from openai.types.chat import ChatCompletion
from openai.types.responses import Response

from occubench.defaults import DEFAULT_ALLOWED_HOSTS
from occubench.providers import Wire
from occubench.serving import Access, BridgedCall, bridge_routes, http_app, http_endpoint
from occubench.serving._program import _maybe_bridge

TOKEN = "sample-token-0123456789abcdef"
CALL = {"tool": "lookup", "arguments": {"station": "N4"}}
ANSWER = "Station N4 reads 7."
Drive = Callable[[str], Awaitable[Any]]
"""What a test does with the endpoint (its base URL), inside the sample."""


def endpoint_app() -> Any:
    return http_app(Server("wires"), Access.of(TOKEN, DEFAULT_ALLOWED_HOSTS), bridge_routes(print))


@solver
def drive_endpoint(drive: Drive, seen: dict[str, Any]) -> Solver:
    """Serve the endpoint inside the sample, bridged as ``agent_program`` bridges it."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        failures: list[BaseException] = []
        calls: list[BridgedCall] = []
        routes = bridge_routes(failures.append, calls.append)
        app = http_app(Server("wires"), Access.of(TOKEN, DEFAULT_ALLOWED_HOSTS), routes)
        async with _maybe_bridge(True), http_endpoint(app, "127.0.0.1", 0) as base:
            seen["result"] = await drive(base)
        seen["failures"], seen["calls"] = failures, calls
        return state

    return solve


def bridged(
    tmp_path: Any, drive: Drive, outputs: list[Any], calls: list[BridgedCall] | None = None
) -> tuple[Any, EvalSample]:
    """Run ``drive`` in a sample whose agent model replays ``outputs``; its result, sample.

    ``calls``, when given, receives the generations the endpoint told of.
    """
    seen: dict[str, Any] = {}
    (log,) = inspect_eval(
        Task(dataset=[Sample(input="wire")], solver=drive_endpoint(drive, seen)),
        model="occubench/replay",
        model_args={"outputs": outputs},
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success", log.error
    assert seen["failures"] == []
    if calls is not None:
        calls += seen["calls"]
    assert log.samples is not None
    return seen["result"], log.samples[0]


def assert_model_calls(sample: EvalSample, count: int) -> None:
    """``count`` generations, each an Inspect model call, their usage in the sample's log."""
    calls = [e for e in sample.events if e.event == "model"]
    assert len(calls) == count
    assert all(c.output.usage is not None and c.output.usage.input_tokens > 0 for c in calls)
    usage = (sample.model_usage or {})["occubench/replay"]
    assert usage.input_tokens > 0 and usage.output_tokens > 0


ANTHROPIC_TOOLS: list[Any] = [
    {
        "name": "lookup",
        "description": "Read a station.",
        "input_schema": {"type": "object", "properties": {"station": {"type": "string"}}},
    }
]


async def anthropic_reply(
    client: anthropic.AsyncAnthropic, asked: dict[str, Any], streamed: bool
) -> Message:
    """One Messages request, streamed (the SDK's accumulated message) or not."""
    if not streamed:
        return await client.messages.create(**asked)
    async with client.messages.stream(**asked) as stream:
        return await stream.get_final_message()


async def responses_reply(
    client: openai.AsyncOpenAI, asked: dict[str, Any], streamed: bool
) -> Response:
    """One Responses request, streamed (from ``response.created`` to ``response.completed``,
    whose response is the answer) or not."""
    if not streamed:
        return await client.responses.create(**asked)
    stream = await client.responses.create(stream=True, **asked)
    events = [event async for event in stream]
    assert events[0].type == "response.created"
    assert events[-1].type == "response.completed"
    return events[-1].response


async def anthropic_turns(client: anthropic.AsyncAnthropic, streamed: bool) -> list[Message]:
    """Two turns: the model calls ``lookup``, is given its result, and answers."""
    messages: list[Any] = [{"role": "user", "content": "Read station N4."}]
    replies = []
    for _ in range(2):
        asked: dict[str, Any] = {
            "model": "claude-test",
            "max_tokens": 512,
            "system": "You read stations.",
            "messages": messages,
            "tools": ANTHROPIC_TOOLS,
        }
        reply = await anthropic_reply(client, asked, streamed)
        replies.append(reply)
        messages.append({"role": "assistant", "content": reply.model_dump()["content"]})
        uses = [b for b in reply.content if b.type == "tool_use"]
        if uses:
            result = {"type": "tool_result", "tool_use_id": uses[0].id, "content": "7"}
            messages.append({"role": "user", "content": [result]})
    return replies


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_anthropic_messages_tool_round_trip(tmp_path, streamed):
    """x-api-key (api_key) for the whole answers, Bearer (auth_token) for the streamed."""

    async def drive(base: str) -> list[Message]:
        key = {"auth_token": TOKEN} if streamed else {"api_key": TOKEN}
        async with anthropic.AsyncAnthropic(base_url=base, max_retries=0, **key) as client:
            return await anthropic_turns(client, streamed)

    told: list[BridgedCall] = []
    (call, answer), sample = bridged(tmp_path, drive, [CALL, ANSWER], told)
    assert call.stop_reason == "tool_use"
    (use,) = [b for b in call.content if b.type == "tool_use"]
    assert use.name == "lookup" and use.input == {"station": "N4"}
    assert answer.stop_reason == "end_turn"
    assert [b.text for b in answer.content if b.type == "text"] == [ANSWER]
    assert answer.usage.input_tokens > 0 and answer.usage.output_tokens > 0
    assert_model_calls(sample, 2)
    assert [(c.wire, c.streamed) for c in told] == [(Wire.ANTHROPIC, streamed)] * 2
    assert told[1].input_tokens == answer.usage.input_tokens
    assert told[1].output_tokens == answer.usage.output_tokens


def test_anthropic_count_tokens_asks_the_agent_model_and_generates_nothing(tmp_path):
    async def drive(base: str) -> list[int]:
        counts = []
        async with anthropic.AsyncAnthropic(base_url=base, api_key=TOKEN) as client:
            for tools in ([], ANTHROPIC_TOOLS):
                counted = await client.messages.count_tokens(
                    model="claude-test",
                    system="You read stations.",
                    messages=[{"role": "user", "content": "Read station N4, " * 20}],
                    tools=tools,
                )
                counts.append(counted.input_tokens)
        return counts

    (bare, with_tools), sample = bridged(tmp_path, drive, [ANSWER])
    assert 0 < bare < with_tools
    assert [e for e in sample.events if e.event == "model"] == []


NAMESPACE = "mcp__occubench__"
RESPONSES_TOOLS: list[Any] = [
    {
        "type": "namespace",
        "name": NAMESPACE,
        "description": "The occubench MCP server's tools.",
        "tools": [
            {
                "type": "function",
                "name": "lookup",
                "description": "Read a station.",
                "parameters": {"type": "object", "properties": {"station": {"type": "string"}}},
            }
        ],
    },
    {  # an MCP tool as older Codex versions name it: server and tool in one name
        "type": "function",
        "name": f"{NAMESPACE}read_log",
        "description": "Read the station log.",
        "parameters": {"type": "object", "properties": {}},
    },
]


async def responses_turns(client: openai.AsyncOpenAI, streamed: bool) -> list[Response]:
    """Two turns, as Codex takes them (``store=False``: the items are sent back each turn)."""
    items: list[Any] = [{"role": "user", "content": "Read station N4."}]
    replies = []
    for _ in range(2):
        asked: dict[str, Any] = {
            "model": "gpt-test",
            "instructions": "You read stations.",
            "input": items,
            "tools": RESPONSES_TOOLS,
            "store": False,
        }
        reply = await responses_reply(client, asked, streamed)
        replies.append(reply)
        items += [item.model_dump(exclude_none=True) for item in reply.output]
        calls = [item for item in reply.output if item.type == "function_call"]
        if calls:
            items.append(
                {"type": "function_call_output", "call_id": calls[0].call_id, "output": "7"}
            )
    return replies


@pytest.mark.parametrize(
    ("streamed", "tool", "namespace"),
    [(False, "lookup", NAMESPACE), (True, f"{NAMESPACE}read_log", None)],
    ids=["whole-namespaced-tool", "streamed-flat-mcp-name"],
)
def test_openai_responses_function_call_round_trip(tmp_path, streamed, tool, namespace):
    async def drive(base: str) -> list[Response]:
        async with openai.AsyncOpenAI(base_url=f"{base}/v1", api_key=TOKEN) as client:
            return await responses_turns(client, streamed)

    (call, answer), sample = bridged(
        tmp_path, drive, [{"tool": tool, "arguments": {"station": "N4"}}, ANSWER]
    )
    (made,) = [item for item in call.output if item.type == "function_call"]
    assert made.name == tool and json.loads(made.arguments) == {"station": "N4"}
    assert made.namespace == namespace  # Codex dispatches by (namespace, name)
    assert answer.output_text == ANSWER
    assert answer.usage is not None and answer.usage.input_tokens > 0
    assert_model_calls(sample, 2)


def test_the_responses_stream_helper_accumulates_the_same_answer(tmp_path):
    async def drive(base: str) -> tuple[Response, str]:
        async with (
            openai.AsyncOpenAI(base_url=f"{base}/v1", api_key=TOKEN) as client,
            client.responses.stream(model="gpt-test", input="Read station N4.") as stream,
        ):
            deltas = [e.delta async for e in stream if e.type == "response.output_text.delta"]
            return await stream.get_final_response(), "".join(deltas)

    (final, text), sample = bridged(tmp_path, drive, [ANSWER])
    assert final.output_text == text == ANSWER
    assert_model_calls(sample, 1)


CHAT_TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "Read a station.",
            "parameters": {"type": "object", "properties": {"station": {"type": "string"}}},
        },
    }
]


async def chat_turns(client: openai.AsyncOpenAI, streamed: bool) -> list[ChatCompletion]:
    """Two turns on chat completions; streamed with the SDK's stream helper and usage."""
    messages: list[Any] = [{"role": "user", "content": "Read station N4."}]
    replies = []
    for _ in range(2):
        asked: dict[str, Any] = {"model": "gpt-test", "messages": messages, "tools": CHAT_TOOLS}
        if streamed:
            options: Any = {"include_usage": True}
            async with client.chat.completions.stream(**asked, stream_options=options) as stream:
                kinds = {event.type async for event in stream}
                reply: Any = await stream.get_final_completion()
            assert "chunk" in kinds
        else:
            reply = await client.chat.completions.create(**asked)
        replies.append(reply)
        message = reply.choices[0].message
        messages.append(message.model_dump(exclude_none=True, exclude={"parsed"}))
        for call in message.tool_calls or []:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": "7"})
    return replies


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_openai_chat_completions_tool_round_trip(tmp_path, streamed):
    async def drive(base: str) -> list[ChatCompletion]:
        async with openai.AsyncOpenAI(base_url=f"{base}/v1", api_key=TOKEN) as client:
            return await chat_turns(client, streamed)

    told: list[BridgedCall] = []
    (call, answer), sample = bridged(tmp_path, drive, [CALL, ANSWER], told)
    assert call.choices[0].finish_reason == "tool_calls"
    (made,) = call.choices[0].message.tool_calls or []
    assert made.type == "function"
    assert (
        made.function.name == "lookup" and json.loads(made.function.arguments) == CALL["arguments"]
    )
    assert answer.choices[0].message.content == ANSWER
    assert answer.usage is not None and answer.usage.prompt_tokens > 0  # include_usage
    assert_model_calls(sample, 2)
    assert [(c.wire, c.streamed) for c in told] == [(Wire.OPENAI_CHAT, streamed)] * 2
    assert told[1].input_tokens == answer.usage.prompt_tokens


def test_provider_tools_a_client_declares_are_withheld_and_the_request_answered(tmp_path):
    """Claude Code's and Codex's web search never reaches the model: the env is the world."""

    async def drive(base: str) -> tuple[Message, Response]:
        async with (
            anthropic.AsyncAnthropic(base_url=base, api_key=TOKEN) as claude,
            openai.AsyncOpenAI(base_url=f"{base}/v1", api_key=TOKEN) as codex,
        ):
            message = await claude.messages.create(
                model="claude-test",
                max_tokens=64,
                messages=[{"role": "user", "content": "Search."}],
                tools=[{"type": "web_search_20250305", "name": "web_search"}],
            )
            response = await codex.responses.create(
                model="gpt-test", input="Search.", tools=[{"type": "web_search"}]
            )
            return message, response

    (message, response), sample = bridged(tmp_path, drive, [ANSWER])
    assert message.content[0].type == "text" and message.content[0].text == ANSWER
    assert response.output_text == ANSWER
    calls = [e for e in sample.events if e.event == "model"]
    assert len(calls) == 2 and all(not call.tools for call in calls)


def test_the_token_is_taken_as_bearer_or_x_api_key_and_a_wrong_one_is_refused():
    async def statuses() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=endpoint_app())
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            asks = [
                {},
                {"x-api-key": "x" * len(TOKEN)},
                {"Authorization": "Bearer " + "x" * len(TOKEN)},
                {"Authorization": f"Bearer {TOKEN}", "x-api-key": "x" * len(TOKEN)},
                {"Authorization": f"Bearer {TOKEN}"},
                {"x-api-key": TOKEN},
                {"Authorization": f"Bearer {TOKEN}", "x-api-key": TOKEN},
            ]
            # a body the route refuses (400) once past the guard: no sample is needed
            return [await http.post("/v1/messages", json={}, headers=h) for h in asks]

    replies = anyio.run(statuses)
    assert [r.status_code for r in replies] == [401, 401, 401, 401, 400, 400, 400]
    assert replies[-1].json()["error"]["type"] == "invalid_request_error"


def test_the_sdks_see_a_wrong_token_and_an_unknown_route_as_such(tmp_path):
    async def drive(base: str) -> dict[str, Any]:
        wrong = anthropic.AsyncAnthropic(base_url=base, api_key="x" * len(TOKEN))
        async with wrong, openai.AsyncOpenAI(base_url=f"{base}/v1", api_key=TOKEN) as client:
            with pytest.raises(anthropic.AuthenticationError):
                await wrong.messages.create(
                    model="claude-test", max_tokens=8, messages=[{"role": "user", "content": "hi"}]
                )
            with pytest.raises(openai.NotFoundError) as missing:
                await client.completions.create(model="gpt-test", prompt="hi")
        return {"message": missing.value.message, "body": missing.value.body}

    seen, sample = bridged(tmp_path, drive, [ANSWER])
    assert "POST /v1/completions" in seen["message"]
    body = seen["body"]  # the error object
    assert body["type"] == "not_found_error"
    for route in ("/v1/chat/completions", "/v1/responses", "/v1/messages"):
        assert f"POST {route}" in body["routes"]
    assert [e for e in sample.events if e.event == "model"] == []


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/responses", {"model": "m"}),
        ("/v1/messages", {"model": "m", "messages": "hi"}),
        ("/v1/chat/completions", {"model": "m", "stream": True}),
        ("/v1/messages/count_tokens", {"model": "m", "messages": [], "stream": True}),
    ],
    ids=["no-input", "messages-not-a-list", "chat-no-messages", "count-streamed"],
)
def test_a_request_a_route_cannot_answer_is_a_400_in_both_clients_shape(path, body):
    async def ask() -> httpx.Response:
        transport = httpx.ASGITransport(app=endpoint_app())
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            return await http.post(path, json=body, headers={"x-api-key": TOKEN})

    reply = anyio.run(ask)
    assert reply.status_code == 400
    assert reply.json()["type"] == "error" and reply.json()["error"]["message"]
