"""The OpenEnv server of occubench's tasks: OpenEnv's app behind a credential, on 127.0.0.1.

``openenv_app`` is OpenEnv's own FastAPI app (``create_fastapi_app``: the WebSocket
sessions at ``/ws`` that its client speaks, and its HTTP routes ``/reset``, ``/step``,
``/state``, ``/schema``, ``/health``, ``/metadata``) with a guard in front of every
route, the WebSocket included:

- the Host header must name a loopback host (``127.0.0.1``, ``localhost``): a page
  elsewhere cannot reach the server by DNS rebinding (421, or the WebSocket refused);
- the request must carry the server's token, as ``Authorization: Bearer <token>`` or as
  HTTP Basic authorization whose password is the token (401, or the WebSocket refused).
  OpenEnv's client takes no headers, but its WebSocket library sends the user and
  password of its URL as Basic authorization: ``openenv_url`` puts them there.

``OpenEnvServer`` serves the app on 127.0.0.1 from a thread of its own (a test, a
notebook, a trainer in the same process); ``occubench openenv``
serves it alone.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hmac
import secrets
import threading
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from openenv.core import create_fastapi_app
from pydantic import SecretStr
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from occubench.defaults import DEFAULT_OPENENV_SESSIONS
from occubench.redaction import register_secrets
from occubench.serving import http_endpoint
from occubench.training._openenv_env import (
    OccuBenchAction,
    OccuBenchEnvironment,
    OccuBenchObservation,
)
from occubench.training._source import EpisodeSource
from occubench.webapp import host_allowed

LOOPBACK = "127.0.0.1"
"""The only address the server binds."""
HOSTS = frozenset({"127.0.0.1", "localhost"})
"""Host names a request may address."""
OPENENV_USER = "occubench"
"""The user name of the Basic credential (any name is accepted; the password is the token)."""


def openenv_url(base_url: str, token: str) -> str:
    """The server's URL with its credential, as OpenEnv's client takes it."""
    parts = urlsplit(base_url)
    return parts._replace(netloc=f"{OPENENV_USER}:{token}@{parts.netloc}").geturl()


def _credential(value: str) -> bytes | None:
    """The token an Authorization header carries (Bearer, or Basic's password)."""
    scheme, _, credential = value.strip().partition(" ")
    if scheme.lower() == "bearer":
        return credential.strip().encode()
    if scheme.lower() == "basic":
        try:
            decoded = base64.b64decode(credential.strip(), validate=True)
        except (binascii.Error, ValueError):
            return None
        return decoded.partition(b":")[2]
    return None


def authorized(headers: Headers, token: SecretStr) -> bool:
    """Whether every Authorization header carries the token (compared in constant time)."""
    expected = token.get_secret_value().encode()
    sent = [_credential(v) for v in headers.getlist("authorization")]
    return bool(sent) and all(s is not None and hmac.compare_digest(s, expected) for s in sent)


class _AccessChecks:
    """The module docstring's checks, in front of every route."""

    def __init__(self, app: ASGIApp, token: SecretStr) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        if not host_allowed(headers.get("host"), HOSTS):
            refusal = JSONResponse({"error": "this server does not answer to that Host"}, 421)
        elif not authorized(headers, self.token):
            refusal = JSONResponse(
                {
                    "error": "this endpoint needs its token: 'Authorization: Bearer <token>', or "
                    "Basic with the token as password (http://occubench:<token>@host:port/)"
                },
                401,
                headers={"WWW-Authenticate": 'Basic realm="occubench", Bearer'},
            )
        else:
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})  # refused before accept: 403
        else:
            await refusal(scope, receive, send)


def openenv_app(
    source: EpisodeSource, token: str, max_sessions: int = DEFAULT_OPENENV_SESSIONS
) -> ASGIApp:
    """OpenEnv's app serving ``source``'s tasks, one per episode, behind the token.

    Raises:
        DatasetError: the dataset is malformed or has none of the tasks.
    """
    task_ids = source.task_ids()
    app = create_fastapi_app(
        lambda: OccuBenchEnvironment(source, task_ids),
        OccuBenchAction,
        OccuBenchObservation,
        max_concurrent_envs=max_sessions,
    )
    return _AccessChecks(app, SecretStr(token))


class OpenEnvServer:
    """``openenv_app`` served on 127.0.0.1 from a thread: ``with OpenEnvServer(source) as s``.

    Args:
        source: The settings and models each episode is made with.
        port: Port to bind (0: a free one).
        token: The credential (default: drawn, kept out of every log).
        max_sessions: Sessions (episodes) served at once.
    """

    def __init__(
        self,
        source: EpisodeSource,
        *,
        port: int = 0,
        token: str | None = None,
        max_sessions: int = DEFAULT_OPENENV_SESSIONS,
    ) -> None:
        self.token = token or secrets.token_urlsafe(32)
        register_secrets([self.token])
        self.app = openenv_app(source, self.token, max_sessions)
        self.port = port
        self.base_url = ""
        self._started = threading.Event()
        self._failure: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, name="openenv-server", daemon=True)

    @property
    def url(self) -> str:
        """The base URL with the credential, for ``OccuBenchClient(base_url=...)``."""
        return openenv_url(self.base_url, self.token)

    def _run(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as error:  # handed to the thread that waits for the start
            self._failure = error
        finally:
            self._started.set()

    async def _serve(self) -> None:
        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        async with http_endpoint(self.app, LOOPBACK, self.port) as base_url:
            self.base_url = base_url
            self._started.set()
            await self._stop.wait()

    def __enter__(self) -> OpenEnvServer:
        self._thread.start()
        self._started.wait()
        if self._failure is not None:
            raise self._failure
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
        /,
    ) -> Any:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join()
