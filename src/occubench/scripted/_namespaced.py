"""MCP tools a client names after its server, seen by the scripted models by their own names.

Claude Code and Codex declare each tool of an MCP server as ``mcp__<server>__<tool>``; a
scripted behaviour plans its calls by the environment's tool names. So, when the tools of
a request are named so, a scripted model reads the conversation and the tools with the
plain names (``plain``), and its calls go back under the names the client declared
(``declared``). Any other name passes unchanged.
"""

from __future__ import annotations

import dataclasses

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool
from inspect_ai.tool import ToolInfo

from occubench.scripted._reply import Reply

MCP_PREFIX = "mcp__"
SEPARATOR = "__"


class ServerNames:
    """The declared name of each tool named ``mcp__<server>__<tool>``, by its plain name."""

    def __init__(self, tools: list[ToolInfo]) -> None:
        self.declared: dict[str, str] = {}
        for tool in tools:
            parts = tool.name.split(SEPARATOR, 2)
            if tool.name.startswith(MCP_PREFIX) and len(parts) == 3 and parts[2]:
                self.declared.setdefault(parts[2], tool.name)
        self._plain = {name: plain for plain, name in self.declared.items()}

    def plain(
        self, messages: list[ChatMessage], tools: list[ToolInfo]
    ) -> tuple[list[ChatMessage], list[ToolInfo]]:
        """The conversation and the tools with the plain names."""
        if not self.declared:
            return messages, tools
        named = self._plain
        seen: list[ChatMessage] = []
        for message in messages:
            if isinstance(message, ChatMessageTool) and message.function in named:
                message = message.model_copy(update={"function": named[message.function]})
            elif isinstance(message, ChatMessageAssistant) and message.tool_calls:
                calls = [
                    dataclasses.replace(c, function=named.get(c.function, c.function))
                    for c in message.tool_calls
                ]
                message = message.model_copy(update={"tool_calls": calls})
            seen.append(message)
        offered = [t.model_copy(update={"name": named.get(t.name, t.name)}) for t in tools]
        return seen, offered

    def declared_calls(self, reply: Reply) -> Reply:
        """The reply with its calls under the names the client declared."""
        calls = [(self.declared.get(name, name), args) for name, args in reply.tool_calls]
        return reply.model_copy(update={"tool_calls": calls})
