"""A small agent program for the tests: the MCP client SDK driving a scripted policy.

    python agent_program.py MODE [POLICY]

MODE: ``submit`` (answer with the submit tool), ``stdout`` (print the answer as the last
line and exit), ``bridge`` (an LLM tool loop whose model is asked through the
OpenAI-compatible endpoint occubench offers), ``crash`` (exits with an error before
answering). Programs that must act before anything slow (write their pid) are in
``plain_program.py``. POLICY is a scripted reference agent (default careful)
deciding each call from the conversation so far, exactly as it does as a built-in agent.
"""

from __future__ import annotations

import json
import os
import sys

import anyio
from inspect_ai.model import ChatMessage, ChatMessageTool, ChatMessageUser
from inspect_ai.tool import ToolCallError
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from occubench.scripted import BEHAVIOURS


def text_of(result) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def scripted(session: ClientSession, prompt: str, policy: str, mode: str) -> None:
    messages: list[ChatMessage] = [ChatMessageUser(content=prompt)]
    while True:
        reply = BEHAVIOURS[policy](messages, [])
        if not reply.tool_calls:
            break
        (tool, arguments), *_ = reply.tool_calls
        result = await session.call_tool(tool, arguments)
        text = text_of(result)
        error = ToolCallError("parsing", text) if result.is_error else None
        messages.append(ChatMessageTool(content=text, function=tool, error=error))
    if mode == "stdout":
        print("working...")
        print(reply.content)
        return
    verdict = await session.call_tool(
        os.environ["OCCUBENCH_SUBMIT_TOOL"], {"answer": reply.content}
    )
    print(text_of(verdict), file=sys.stderr)


async def bridged(session: ClientSession, prompt: str) -> None:
    from openai import AsyncOpenAI

    client = AsyncOpenAI()  # OPENAI_BASE_URL and OPENAI_API_KEY come from occubench
    listed = await session.list_tools()
    submit = os.environ["OCCUBENCH_SUBMIT_TOOL"]
    tools = [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": t.input_schema,
            },
        }
        for t in listed.tools
        if t.name != submit
    ]
    messages: list[dict] = [{"role": "user", "content": prompt}]
    while True:
        response = await client.chat.completions.create(
            model=os.environ["OCCUBENCH_MODEL"], messages=messages, tools=tools
        )
        message = response.choices[0].message
        if not message.tool_calls:
            break
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            result = await session.call_tool(
                call.function.name, json.loads(call.function.arguments)
            )
            messages.append({"role": "tool", "tool_call_id": call.id, "content": text_of(result)})
    await session.call_tool(submit, {"answer": message.content or ""})


async def main(mode: str, policy: str) -> None:
    if mode == "crash":
        print("the agent program crashed on purpose", file=sys.stderr)
        sys.exit(3)
    async with streamable_http_client(os.environ["OCCUBENCH_MCP_URL"]) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            prompt = (await session.get_prompt("task")).messages[0].content.text
            if mode == "bridge":
                await bridged(session, prompt)
            else:
                await scripted(session, prompt, policy, mode)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "careful")
