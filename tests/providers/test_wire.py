"""Which wire a model speaks, what reasoning it needs back, and how its stop reason reads."""

from __future__ import annotations

import pytest
from inspect_ai.model import (
    ChatMessageAssistant,
    ContentReasoning,
    ContentText,
    GenerateConfig,
    ModelOutput,
    get_model,
)
from inspect_ai.tool import ToolCall

from occubench.providers import (
    Wire,
    continuity_kept,
    model_wire,
    release_message,
    release_stop_reason,
)

LOOPBACK = "http://127.0.0.1:9/v1"  # never called: building a model sends nothing


@pytest.mark.parametrize(
    ("name", "wire"),
    [
        ("anthropic/claude-sonnet-4-5", Wire.ANTHROPIC),
        ("google/gemini-3-pro-preview", Wire.GOOGLE),
        ("openai/gpt-5.2", Wire.OPENAI_RESPONSES),
        ("openai-api/deepseek/deepseek-reasoner", Wire.OPENAI_CHAT),
        ("deepseek/deepseek-reasoner", Wire.OPENAI_CHAT),
        ("mockllm/model", Wire.OTHER),
    ],
)
def test_each_provider_names_its_wire(name, wire):
    model = get_model(name, api_key="test-key", base_url=LOOPBACK, memoize=False)
    assert model_wire(model, [], GenerateConfig()) is wire


def test_openai_chat_models_speak_chat():
    model = get_model(
        "openai/gpt-4o", api_key="test-key", base_url=LOOPBACK, memoize=False,
        responses_api=False,
    )  # fmt: skip
    assert model_wire(model, [], GenerateConfig()) is Wire.OPENAI_CHAT


THINKING = ContentReasoning(reasoning="plan", signature="c2ln")
REDACTED = ContentReasoning(reasoning="opaque", redacted=True)
SUMMARY = ContentReasoning(reasoning="summary only")
ECHOED = ContentReasoning(reasoning="chain", internal="reasoning_content")


@pytest.mark.parametrize(
    ("wire", "kept"),
    [
        (Wire.ANTHROPIC, [THINKING, REDACTED, SUMMARY, ECHOED]),
        (Wire.GOOGLE, [THINKING, REDACTED]),
        (Wire.OPENAI_CHAT, [THINKING, REDACTED, SUMMARY, ECHOED]),
        (Wire.OPENAI_RESPONSES, [THINKING, REDACTED, SUMMARY, ECHOED]),
        (Wire.OTHER, []),
    ],
)
def test_each_wire_keeps_what_it_needs(wire, kept):
    blocks = [THINKING, REDACTED, SUMMARY, ECHOED]
    assert [b for b in blocks if continuity_kept(wire, b)] == kept


def _turn(content: list, calls: int = 1) -> ChatMessageAssistant:
    tool_calls = [ToolCall(id=f"c{i}", function="look", arguments={}) for i in range(calls)]
    return ChatMessageAssistant(content=content, tool_calls=tool_calls or None, model="m")


def test_release_message_keeps_needed_reasoning_in_place():
    message = _turn([SUMMARY, ContentText(text="I look."), REDACTED])
    rebuilt = release_message(message, Wire.GOOGLE)
    assert rebuilt.content == [ContentText(text="I look."), REDACTED]
    assert rebuilt.tool_calls == message.tool_calls


def test_release_message_is_text_and_calls_where_nothing_is_needed():
    message = _turn([THINKING, ContentText(text="I look."), ECHOED])
    rebuilt = release_message(message, Wire.OTHER)
    assert rebuilt.content == "I look." and rebuilt.tool_calls == message.tool_calls


def test_a_tool_call_turn_never_finishes_on_a_native_wire():
    message = _turn([ContentText(text="calling")])
    output = ModelOutput.from_message(message, stop_reason="stop")  # Gemini's STOP
    for wire in (Wire.GOOGLE, Wire.ANTHROPIC, Wire.OPENAI_RESPONSES, Wire.OTHER):
        assert release_stop_reason(wire, output) == "tool_calls"
    # on the release's own wire the endpoint's finish reason is the release's
    assert release_stop_reason(Wire.OPENAI_CHAT, output) == "stop"
    answer = ModelOutput.from_message(_turn([ContentText(text="done")], calls=0))
    assert release_stop_reason(Wire.GOOGLE, answer) == "stop"
