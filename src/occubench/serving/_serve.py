"""``occubench serve``: one task's environment as an MCP server, for any MCP client.

The session is a sample of an ordinary occubench eval: the environment is opened as
for any agent (faults, state mode, simulator role), served over stdio or streamable
HTTP, and ended by the submit tool (the verdict is graded then and returned to the
client), by the client closing stdio, by the session limit, or by SIGINT/SIGTERM. A
session that ends without an answer is graded on what it did, or recorded as an error
(``Unsubmitted``). The sample is then scored and logged like any other, so
``occubench report`` and ``inspect view`` read it.
"""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Iterator
from enum import Enum

import anyio
from inspect_ai.model import ModelOutput
from inspect_ai.solver import Generate, Solver, TaskState, solver
from mcp.server.lowlevel import Server

from occubench.analysis import strip_controls
from occubench.config import RunConfig
from occubench.defaults import DEFAULT_SERVE_PORT
from occubench.env import EnvEpisode, EpisodeStart
from occubench.serving._mcp import mcp_server
from occubench.serving._record import AnswerSource, ServedSession, SessionEndedError
from occubench.serving._session import ServedEpisode
from occubench.serving._transports import claimed_stdio, http_endpoint, stdio_streams

DEFAULT_LINGER = 2.0
"""Seconds a session keeps serving after the submission, so the verdict reaches the client."""


class Transport(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """How ``occubench serve`` talks to its client."""

    STDIO = "stdio"
    """The process's stdin and stdout (the client starts ``occubench serve``)."""
    HTTP = "http"
    """Streamable HTTP on a local address (the client connects to the URL)."""


class Unsubmitted(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """What a session that ends without a submission counts as."""

    GRADE = "grade"
    """Graded on what the agent did, with no final answer."""
    ERROR = "error"
    """Recorded as an error (not scored)."""


def banner(start: EpisodeStart, endpoint: str, submit_tool: str) -> str:
    """What ``occubench serve`` prints (to stderr) once it listens.

    The task text comes from the dataset: escape sequences and control characters are
    removed before it reaches a terminal.
    """
    tools = ", ".join(t.name for t in start.tools)
    return strip_controls(
        f"occubench serve: task {start.task_id} at {endpoint}\n"
        f"tools: {tools}; submit the final answer with {submit_tool}(answer=...)\n"
        f"--- task (also the MCP prompt 'task') ---\n{start.prompt()}\n---\n"
    )


@contextlib.contextmanager
def _ending_on_signals(ended: anyio.Event) -> Iterator[None]:
    """SIGINT and SIGTERM end the session (gracefully) while it is served."""
    import asyncio

    loop = asyncio.get_running_loop()
    installed = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, ended.set)
            installed.append(sig)
        except (RuntimeError, ValueError, NotImplementedError):  # not the main thread
            pass
    try:
        yield
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)


async def _serve_until_end(server: Server, served: ServedEpisode, linger: float) -> None:
    """Serve over the process's stdio until the client closes it or the session ends."""
    with claimed_stdio() as (wire_in, wire_out):
        async with stdio_streams(wire_in, wire_out) as (read, write):
            async with anyio.create_task_group() as tasks:

                async def run() -> None:
                    await server.run(read, write, server.create_initialization_options())
                    served.ended.set()

                tasks.start_soon(run)
                await served.ended.wait()
                await anyio.sleep(linger)
                tasks.cancel_scope.cancel()


@solver
def mcp_session(
    config: RunConfig,
    transport: Transport = Transport.STDIO,
    host: str = "127.0.0.1",
    port: int = DEFAULT_SERVE_PORT,
    unsubmitted: Unsubmitted = Unsubmitted.GRADE,
    session_limit: float | None = None,
    linger: float = DEFAULT_LINGER,
) -> Solver:
    """Serve each sample's environment to one MCP client (``occubench serve``: one sample).

    Args:
        config: The run's configuration.
        transport: stdio or streamable HTTP.
        host: Address for HTTP (127.0.0.1 by default: this machine only).
        port: Port for HTTP (0: any free port; the banner names it).
        unsubmitted: What a session ending without a submission counts as.
        session_limit: Seconds before the session ends by itself (None: no limit).
        linger: Seconds served after the submission, for the verdict to reach the client.
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        episode, start = await EnvEpisode.in_sample(state, config)
        served = ServedEpisode(episode, start, config.submit_tool)
        server = mcp_server(served)
        record = state.store_as(ServedSession)
        record.transport = transport.value
        with _ending_on_signals(served.ended), anyio.move_on_after(session_limit):
            if transport is Transport.STDIO:
                record.endpoint = "stdio"
                sys.stderr.write(banner(start, "stdio", config.submit_tool))
                await _serve_until_end(server, served, linger)
            else:
                app = server.streamable_http_app(host=host)
                async with http_endpoint(app, host, port) as base:
                    record.endpoint = f"{base}/mcp"
                    sys.stderr.write(banner(start, record.endpoint, config.submit_tool))
                    sys.stderr.flush()
                    await served.ended.wait()
                    await anyio.sleep(linger)
        if served.failure is not None:
            raise served.failure
        if served.submitted:
            record.answer_source = AnswerSource.SUBMITTED
        elif unsubmitted is Unsubmitted.ERROR:
            raise SessionEndedError("the MCP session ended without a submitted answer")
        else:
            record.answer_source = AnswerSource.NONE
            episode.close()
        state.output = ModelOutput.from_content(
            model=str(state.model), content=episode.answer or ""
        )
        return state

    return solve
