"""The lean path's HTTP client: one aiohttp session per provider object per event loop.

The chat requests of the lean path are posted on an ``aiohttp.ClientSession`` rather
than the provider's httpx client: the same request costs a quarter of the CPU (httpcore
checks every idle connection's socket on every request). A session belongs to the
event loop that opened it: Inspect runs each evaluation in a loop of its own, and a
provider object outlives it (a memoized model, a second ``asyncio.run``), so each loop
gets its own session, opened on first use and closed when the provider is closed
(``aclose``) or when the loop shuts its async generators down at its end (what
``asyncio.run`` and ``anyio.run`` do): an async generator parked with the session
closes it then, so no session is left unclosed. A loop closed without that shutdown
leaves its session to the garbage collector.

Settings, as Inspect's httpx client has them:

- no limit of connections (the model's adaptive limit, ``occubench.calls``, bounds the
  requests in flight), kept alive while idle for Inspect's keep-alive expiry
  (``INSPECT_HTTP_KEEPALIVE_EXPIRY``, 5 s), TCP keep-alive probes after 60 s idle;
- TLS verified against the trust store httpx uses (``httpx2.create_ssl_context``: the
  system's CA bundle, or ``SSL_CERT_FILE``/``SSL_CERT_DIR`` when set);
- a proxy from the environment (``<scheme>_proxy``, ``all_proxy``, ``no_proxy``, by the
  standard library's rules), looked up once when the session opens, as httpx does when
  its client is made. aiohttp's own ``trust_env`` is off: it looks the proxy up again
  on every request in a worker thread, and reads ``~/.netrc`` for credentials that
  would clash with the request's ``Authorization``;
- redirects followed (at most 10; the credential is dropped when one leaves the
  origin), cookies kept (aiohttp refuses those set by a bare IP address), answers in
  gzip or deflate decoded.
"""

from __future__ import annotations

import asyncio
import functools
import os
import socket
import ssl
import urllib.parse
import urllib.request
from collections.abc import AsyncGenerator

import aiohttp
import httpx2

KEEPALIVE_PROBES = (
    ("TCP_KEEPIDLE", 60),
    ("TCP_KEEPINTVL", 60),
    ("TCP_KEEPCNT", 5),
)
"""TCP keep-alive settings of every connection (seconds idle, seconds between probes, probes),
as Inspect's httpx transport sets them: a long generation keeps its connection through NATs."""
SKIPPED_AUTO_HEADERS = ("Accept", "Accept-Encoding", "User-Agent", "Content-Type")
"""Headers aiohttp would add of its own: the lean path sends the SDK's, or none."""
DECODED = frozenset({"gzip", "deflate"})
"""Content encodings aiohttp decodes without optional packages."""


def _decoded() -> frozenset[str]:
    """The content encodings this aiohttp decodes (brotli and zstd when installed)."""
    from aiohttp import compression_utils

    found = set(DECODED)
    if compression_utils.HAS_BROTLI:
        found.add("br")
    if compression_utils.HAS_ZSTD:
        found.add("zstd")
    return frozenset(found)


def accept_encoding(advertised: str) -> str:
    """``advertised`` (httpx's ``Accept-Encoding``) less what aiohttp would not decode here."""
    decoded = _decoded()
    kept = [e.strip() for e in advertised.split(",") if e.strip().lower() in decoded]
    return ", ".join(kept)


@functools.lru_cache(maxsize=4)
def _ssl_context(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    """The TLS context httpx makes for these ``SSL_CERT_FILE``/``SSL_CERT_DIR`` values."""
    return httpx2.create_ssl_context()


def ssl_context() -> ssl.SSLContext:
    """The TLS context of new sessions: httpx's, for the environment as it is now."""
    return _ssl_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


def environment_proxy(url: str) -> str | None:
    """The proxy the environment names for ``url``, if any (``no_proxy`` honoured)."""
    parts = urllib.parse.urlsplit(url)
    if parts.hostname and urllib.request.proxy_bypass(parts.hostname):
        return None
    proxies = urllib.request.getproxies()
    return proxies.get(parts.scheme) or proxies.get("all")


def _keepalive_socket(addr_info: aiohttp.AddrInfoType) -> socket.socket:
    """A socket for one address of a new connection, with TCP keep-alive probes on."""
    family, kind, proto, _, _ = addr_info
    sock = socket.socket(family=family, type=kind, proto=proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    for name, value in KEEPALIVE_PROBES:
        option = getattr(socket, name, None)
        if isinstance(option, int):
            sock.setsockopt(socket.IPPROTO_TCP, option, value)
    return sock


def open_session(url: str, keepalive: float | None) -> aiohttp.ClientSession:
    """A session for requests to ``url`` (its proxy looked up now), as the module describes.

    Args:
        url: The URL the session posts to.
        keepalive: Seconds an idle connection is kept (None: as long as the server keeps it).
    """
    connector = aiohttp.TCPConnector(
        limit=0,
        limit_per_host=0,
        keepalive_timeout=keepalive,
        ssl=ssl_context(),
        socket_factory=_keepalive_socket,
    )
    return aiohttp.ClientSession(
        connector=connector,
        proxy=environment_proxy(url),
        skip_auto_headers=SKIPPED_AUTO_HEADERS,
        trust_env=False,
    )


async def _closed_with_its_loop(session: aiohttp.ClientSession) -> AsyncGenerator[None, None]:
    """Parked at its ``yield`` until closed: by ``aclose``, or by the loop's shutdown."""
    try:
        yield
    finally:
        await session.close()


class LoopSessions:
    """A provider's aiohttp sessions, one per event loop it posts from."""

    def __init__(self, keepalive: float | None) -> None:
        """Sessions whose idle connections are kept ``keepalive`` seconds."""
        self.keepalive = keepalive
        self._per_loop: dict[
            asyncio.AbstractEventLoop,
            tuple[aiohttp.ClientSession, AsyncGenerator[None, None]],
        ] = {}

    async def session(self, url: str) -> aiohttp.ClientSession:
        """The running loop's session (opened for ``url`` on first use).

        Raises:
            RuntimeError: not on an asyncio event loop.
        """
        loop = asyncio.get_running_loop()
        found = self._per_loop.get(loop)
        if found is None:
            for ended in [other for other in self._per_loop if other.is_closed()]:
                del self._per_loop[ended]
            session = open_session(url, self.keepalive)
            closer = _closed_with_its_loop(session)
            self._per_loop[loop] = found = (session, closer)
            await anext(closer)  # the loop now knows it: it closes it as it ends
        return found[0]

    async def aclose(self) -> None:
        """Close the running loop's session (another loop's closes as that loop ends)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        found = self._per_loop.pop(loop, None)
        if found is not None:
            await found[1].aclose()


def client_timeout(
    timeout: httpx2.Timeout | float | None, connect_floor: float | None
) -> aiohttp.ClientTimeout:
    """The SDK's timeouts in aiohttp's terms: connecting (TCP and TLS), then each read.

    Args:
        timeout: The SDK client's ``timeout`` (a number sets every phase, None none).
        connect_floor: The shortest connect timeout (Inspect raises the SDK's 5 s to its
            own, 60 s by default, ``INSPECT_HTTP_CONNECT_TIMEOUT``), if any.

    httpx's write timeout has no aiohttp counterpart: the read timeout starts once the
    body is written, and a peer that never reads the body is left to the run's attempt
    timeout (``--attempt-timeout``, 600 s by default). The pool timeout has nothing to
    time: the sessions have no limit of connections.
    """
    phases = timeout if isinstance(timeout, httpx2.Timeout) else httpx2.Timeout(timeout)
    connect = phases.connect
    if connect is not None and connect_floor is not None:
        connect = max(connect, connect_floor)
    return aiohttp.ClientTimeout(total=None, sock_connect=connect, sock_read=phases.read)
