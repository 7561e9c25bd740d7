"""Environments over MCP: ``occubench serve`` and agent programs (``--agent-command``)."""

from occubench.serving._bridge import BRIDGED_MODEL, bridge_routes
from occubench.serving._guard import Access, http_app
from occubench.serving._mcp import PROMPT_NAME, mcp_server
from occubench.serving._program import ProgramInputs, agent_program, last_line, run_program
from occubench.serving._record import (
    AgentProgramError,
    AnswerSource,
    ProgramRun,
    ServedSession,
    SessionEndedError,
)
from occubench.serving._serve import (
    DEFAULT_LINGER,
    Transport,
    Unsubmitted,
    banner,
    mcp_session,
    serve_token,
)
from occubench.serving._session import SUBMIT_DESCRIPTION, ServedEpisode, ToolReply, verdict_text
from occubench.serving._transports import claimed_stdio, http_endpoint, stdio_streams

__all__ = [
    "BRIDGED_MODEL",
    "DEFAULT_LINGER",
    "PROMPT_NAME",
    "SUBMIT_DESCRIPTION",
    "Access",
    "AgentProgramError",
    "AnswerSource",
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
    "stdio_streams",
    "verdict_text",
]
