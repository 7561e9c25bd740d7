"""An agent program on the OpenAI Agents SDK (``pip install openai-agents``).

    occubench run ... --agent-model MODEL \
      --agent-command 'python agents_sdk_agent.py responses|chat'

The agent's model is the SDK's Responses model (``responses``) or its chat-completions
model (``chat``), on the client occubench configures (``OPENAI_BASE_URL``,
``OPENAI_API_KEY``); the run is streamed. Its tools are the sample's MCP tools, reached
with the SDK's own MCP client (streamable HTTP, the token as a Bearer header), the submit
tool left out: the agent's final output is submitted once the run ends. Tracing is off:
the SDK would otherwise send traces to OpenAI.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    Runner,
    set_tracing_disabled,
)
from agents.mcp import MCPServerStreamableHttp, create_static_tool_filter
from openai import AsyncOpenAI

MODELS = {"responses": OpenAIResponsesModel, "chat": OpenAIChatCompletionsModel}
TURNS = 50
"""The most model turns of the run (the SDK raises past them: the program exits with an error)."""


async def main(wire: str) -> None:
    """Run the agent over the sample's MCP tools, then submit its final output."""
    set_tracing_disabled(True)
    task = Path(os.environ["OCCUBENCH_INSTRUCTION_FILE"]).read_text(encoding="utf-8")
    submit = os.environ["OCCUBENCH_SUBMIT_TOOL"]
    model = MODELS[wire](model=os.environ["OCCUBENCH_MODEL"], openai_client=AsyncOpenAI())
    environment = MCPServerStreamableHttp(
        params={
            "url": os.environ["OCCUBENCH_MCP_URL"],
            "headers": {"Authorization": f"Bearer {os.environ['OCCUBENCH_MCP_TOKEN']}"},
            "timeout": 300,
            "sse_read_timeout": 300,
        },
        name="occubench",
        client_session_timeout_seconds=300,
        tool_filter=create_static_tool_filter(blocked_tool_names=[submit]),
    )
    async with environment:
        agent = Agent(name="worker", model=model, mcp_servers=[environment])
        run = Runner.run_streamed(agent, task, max_turns=TURNS)
        async for _ in run.stream_events():
            pass
        verdict = await environment.call_tool(submit, {"answer": str(run.final_output)})
        print(verdict.content, file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in MODELS:
        sys.exit(f"usage: python agents_sdk_agent.py {'|'.join(MODELS)}")
    anyio.run(main, sys.argv[1])
