"""A recording OpenAI-compatible server: the scripted answers, every request kept as sent.

``recorder`` is plain HTTP; ``tls_recorder`` serves HTTPS with a certificate made for the
test (its file in ``tls_recorder.cert_file``; made with ``cryptography``, a dev dependency).
"""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from occubench.testing._openai_server import answer, completion_body


@dataclass
class Captured:
    """One request as it reached the server."""

    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Recorder:
    """What the server saw, and what it answers with (``reply`` overrides the scripted one)."""

    requests: list[Captured] = field(default_factory=list)
    reply: Any = None
    """``(status, bytes, headers)`` to send instead of the scripted completion, or None."""
    replies: list[Any] = field(default_factory=list)
    """Replies to send first, one per request, in order (then ``reply`` or the scripted one)."""
    base_url: str = ""
    cert_file: str = ""
    """The server's self-signed certificate (PEM), for ``tls_recorder``."""


def _handler(recorder: Recorder) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            """Quiet."""

        def do_POST(self) -> None:  # noqa: N802
            data = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            recorder.requests.append(
                Captured(self.path, {k.lower(): v for k, v in self.headers.items()}, data)
            )
            headers: dict[str, str] = {}
            if recorder.replies:
                status, payload, headers = recorder.replies.pop(0)
            elif recorder.reply is not None:
                status, payload, headers = recorder.reply
            else:
                model, reply, tokens = answer(json.loads(data))
                status, payload = 200, json.dumps(completion_body(model, reply, tokens)).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler


@contextmanager
def _serving(tls: ssl.SSLContext | None = None) -> Iterator[Recorder]:
    """A recording server on 127.0.0.1, over TLS with ``tls``; stopped after the test."""
    found = Recorder()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(found))
    server.daemon_threads = True
    scheme = "http"
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
        scheme = "https"
    found.base_url = f"{scheme}://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield found
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    """A recording server on 127.0.0.1 (its URL in ``recorder.base_url``)."""
    with _serving() as found:
        yield found


def _self_signed(cert: Path, key: Path) -> None:
    """Write a certificate for 127.0.0.1 (valid two days) and its private key, as PEM."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    private = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    made = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(private.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(private, hashes.SHA256())
    )
    cert.write_bytes(made.public_bytes(serialization.Encoding.PEM))
    key.write_bytes(
        private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )


@pytest.fixture
def tls_recorder(tmp_path: Path) -> Iterator[Recorder]:
    """A recording HTTPS server on 127.0.0.1, its certificate self-signed for that address."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    _self_signed(cert, key)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    with _serving(tls) as found:
        found.cert_file = str(cert)
        yield found
