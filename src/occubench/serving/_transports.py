"""Where an MCP server listens: the process's stdio, or streamable HTTP on 127.0.0.1.

stdio: while a session is served, the process's own fds 0 and 1 point at the null
device and at stderr, and the protocol runs on private duplicates of them, so nothing
but protocol messages reaches the client (stray prints and logs land on stderr). The
pipes are read and written without threads, so a session can end while the client
keeps the pipe open. Each line is bounded in size and depth before it is parsed (a
longer or deeper one gets a JSON-RPC error, and the session goes on).

HTTP: uvicorn on a socket bound here (port 0: any free port), signals left to the
process (Inspect), logging left as configured; the app it serves is built by
``http_app`` (token, Host and Origin checks, bounded messages).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any, cast

import anyio
import uvicorn
from mcp.server.stdio import stdio_server
from starlette.types import ASGIApp

from occubench.defaults import DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_MESSAGE_DEPTH
from occubench.serving._access import too_deep, too_large, wire_text

_STARTUP_SECONDS = 10.0


@contextlib.contextmanager
def claimed_stdio() -> Iterator[tuple[int, int]]:
    """Private duplicates of fds 0 and 1 for the protocol, while the block runs.

    Meanwhile fd 0 is the null device and fd 1 is stderr; both are restored on exit.
    """
    wire_in, wire_out = os.dup(0), os.dup(1)
    saved_in, saved_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
        yield wire_in, wire_out
    finally:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()  # what was printed meanwhile goes to stderr, not the wire
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        for fd in (null, saved_in, saved_out, wire_in, wire_out):
            with contextlib.suppress(OSError):
                os.close(fd)


class _PipeLines:
    """Lines of a pipe, read on the event loop (what the SDK's stdio transport iterates).

    A line longer than ``max_bytes`` is dropped as it arrives (never held whole) and one
    nested deeper than ``max_depth`` is not passed on: each is answered with a JSON-RPC
    error on ``writer``, and the next line is read.
    """

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        max_bytes: int,
        max_depth: int,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._max_bytes = max_bytes
        self._max_depth = max_depth

    def __aiter__(self) -> _PipeLines:
        return self

    async def __anext__(self) -> str:
        while True:
            line, whole = await self._line()
            error = too_deep(line, self._max_depth) if whole else too_large(line, self._max_bytes)
            if error is None:
                return line.decode("utf-8", errors="replace")
            self._writer.write(wire_text(error).encode("utf-8") + b"\n")
            await self._writer.drain()

    async def _line(self) -> tuple[bytes, bool]:
        """The next line and True; or a longer line's first bytes and False (the rest dropped).

        The reader's limit is ``max_bytes``: a longer line stops ``readuntil`` unread.

        Raises:
            StopAsyncIteration: the pipe is closed and nothing is left.
        """
        try:
            return await self._reader.readuntil(b"\n"), True
        except asyncio.IncompleteReadError as end:
            if not end.partial:
                raise StopAsyncIteration from None
            return end.partial, True
        except asyncio.LimitOverrunError as long:
            head = await self._reader.readexactly(long.consumed)
        while True:
            try:
                await self._reader.readuntil(b"\n")
                return head, False
            except asyncio.IncompleteReadError:
                return head, False
            except asyncio.LimitOverrunError as more:
                await self._reader.readexactly(more.consumed)


class _PipeWriter:
    """Text written to a pipe on the event loop (what the SDK's stdio transport writes to)."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()


@contextlib.asynccontextmanager
async def stdio_streams(
    wire_in: int,
    wire_out: int,
    *,
    max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    max_depth: int = DEFAULT_MAX_MESSAGE_DEPTH,
) -> AsyncIterator[tuple[Any, Any]]:
    """The MCP read and write streams over two pipe fds (see ``claimed_stdio``).

    Each line is bounded: at most ``max_bytes`` bytes, nested at most ``max_depth``
    levels (``_PipeLines``).
    """
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=max_bytes)
    read_transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(os.dup(wire_in), "rb", buffering=0)
    )
    write_transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(os.dup(wire_out), "wb", buffering=0)
    )
    writer = asyncio.StreamWriter(write_transport, protocol, None, loop)
    try:
        async with stdio_server(
            stdin=cast(Any, _PipeLines(reader, writer, max_bytes, max_depth)),
            stdout=cast(Any, _PipeWriter(writer)),
        ) as streams:
            yield streams
    finally:
        read_transport.close()
        write_transport.close()


class _Server(uvicorn.Server):
    """uvicorn that leaves the process's signals alone (Inspect and occubench own them)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@contextlib.asynccontextmanager
async def http_endpoint(app: ASGIApp, host: str, port: int) -> AsyncIterator[str]:
    """Serve ``app`` on ``host:port`` (0: a free port) while the block runs; its base URL.

    Raises:
        OSError: the address cannot be bound.
        RuntimeError: the server did not start.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
        sock.setblocking(False)
        server = _Server(
            uvicorn.Config(
                app,
                log_config=None,
                log_level="warning",
                access_log=False,
                lifespan="on",
                timeout_graceful_shutdown=1,
            )
        )
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(server.serve, [sock])
            with anyio.move_on_after(_STARTUP_SECONDS):
                while not server.started and not server.should_exit:
                    await anyio.sleep(0.01)
            if not server.started:
                server.should_exit = True
                raise RuntimeError(f"the MCP HTTP server on {host}:{port} did not start")
            bound = sock.getsockname()[1]
            shown = f"[{host}]" if family == socket.AF_INET6 else host
            try:
                yield f"http://{shown}:{bound}"
            finally:
                server.should_exit = True
    finally:
        sock.close()
