"""An agent program on Pydantic AI (``pip install 'pydantic-ai-slim[anthropic,mcp]'``).

    occubench run ... --agent-model MODEL --agent-command 'python pydantic_ai_agent.py'

The agent's model is Pydantic AI's Anthropic model on Anthropic Messages, with the base
URL and key occubench sets (``ANTHROPIC_BASE_URL``, ``ANTHROPIC_API_KEY``); its requests
are streamed (an event stream handler is given). Its tools are the sample's MCP tools
(``MCPToolset``: streamable HTTP, the token as a Bearer header), the submit tool left
out: the agent's output is submitted once the run ends.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterable
from pathlib import Path
from typing import Any

import anyio
from pydantic_ai import Agent, RunContext
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.providers.anthropic import AnthropicProvider


async def streamed(context: RunContext[Any], events: AsyncIterable[Any]) -> None:
    """Read each model response as it streams (given, the requests are streamed)."""
    async for _ in events:
        pass


async def main() -> None:
    """Run the agent over the sample's MCP tools, then submit its output."""
    task = Path(os.environ["OCCUBENCH_INSTRUCTION_FILE"]).read_text(encoding="utf-8")
    submit = os.environ["OCCUBENCH_SUBMIT_TOOL"]
    provider = AnthropicProvider(
        base_url=os.environ["ANTHROPIC_BASE_URL"], api_key=os.environ["ANTHROPIC_API_KEY"]
    )
    environment = MCPToolset(
        os.environ["OCCUBENCH_MCP_URL"],
        headers={"Authorization": f"Bearer {os.environ['OCCUBENCH_MCP_TOKEN']}"},
        read_timeout=300,
    )
    tools = environment.filtered(lambda context, tool: tool.name != submit)
    agent = Agent(
        AnthropicModel(os.environ["OCCUBENCH_MODEL"], provider=provider), toolsets=[tools]
    )
    async with environment:
        result = await agent.run(task, event_stream_handler=streamed)
        verdict = await environment.direct_call_tool(submit, {"answer": str(result.output)})
        print(verdict, file=sys.stderr)


if __name__ == "__main__":
    anyio.run(main)
