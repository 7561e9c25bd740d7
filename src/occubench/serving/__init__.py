"""Environments over MCP: ``occubench serve`` and agent programs (``--agent-command``).

The names load with their module when first used (``__getattr__``): the benchmark's task
and a command's options read the choices without importing the MCP server or the OpenAI SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from occubench.lazy import lazy_names

if TYPE_CHECKING:
    from occubench.serving._access import Access, http_app
    from occubench.serving._bridge import BRIDGED_MODEL, bridge_routes
    from occubench.serving._choices import DEFAULT_LINGER, Transport, Unsubmitted
    from occubench.serving._mcp import PROMPT_NAME, mcp_server
    from occubench.serving._program import ProgramInputs, agent_program, last_line, run_program
    from occubench.serving._record import (
        AgentProgramError,
        AnswerSource,
        BridgedCall,
        ProgramRun,
        ServedSession,
        SessionEndedError,
        served_calls,
    )
    from occubench.serving._serve import (
        banner,
        mcp_session,
        serve_token,
    )
    from occubench.serving._serve_plan import (
        SERVE_TASK,
        ServeOptions,
        served_task,
        served_world,
        session_log_dir,
    )
    from occubench.serving._session import (
        SUBMIT_DESCRIPTION,
        ServedEpisode,
        ToolReply,
        verdict_text,
    )
    from occubench.serving._transports import claimed_stdio, http_endpoint, stdio_streams

_MODULES = {
    "Access": "_access",
    "AgentProgramError": "_record",
    "AnswerSource": "_record",
    "BRIDGED_MODEL": "_bridge",
    "BridgedCall": "_record",
    "DEFAULT_LINGER": "_choices",
    "PROMPT_NAME": "_mcp",
    "ProgramInputs": "_program",
    "ProgramRun": "_record",
    "SUBMIT_DESCRIPTION": "_session",
    "ServedEpisode": "_session",
    "ServedSession": "_record",
    "SessionEndedError": "_record",
    "ToolReply": "_session",
    "Transport": "_choices",
    "Unsubmitted": "_choices",
    "agent_program": "_program",
    "banner": "_serve",
    "bridge_routes": "_bridge",
    "claimed_stdio": "_transports",
    "http_app": "_access",
    "http_endpoint": "_transports",
    "last_line": "_program",
    "mcp_server": "_mcp",
    "mcp_session": "_serve",
    "run_program": "_program",
    "serve_token": "_serve",
    "served_calls": "_record",
    "stdio_streams": "_transports",
    "verdict_text": "_session",
    "SERVE_TASK": "_serve_plan",
    "ServeOptions": "_serve_plan",
    "served_task": "_serve_plan",
    "served_world": "_serve_plan",
    "session_log_dir": "_serve_plan",
}
"""The module of each public name."""


__getattr__ = lazy_names(__name__, _MODULES)


__all__ = [
    "BRIDGED_MODEL",
    "DEFAULT_LINGER",
    "PROMPT_NAME",
    "SUBMIT_DESCRIPTION",
    "Access",
    "AgentProgramError",
    "AnswerSource",
    "BridgedCall",
    "ProgramInputs",
    "ProgramRun",
    "ServedEpisode",
    "ServedSession",
    "SessionEndedError",
    "ToolReply",
    "Transport",
    "Unsubmitted",
    "agent_program",
    "banner",
    "bridge_routes",
    "claimed_stdio",
    "http_app",
    "http_endpoint",
    "last_line",
    "mcp_server",
    "mcp_session",
    "run_program",
    "serve_token",
    "served_calls",
    "stdio_streams",
    "verdict_text",
    "SERVE_TASK",
    "ServeOptions",
    "served_task",
    "served_world",
    "session_log_dir",
]
