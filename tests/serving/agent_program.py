"""A small agent program for the tests: the MCP client SDK driving a scripted policy.

    python agent_program.py MODE [POLICY] [TOKEN REPORT_FILE | ANTHROPIC_BASE_URL]

MODE: ``submit`` (answer with the submit tool), ``stdout`` (print the answer as the last
line and exit), ``bridge`` (an LLM tool loop whose model is asked through the
OpenAI-compatible endpoint occubench offers), ``anthropic`` (the same loop on Anthropic
Messages, streamed, at the base URL given by the ``{anthropic_base_url}`` placeholder),
``responses`` (the same loop on OpenAI Responses, streamed), ``anthropic-drop`` and
``responses-drop`` (those loops, sending each answer back without its reasoning, as
Claude Code does for a model it does not know), ``crash`` (exits with an error before
answering), ``intruder`` (first acts as another local process that knows the port but
not the token, and writes what it got to REPORT_FILE; then works the task with TOKEN,
given by the ``{token}`` placeholder). Programs that must act before anything slow
(write their pid) are in ``plain_program.py``. POLICY is a scripted reference agent
(default careful) deciding each call from the conversation so far, exactly as it does as
a built-in agent. The MCP endpoint is reached with the token of ``OCCUBENCH_MCP_TOKEN``.
"""

from __future__ import annotations

import json
import os
import sys

import anyio
import httpx
import httpx2
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


async def env_tools(session: ClientSession) -> list:
    """The env's MCP tools (not the submit tool)."""
    listed = await session.list_tools()
    return [t for t in listed.tools if t.name != os.environ["OCCUBENCH_SUBMIT_TOOL"]]


REASONING = ("thinking", "redacted_thinking", "reasoning")
"""The block and item types of reasoning (Anthropic's, OpenAI Responses')."""


def without_reasoning(blocks: list[dict]) -> list[dict]:
    """Blocks or items less those of reasoning, and less Responses messages of one <think> tag."""
    return [
        b
        for b in blocks
        if b.get("type") not in REASONING
        and not any(str(p.get("text", "")).startswith("<think") for p in b.get("content") or [])
    ]


async def bridged_anthropic(
    session: ClientSession, prompt: str, base_url: str, drop: bool = False
) -> None:
    """A streaming tool loop on Anthropic Messages, as Claude Code runs one."""
    from anthropic import AsyncAnthropic

    client = AsyncAnthropic(base_url=base_url)  # the key: ANTHROPIC_API_KEY / _AUTH_TOKEN
    tools = [
        {"name": t.name, "description": t.description or "", "input_schema": t.input_schema}
        for t in await env_tools(session)
    ]
    messages: list[dict] = [{"role": "user", "content": prompt}]
    while True:
        async with client.messages.stream(
            model=os.environ["OCCUBENCH_MODEL"], max_tokens=4096, messages=messages, tools=tools
        ) as stream:
            reply = await stream.get_final_message()
        content = reply.model_dump()["content"]
        sent = without_reasoning(content) if drop else content
        messages.append({"role": "assistant", "content": sent})
        uses = [block for block in reply.content if block.type == "tool_use"]
        if not uses:
            break
        results = []
        for use in uses:
            result = await session.call_tool(use.name, use.input)
            results.append(
                {"type": "tool_result", "tool_use_id": use.id, "content": text_of(result)}
            )
        messages.append({"role": "user", "content": results})
    answer = "".join(block.text for block in reply.content if block.type == "text")
    await session.call_tool(os.environ["OCCUBENCH_SUBMIT_TOOL"], {"answer": answer})


async def bridged_responses(session: ClientSession, prompt: str, drop: bool = False) -> None:
    """A streaming tool loop on OpenAI Responses, as Codex runs one (store=False)."""
    from openai import AsyncOpenAI

    client = AsyncOpenAI()  # OPENAI_BASE_URL and OPENAI_API_KEY come from occubench
    tools = [
        {
            "type": "function",
            "name": t.name,
            "description": t.description or "",
            "parameters": t.input_schema,
        }
        for t in await env_tools(session)
    ]
    items: list[dict] = [{"role": "user", "content": prompt}]
    while True:
        stream = await client.responses.create(
            model=os.environ["OCCUBENCH_MODEL"], input=items, tools=tools, store=False, stream=True
        )
        reply = [event async for event in stream][-1].response
        output = [item.model_dump(exclude_none=True) for item in reply.output]
        items += without_reasoning(output) if drop else output
        calls = [item for item in reply.output if item.type == "function_call"]
        if not calls:
            break
        for call in calls:
            result = await session.call_tool(call.name, json.loads(call.arguments))
            items.append(
                {"type": "function_call_output", "call_id": call.call_id, "output": text_of(result)}
            )
    await session.call_tool(os.environ["OCCUBENCH_SUBMIT_TOOL"], {"answer": reply.output_text})


def intrude(url: str, task_text: str) -> dict:
    """What a process without the token gets from the endpoint (statuses, any task text)."""
    accept = {"Accept": "application/json, text/event-stream"}
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "intruder", "version": "1"},
        },
    }
    submit = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": os.environ["OCCUBENCH_SUBMIT_TOOL"], "arguments": {"answer": "x"}},
    }
    attempts = {
        "initialize": ("POST", initialize, {}),
        "submit": ("POST", submit, {}),
        "wrong token": ("POST", initialize, {"Authorization": "Bearer " + "x" * 43}),
        "stream": ("GET", None, {}),
    }
    seen: dict = {"statuses": {}, "leaked": False}
    with httpx.Client(timeout=60) as client:
        for name, (method, body, headers) in attempts.items():
            reply = client.request(method, url, json=body, headers={**accept, **headers})
            seen["statuses"][name] = reply.status_code
            seen["leaked"] |= task_text[:40] in reply.text or "tools" in reply.text
    return seen


async def main(mode: str, policy: str) -> None:
    if mode == "crash":
        print("the agent program crashed on purpose", file=sys.stderr)
        sys.exit(3)
    token = os.environ["OCCUBENCH_MCP_TOKEN"]
    if mode == "intruder":
        seen = intrude(os.environ["OCCUBENCH_MCP_URL"], os.environ["OCCUBENCH_INSTRUCTION"])
        seen["placeholder is the token"] = sys.argv[3] == token
        seen["token"] = token
        with open(sys.argv[4], "w") as out:
            json.dump(seen, out)
    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30, read=300)
    )
    async with (
        http,
        streamable_http_client(os.environ["OCCUBENCH_MCP_URL"], http_client=http) as (
            read,
            write,
        ),
    ):
        async with ClientSession(read, write) as session:
            await session.initialize()
            prompt = (await session.get_prompt("task")).messages[0].content.text
            if mode == "bridge":
                await bridged(session, prompt)
            elif mode in ("anthropic", "anthropic-drop"):
                await bridged_anthropic(session, prompt, sys.argv[3], mode.endswith("-drop"))
            elif mode in ("responses", "responses-drop"):
                await bridged_responses(session, prompt, mode.endswith("-drop"))
            else:
                await scripted(session, prompt, policy, mode)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "careful")
