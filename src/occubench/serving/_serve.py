"""``occubench serve``: one task's environment as an MCP server, for any MCP client.

The session is a sample of an ordinary occubench eval: the environment is opened as
for any agent (faults, state mode, simulator role), served over stdio or streamable
HTTP, and ended by the submit tool (the verdict is graded then and returned to the
client), by the client closing stdio, by the session limit, or by SIGINT/SIGTERM. A
session that ends without an answer is graded on what it did, or recorded as an error
(``Unsubmitted``). The sample is then scored and logged like any other, so
``occubench report`` and ``inspect view`` read it.

Over HTTP every request must carry a token (``Authorization: Bearer <token>``): the one
``$OCCUBENCH_SERVE_TOKEN`` holds, else a new one printed at start (to stderr, never to a
log); and name one of the server's hosts (the loopback names, the bound address and
``allowed_hosts``). Messages are bounded in size and depth on both transports
(``occubench.serving._access``).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import signal
import sys
from collections.abc import Iterator, Mapping, Sequence

import anyio
from inspect_ai.model import ModelOutput
from inspect_ai.solver import Generate, Solver, TaskState, solver
from mcp.server.lowlevel import Server

from occubench.config import ResolvedRun
from occubench.defaults import DEFAULT_ALLOWED_HOSTS, DEFAULT_SERVE_PORT, DEFAULT_SERVE_TOKEN_ENV
from occubench.env import EnvEpisode, EpisodeStart
from occubench.errors import UsageError
from occubench.redaction import register_secrets
from occubench.serving._access import MCP_PATH, Access, http_app
from occubench.serving._choices import DEFAULT_LINGER, Transport, Unsubmitted
from occubench.serving._mcp import mcp_server
from occubench.serving._record import AnswerSource, ServedSession, SessionEndedError
from occubench.serving._session import ServedEpisode
from occubench.serving._transports import claimed_stdio, http_endpoint, stdio_streams
from occubench.text import strip_controls

_TOKEN = re.compile(r"[A-Za-z0-9._~+/=-]{16,512}")
"""A token a client can send in an Authorization header, long enough not to be guessed."""


def banner(start: EpisodeStart, endpoint: str, submit_tool: str, access: str = "") -> str:
    """What ``occubench serve`` prints (to stderr) once it listens.

    ``access``: how a client authenticates (a line, for HTTP). The task text comes from
    the dataset: escape sequences and control characters are removed before it reaches
    a terminal.
    """
    tools = ", ".join(t.name for t in start.tools)
    return strip_controls(
        f"occubench serve: task {start.task_id} at {endpoint}\n"
        + (f"{access}\n" if access else "")
        + f"tools: {tools}; submit the final answer with {submit_tool}(answer=...)\n"
        f"--- task (also the MCP prompt 'task') ---\n{start.prompt()}\n---\n"
    )


def serve_token(environ: Mapping[str, str] | None = None) -> str | None:
    """The token ``$OCCUBENCH_SERVE_TOKEN`` sets for ``occubench serve`` over HTTP (None: unset).

    Raises:
        UsageError: it is set but is not 16 to 512 letters, digits or ``._~+/=-``
            (the message does not repeat it).
    """
    value = (os.environ if environ is None else environ).get(DEFAULT_SERVE_TOKEN_ENV, "")
    if not value:
        return None
    if not _TOKEN.fullmatch(value):
        raise UsageError(
            f"{DEFAULT_SERVE_TOKEN_ENV} must be 16 to 512 letters, digits or ._~+/=- "
            "(what a client can send as 'Authorization: Bearer <token>')"
        )
    return value


def _http_access(host: str, allowed_hosts: Sequence[str]) -> tuple[Access, str]:
    """Who may use the HTTP endpoint, and the banner's line about it."""
    chosen = serve_token()
    token = chosen or secrets.token_urlsafe(32)
    if chosen:
        line = f"token: the one in ${DEFAULT_SERVE_TOKEN_ENV}"
    else:
        register_secrets([token])  # printed here, kept out of every log
        line = f"token: {token}"
    line += " (send 'Authorization: Bearer <token>' with every request)"
    return Access.of(token, {host, *DEFAULT_ALLOWED_HOSTS, *allowed_hosts}), line


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
    run: ResolvedRun,
    transport: Transport = Transport.STDIO,
    host: str = "127.0.0.1",
    port: int = DEFAULT_SERVE_PORT,
    unsubmitted: Unsubmitted = Unsubmitted.GRADE,
    session_limit: float | None = None,
    linger: float = DEFAULT_LINGER,
    allowed_hosts: Sequence[str] = (),
) -> Solver:
    """Serve each sample's environment to one MCP client (``occubench serve``: one sample).

    Args:
        run: The resolved run.
        transport: stdio or streamable HTTP.
        host: Address for HTTP (127.0.0.1 by default: this machine only).
        port: Port for HTTP (0: any free port; the banner names it).
        allowed_hosts: Host names HTTP clients may address besides the loopback ones
            and ``host``.
        unsubmitted: What a session ending without a submission counts as.
        session_limit: Seconds before the session ends by itself (None: no limit).
        linger: Seconds served after the submission, for the verdict to reach the client.
    """
    config = run.config

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        episode, start = await EnvEpisode.in_sample(state, run)
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
                access, line = _http_access(host, allowed_hosts)
                async with http_endpoint(http_app(server, access), host, port) as base:
                    record.endpoint = f"{base}{MCP_PATH}"
                    sys.stderr.write(banner(start, record.endpoint, config.submit_tool, line))
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
