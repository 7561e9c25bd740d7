"""Which API a model speaks, and what that API needs for a conversation to go on.

The public release's harness speaks OpenAI chat completions to an OpenAI-compatible
gateway. On that wire a turn with tool calls reports ``finish_reason: "tool_calls"``, and
the assistant message goes back as its ``content`` and ``tool_calls`` (any ``<think>``
text the endpoint put in ``content`` included), while reasoning continuity is the
gateway's business. A native wire reports and needs other things:

- Anthropic Messages: with thinking on, a tool-use turn must be sent back starting with
  its signed ``thinking`` (or ``redacted_thinking``) block, or the next turn is refused
  (docs: Extended thinking, "Preserving thinking blocks"); a tool-use turn stops with
  ``tool_use``.
- Google generateContent: Gemini 3 refuses a function-call turn sent back without its
  ``thoughtSignature`` (docs: Thought signatures); a function-call turn finishes with
  ``STOP``, which Inspect reads as "stop".
- OpenAI-compatible chat with reasoning: DeepSeek's thinking mode with tool calls (and
  Kimi's, MiniMax's) wants the turn's ``reasoning_content`` back (docs: DeepSeek,
  Thinking Mode, tool calls); endpoints that do not need it ignore it. Inspect sends a
  reasoning block back on the field it came from, and ``<think>`` text inline.
- OpenAI Responses: a turn sent back without its reasoning items is accepted only when
  its function calls carry no item ids; Inspect replays each call as the item it
  received (``fc_...`` id and all, kept per sample by call id), and the API refuses such
  an item without the reasoning item it followed ("... was provided without its required
  'reasoning' item").

``continuity_kept`` says which reasoning blocks a wire needs kept when the protocol
carries no reasoning (the ``paper`` protocol), ``release_message`` rebuilds a turn so;
``release_stop_reason`` reads a turn's stop reason as the release's wire reports it.
"""

from __future__ import annotations

from enum import Enum

from inspect_ai.model import (
    ChatMessageAssistant,
    Content,
    ContentReasoning,
    ContentText,
    GenerateConfig,
    Model,
    ModelOutput,
    StopReason,
)
from inspect_ai.tool import ToolInfo


class Wire(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """The API a model's calls go over."""

    OPENAI_CHAT = "openai_chat"
    """OpenAI chat completions, or an endpoint compatible with it (the release's wire)."""
    OPENAI_RESPONSES = "openai_responses"
    """OpenAI's Responses API."""
    ANTHROPIC = "anthropic"
    """Anthropic's Messages API."""
    GOOGLE = "google"
    """Google's generateContent (Gemini API or Vertex AI)."""
    OTHER = "other"
    """Any other provider (Bedrock, Mistral, scripted and local models ...)."""


_CLASSES = {
    "OpenAICompatibleAPI": Wire.OPENAI_CHAT,
    "AnthropicAPI": Wire.ANTHROPIC,
    "GoogleGenAIAPI": Wire.GOOGLE,
}
"""Inspect's provider classes (or a base of theirs), by name, and their wire."""


def model_wire(model: Model, tools: list[ToolInfo], config: GenerateConfig) -> Wire:
    """The wire this model's calls with these tools and settings go over.

    Read from the provider's class and its bases (by name, so that no provider's SDK is
    imported); Inspect's OpenAI provider says itself whether a call uses the Responses API.
    """
    api = model.api
    names = [cls.__name__ for cls in type(api).__mro__]
    if "OpenAIAPI" in names:
        uses_responses = getattr(api, "uses_responses_api", None)
        if callable(uses_responses) and uses_responses(tools, model.config.merge(config)):
            return Wire.OPENAI_RESPONSES
        return Wire.OPENAI_CHAT
    for name in names:
        if name in _CLASSES:
            return _CLASSES[name]
    return Wire.OTHER


def continuity_kept(wire: Wire, reasoning: ContentReasoning) -> bool:
    """Whether ``wire`` needs this reasoning block sent back for the conversation to go on.

    Anthropic: every thinking block (signed or redacted). Google: a block that carries a
    thought signature (Inspect writes one as a redacted block, tied to its call).
    OpenAI-compatible chat: every block (the endpoint's own reasoning
    field, which endpoints that need no echo ignore, or ``<think>`` text the release kept
    in ``content``). Responses: every reasoning item (the function calls Inspect replays
    need theirs). Other wires: none.
    """
    if wire in (Wire.ANTHROPIC, Wire.OPENAI_CHAT, Wire.OPENAI_RESPONSES):
        return True
    if wire is Wire.GOOGLE:  # Inspect keeps a thought signature as a redacted block
        return reasoning.redacted or reasoning.signature is not None
    return False


def release_stop_reason(wire: Wire, output: ModelOutput) -> StopReason:
    """The turn's stop reason as the release's wire reports it.

    On OpenAI-compatible chat it is the endpoint's own; on every other wire a turn with
    tool calls reports ``tool_calls`` (Gemini's function-call turns finish with ``STOP``).
    """
    if wire is not Wire.OPENAI_CHAT and output.message.tool_calls:
        return "tool_calls"
    return output.stop_reason


def release_message(message: ChatMessageAssistant, wire: Wire) -> ChatMessageAssistant:
    """The message rebuilt as the release sends it back: its text and tool calls.

    The reasoning blocks ``wire`` needs to accept the next turn stay, in their places
    among the text; with none, the content is the message's text alone.
    """
    if isinstance(message.content, list) and any(
        isinstance(part, ContentReasoning) and continuity_kept(wire, part)
        for part in message.content
    ):
        kept: list[Content] = [
            part
            for part in message.content
            if isinstance(part, ContentText)
            or (isinstance(part, ContentReasoning) and continuity_kept(wire, part))
        ]
        return ChatMessageAssistant(
            content=kept, tool_calls=message.tool_calls, model=message.model
        )
    return ChatMessageAssistant(
        content=message.text, tool_calls=message.tool_calls, model=message.model
    )
