"""A tool round trip through Inspect's own provider: what the wire-server tests share."""

from __future__ import annotations

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    Model,
    ModelOutput,
)
from inspect_ai.tool import ToolInfo, ToolParam, ToolParams

TOOL = ToolInfo(
    name="lookup",
    description="Look a thing up.",
    parameters=ToolParams(
        properties={"query": ToolParam(type="string", description="What to look up.")},
        required=["query"],
    ),
)
"""The one tool the round trips offer."""


def answered(first: ChatMessageAssistant, content: str = '{"found": 1}') -> list[ChatMessage]:
    """Tool messages answering each call of ``first``."""
    return [
        ChatMessageTool(content=content, tool_call_id=c.id, function=c.function)
        for c in first.tool_calls or []
    ]


async def two_turns(
    model: Model, rebuild: bool = False, system: str | None = None
) -> tuple[ModelOutput, ModelOutput]:
    """A tool call, its result, the answer; ``rebuild``: the call kept as text and calls only."""
    history: list[ChatMessage] = [ChatMessageUser(content="Look up A1.")]
    if system is not None:
        history.insert(0, ChatMessageSystem(content=system))
    first = await model.generate(history, tools=[TOOL])
    message = first.message
    if rebuild:
        message = ChatMessageAssistant(content=message.text, tool_calls=message.tool_calls)
    second = await model.generate([*history, message, *answered(message)], tools=[TOOL])
    return first, second
