"""Each wire's whole answer told as its stream: the SDKs' own event types, in order."""

from __future__ import annotations

import json
from typing import Any

from anthropic.types import Message, RawMessageStreamEvent
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseStreamEvent
from pydantic import TypeAdapter

from occubench.providers import (
    GeminiAnswer,
    completion_chunks,
    generate_response,
    halves,
    message_events,
    response_events,
    sse,
    stream_chunks,
    whole,
)

MESSAGE = Message.model_validate(
    {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [
            {"type": "thinking", "thinking": "hm", "signature": "s"},
            {"type": "text", "text": "Reading."},
            {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"a": "é"}},
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 3},
    }
)


def test_a_message_streams_as_the_sdks_events():
    """Every event validates as the SDK's type (not merely constructed, as clients do)."""
    adapter: TypeAdapter[Any] = TypeAdapter(RawMessageStreamEvent)
    sent = [adapter.validate_python(data) for _, data in message_events(MESSAGE)]
    assert [e.type for e in sent][:2] == ["message_start", "content_block_start"]
    assert sent[0].message.usage.output_tokens == 0 and sent[0].message.stop_reason is None
    assert sent[-2].usage.output_tokens == 3 and sent[-1].type == "message_stop"
    deltas = [e.delta for e in sent if e.type == "content_block_delta"]
    assert [d.type for d in deltas] == [
        "thinking_delta",
        "signature_delta",
        "text_delta",
        "input_json_delta",
    ]
    assert deltas[-1].partial_json == '{"a": "é"}'


def test_a_message_cut_in_pieces_with_a_ping_accumulates_to_the_same_blocks():
    """The strict server's form: each text in two deltas, and the API's ping."""
    events = list(message_events(MESSAGE, pieces=halves, ping=True))
    assert [name for name, _ in events][:2] == ["message_start", "ping"]
    texts: dict[int, str] = {}
    for _, data in events:
        assert data is not None
        delta = data.get("delta") or {}
        piece = delta.get("text") or delta.get("thinking") or delta.get("partial_json") or ""
        if data["type"] == "content_block_delta":
            texts[data["index"]] = texts.get(data["index"], "") + piece
    assert texts == {0: "hm", 1: "Reading.", 2: '{"a": "é"}'}
    assert len([n for n, _ in events if n == "content_block_delta"]) == 7  # 2 + 1 + 2 + 2


def test_pieces_cut_a_text_whole_or_in_halves():
    assert whole("") == [""] and whole("abc") == ["abc"]
    assert halves("") == [] and halves("a") == ["a"] and halves("abcd") == ["ab", "cd"]


def test_a_response_streams_as_the_sdks_events_numbered_in_order():
    response = Response.model_validate(
        {
            "id": "resp_1",
            "object": "response",
            "created_at": 0,
            "model": "m",
            "status": "completed",
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "output": [
                {
                    "type": "message",
                    "id": "msg_1",
                    "role": "assistant",
                    "status": "completed",
                    "content": [
                        {"type": "output_text", "text": "Reading.", "annotations": []},
                        {"type": "refusal", "refusal": "Not that."},
                    ],
                },
                {
                    "type": "function_call",
                    "id": "fc_1",
                    "call_id": "call_1",
                    "name": "lookup",
                    "arguments": "{}",
                    "status": "completed",
                },
            ],
        }
    )
    adapter: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)
    events = [adapter.validate_python(data) for _, data in response_events(response)]
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert events[0].type == "response.created" and events[0].response.output == []
    assert events[-1].type == "response.completed" and events[-1].response == response


def test_a_completion_streams_as_chunks_the_usage_last_when_asked():
    completion = ChatCompletion.model_validate(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": "Reading.",
                        "tool_calls": [
                            {
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": "lookup", "arguments": '{"a": 1}'},
                            }
                        ],
                    },
                }
            ],
            "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
        }
    )
    for include_usage, usage in ((False, None), (True, 8)):
        *chunks, done = list(completion_chunks(completion, include_usage))
        assert done == (None, None)  # data: [DONE]
        sent = [ChatCompletionChunk.model_validate(data) for _, data in chunks]
        assert all(name is None for name, _ in chunks)  # unnamed events, as OpenAI sends
        last = sent[-1]
        assert (last.usage.total_tokens if last.usage else None) == usage
        assert [c.choices[0].finish_reason for c in sent if c.choices][-1] == "tool_calls"


def test_sse_frames_named_and_unnamed_events_in_ascii():
    framed = b"".join(sse([("ping", {"type": "ping", "t": "é"}), (None, {"a": 1}), (None, None)]))
    assert framed == (
        b'event: ping\ndata: {"type": "ping", "t": "\\u00e9"}\n\ndata: {"a": 1}\n\ndata: [DONE]\n\n'
    )
    assert json.loads(framed.split(b"data: ")[1]) == {"type": "ping", "t": "é"}


def test_a_gemini_answer_streams_one_part_a_chunk_finish_and_usage_last():
    """Text in pieces, its signature on a final empty text, a call whole, usage last."""
    answer = GeminiAnswer(
        model="gemini-test",
        response_id="r1",
        parts=[
            {"text": "thinking", "thought": True},
            {"text": "Reading.", "thoughtSignature": "c2ln"},
            {"functionCall": {"name": "lookup", "args": {}}},
        ],
        finish="STOP",
        usage={"promptTokenCount": 5, "totalTokenCount": 8},
    )
    whole_answer = generate_response(answer)
    assert whole_answer["candidates"] == [
        {"index": 0, "content": {"role": "model", "parts": answer.parts}, "finishReason": "STOP"}
    ]
    assert whole_answer["usageMetadata"] == answer.usage
    chunks = stream_chunks(answer, pieces=halves)
    parts = [p for c in chunks for p in c["candidates"][0]["content"]["parts"]]
    assert parts == [
        {"text": "thinking", "thought": True},
        {"text": "Read"},
        {"text": "ing."},
        {"text": "", "thoughtSignature": "c2ln"},
        {"functionCall": {"name": "lookup", "args": {}}},
    ]
    assert [c["candidates"][0].get("finishReason") for c in chunks] == [None] * 4 + ["STOP"]
    assert ["usageMetadata" in c for c in chunks] == [False] * 4 + [True]
    assert all(c["responseId"] == "r1" and c["modelVersion"] == "gemini-test" for c in chunks)
