"""What a scripted model answers, and the shape of a scripted behaviour."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspect_ai.model import ChatMessage
from inspect_ai.tool import ToolInfo
from pydantic import BaseModel, Field


class Reply(BaseModel):
    """What a scripted model answers: text, tool calls, or both."""

    content: str = ""
    tool_calls: list[tuple[str, dict[str, Any]]] = Field(default_factory=list)


Behaviour = Callable[[list[ChatMessage], list[ToolInfo]], Reply]
"""A scripted model: the conversation and the tools in, a reply out."""

SeededBehaviour = Callable[[list[ChatMessage], list[ToolInfo], int | None], Reply]
"""A scripted model whose reply also depends on the seed it is asked with (GenerateConfig)."""
