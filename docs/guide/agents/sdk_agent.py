"""An agent program on the providers' own SDKs: one tool loop, streamed, on the wire named.

    occubench run ... --agent-model MODEL \
      --agent-command 'python sdk_agent.py messages|chat|responses'

``messages``: the ``anthropic`` package on Anthropic Messages (``ANTHROPIC_BASE_URL``,
``ANTHROPIC_API_KEY``); ``chat`` and ``responses``: the ``openai`` package on chat
completions or Responses (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``). occubench sets these
variables for the program, so each client is made with no arguments. Its tools are the
sample's MCP tools (``OCCUBENCH_MCP_URL``, the token ``OCCUBENCH_MCP_TOKEN`` sent as
``Authorization: Bearer``); when the model answers without a tool call, its text is
submitted with the submit tool (``OCCUBENCH_SUBMIT_TOOL``).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
from anthropic import AsyncAnthropic
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from openai import AsyncOpenAI

MODEL = os.environ["OCCUBENCH_MODEL"]
SUBMIT = os.environ["OCCUBENCH_SUBMIT_TOOL"]
TURNS = 50
"""The most model turns before the program gives up (exits with an error)."""


async def call(session: ClientSession, name: str, arguments: dict[str, Any]) -> str:
    """Call an MCP tool; its reply as text (an error reply too: the model reads it)."""
    result = await session.call_tool(name, arguments)
    return "".join(getattr(block, "text", "") for block in result.content)


async def on_messages(session: ClientSession, tools: list[Any], task: str) -> str:
    """Anthropic Messages, streamed: the answer's text once no tool is used."""
    client = AsyncAnthropic()
    declared: Any = [
        {"name": t.name, "description": t.description or "", "input_schema": t.input_schema}
        for t in tools
    ]
    messages: list[Any] = [{"role": "user", "content": task}]
    for _ in range(TURNS):
        asked = {"model": MODEL, "max_tokens": 4096, "messages": messages, "tools": declared}
        async with client.messages.stream(**asked) as stream:
            reply = await stream.get_final_message()
        messages.append({"role": "assistant", "content": reply.model_dump()["content"]})
        uses = [block for block in reply.content if block.type == "tool_use"]
        if not uses:
            return "".join(block.text for block in reply.content if block.type == "text")
        results = [
            {
                "type": "tool_result",
                "tool_use_id": use.id,
                "content": await call(session, use.name, use.input),
            }
            for use in uses
        ]
        messages.append({"role": "user", "content": results})
    sys.exit(f"no answer after {TURNS} turns")


async def on_chat(session: ClientSession, tools: list[Any], task: str) -> str:
    """OpenAI chat completions, streamed with the usage: the answer once no tool is called."""
    client = AsyncOpenAI()
    declared: Any = [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description or "",
                "parameters": t.input_schema,
            },
        }
        for t in tools
    ]
    messages: list[Any] = [{"role": "user", "content": task}]
    for _ in range(TURNS):
        async with client.chat.completions.stream(
            model=MODEL, messages=messages, tools=declared, stream_options={"include_usage": True}
        ) as stream:
            reply = await stream.get_final_completion()
        message = reply.choices[0].message
        messages.append(message.model_dump(exclude_none=True, exclude={"parsed"}))
        if not message.tool_calls:
            return message.content or ""
        for tool_call in message.tool_calls:
            arguments = json.loads(tool_call.function.arguments or "{}")
            output = await call(session, tool_call.function.name, arguments)
            messages.append({"role": "tool", "tool_call_id": tool_call.id, "content": output})
    sys.exit(f"no answer after {TURNS} turns")


async def on_responses(session: ClientSession, tools: list[Any], task: str) -> str:
    """OpenAI Responses, streamed, the items sent back each turn (``store=False``)."""
    client = AsyncOpenAI()
    declared: Any = [
        {
            "type": "function",
            "name": t.name,
            "description": t.description or "",
            "parameters": t.input_schema,
        }
        for t in tools
    ]
    items: list[Any] = [{"role": "user", "content": task}]
    for _ in range(TURNS):
        async with client.responses.stream(
            model=MODEL, input=items, tools=declared, store=False
        ) as stream:
            reply = await stream.get_final_response()
        items += [item.model_dump(exclude_none=True) for item in reply.output]
        calls = [item for item in reply.output if item.type == "function_call"]
        if not calls:
            return reply.output_text
        for function_call in calls:
            output = await call(
                session, function_call.name, json.loads(function_call.arguments or "{}")
            )
            items.append(
                {"type": "function_call_output", "call_id": function_call.call_id, "output": output}
            )
    sys.exit(f"no answer after {TURNS} turns")


LOOPS = {"messages": on_messages, "chat": on_chat, "responses": on_responses}


async def main(wire: str) -> None:
    """Connect to the sample's MCP endpoint, run the tool loop, submit its answer."""
    task = Path(os.environ["OCCUBENCH_INSTRUCTION_FILE"]).read_text(encoding="utf-8")
    token = os.environ["OCCUBENCH_MCP_TOKEN"]
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=300)
    async with (
        http,
        streamable_http_client(os.environ["OCCUBENCH_MCP_URL"], http_client=http) as (
            read,
            write,
        ),
    ):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = [t for t in (await session.list_tools()).tools if t.name != SUBMIT]
            answer = await LOOPS[wire](session, tools, task)
            print(await call(session, SUBMIT, {"answer": answer}), file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in LOOPS:
        sys.exit(f"usage: python sdk_agent.py {'|'.join(LOOPS)}")
    anyio.run(main, sys.argv[1])
