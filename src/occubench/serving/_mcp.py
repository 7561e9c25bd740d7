"""A served episode as an MCP server (the official SDK's low-level server).

Tools are the env's tools (same names, descriptions and argument schemas as the
built-in agent is shown) plus the submit tool; the task is offered as the prompt
``task`` and as the server's instructions. Every reply to a tool call is a tool result,
an error one for refused calls, so bad client input never crashes the server.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp import MCPError
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

from occubench.serving._session import ServedEpisode

PROMPT_NAME = "task"
"""Name of the MCP prompt that carries the task (system prompt and instruction)."""


def mcp_server(served: ServedEpisode) -> Server[Any]:
    """An MCP server over one served episode."""
    start = served.start
    prompt_text = start.prompt()

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(name=t.name, description=t.description, input_schema=t.parameters)
                for t in served.tools()
            ]
        )

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        reply = await served.call(params.name, params.arguments)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=reply.text)], is_error=reply.is_error
        )

    async def list_prompts(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name=PROMPT_NAME,
                    description=f"Task {start.task_id}: the instruction and how to work.",
                )
            ]
        )

    async def get_prompt(
        ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        if params.name != PROMPT_NAME:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"unknown prompt {params.name!r}; the one prompt is {PROMPT_NAME!r}",
            )
        return types.GetPromptResult(
            description=f"Task {start.task_id}",
            messages=[
                types.PromptMessage(
                    role="user", content=types.TextContent(type="text", text=prompt_text)
                )
            ],
        )

    return Server(
        "occubench",
        title=f"occubench task {start.task_id}",
        instructions=prompt_text,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )
