"""The lean path's HTTP sessions: one per event loop, closed with it; proxies, TLS, settings."""

from __future__ import annotations

import asyncio
import gc
import socket
import warnings
from collections.abc import Iterator

import aiohttp
import httpx2
import openai
import pytest
from aiohttp import compression_utils
from inspect_ai.model import ChatMessageUser, GenerateConfig, Model, ModelOutput, get_model

from occubench.providers import PROVIDER, LeanOpenAIAPI
from occubench.providers._sessions import _keepalive_socket, accept_encoding, client_timeout

KEY = "sk-occubench-test-0123456789"
PROVIDERS = ("openai-api", PROVIDER)
"""Inspect's path (the OpenAI SDK on httpx), then the lean path."""


def built(provider: str, base_url: str) -> Model:
    """A model whose calls nothing retries (neither the SDK, Inspect nor the lean path)."""
    m = get_model(
        f"{provider}/local/schema-agent", base_url=base_url, api_key=KEY, memoize=False,
        max_retries=0,
    )  # fmt: skip
    if isinstance(m.api, LeanOpenAIAPI):
        m.api.quick_retry = type(m.api.quick_retry)(retries=0)
    return m


async def ask(m: Model) -> ModelOutput:
    """One call on the provider itself."""
    result = await m.api.generate([ChatMessageUser(content="hello")], [], "auto", GenerateConfig())
    return result[0] if isinstance(result, tuple) else result


async def ask_once(provider: str, base_url: str) -> ModelOutput | Exception:
    """One call on a new model, closed after it; its output or its error."""
    m = built(provider, base_url)
    try:
        return await ask(m)
    except Exception as ex:
        return ex
    finally:
        await m.api.aclose()


def unclosed(caught: list[warnings.WarningMessage]) -> list[str]:
    """aiohttp's warnings of sessions or connectors left open."""
    prefixes = ("Unclosed client session", "Unclosed connector")
    return [str(w.message) for w in caught if str(w.message).startswith(prefixes)]


def test_a_provider_used_from_two_loops_has_a_session_on_each_closed_as_its_loop_ends(recorder):
    m = built(PROVIDER, recorder.base_url)
    url = f"{recorder.base_url}/chat/completions"
    sessions: list[aiohttp.ClientSession] = []

    async def twice(m: Model) -> list[ModelOutput]:
        outputs = [await ask(m), await ask(m)]
        sessions.append(await m.api.sessions.session(url))
        return outputs

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outputs = asyncio.run(twice(m)) + asyncio.run(twice(m))
        del m
        gc.collect()
    assert all(o.completion for o in outputs) and len(recorder.requests) == 4
    assert sessions[0] is not sessions[1]  # one per loop
    assert all(s.closed for s in sessions)  # each closed as its loop ended
    assert unclosed(caught) == []
    assert sessions[0].connector is None  # closed (its limit was none: occubench.calls bounds)


def test_aclose_closes_the_running_loops_session_and_a_later_call_opens_another(recorder):
    url = f"{recorder.base_url}/chat/completions"

    async def run() -> tuple[aiohttp.ClientSession, aiohttp.ClientSession, ModelOutput]:
        m = built(PROVIDER, recorder.base_url)
        await ask(m)
        first = await m.api.sessions.session(url)
        assert first.connector is not None and first.connector.limit == 0  # no global limit
        await m.api.aclose()
        output = await ask(m)
        second = await m.api.sessions.session(url)
        await m.api.aclose()
        return first, second, output

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first, second, output = asyncio.run(run())
        gc.collect()
    assert first.closed and second.closed and first is not second
    assert output.completion and unclosed(caught) == []


@pytest.fixture
def no_proxies(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No proxy variables in the environment, whatever the machine has."""
    for scheme in ("http", "https", "all", "no"):
        monkeypatch.delenv(f"{scheme}_proxy", raising=False)
        monkeypatch.delenv(f"{scheme.upper()}_PROXY", raising=False)
    yield


def test_a_proxy_from_the_environment_carries_the_request_as_with_the_sdk(
    recorder, monkeypatch, no_proxies
):
    monkeypatch.setenv("HTTP_PROXY", recorder.base_url.removesuffix("/v1"))
    upstream = "http://upstream.invalid/v1"  # never resolved here: the proxy is asked for it
    outputs = [asyncio.run(ask_once(p, upstream)) for p in PROVIDERS]
    assert all(isinstance(o, ModelOutput) and o.completion for o in outputs), outputs
    assert [r.path for r in recorder.requests] == [f"{upstream}/chat/completions"] * 2
    sdk, lean = recorder.requests
    assert lean.body == sdk.body and lean.headers.keys() == sdk.headers.keys()


def test_no_proxy_names_the_hosts_reached_directly(recorder, monkeypatch, no_proxies):
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there
    assert isinstance(asyncio.run(ask_once(PROVIDER, recorder.base_url)), openai.APIConnectionError)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    outputs = [asyncio.run(ask_once(p, recorder.base_url)) for p in PROVIDERS]
    assert all(isinstance(o, ModelOutput) for o in outputs), outputs
    assert [r.path for r in recorder.requests] == ["/v1/chat/completions"] * 2


def test_tls_is_verified_against_the_trust_store_httpx_uses(tls_recorder, monkeypatch):
    """A certificate no trusted authority signed is refused; trusted by ``SSL_CERT_FILE``."""
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    refused = [asyncio.run(ask_once(p, tls_recorder.base_url)) for p in PROVIDERS]
    assert [type(e) for e in refused] == [openai.APIConnectionError] * 2
    assert tls_recorder.requests == []
    monkeypatch.setenv("SSL_CERT_FILE", tls_recorder.cert_file)
    outputs = [asyncio.run(ask_once(p, tls_recorder.base_url)) for p in PROVIDERS]
    assert all(isinstance(o, ModelOutput) and o.completion for o in outputs), outputs
    sdk, lean = tls_recorder.requests
    assert lean.body == sdk.body and lean.headers.keys() == sdk.headers.keys()


def test_accept_encoding_keeps_only_what_aiohttp_decodes(monkeypatch):
    monkeypatch.setattr(compression_utils, "HAS_BROTLI", False)
    monkeypatch.setattr(compression_utils, "HAS_ZSTD", False)
    assert accept_encoding("gzip, deflate, br, zstd") == "gzip, deflate"
    monkeypatch.setattr(compression_utils, "HAS_BROTLI", True)
    assert accept_encoding("gzip, deflate, br, zstd") == "gzip, deflate, br"
    assert accept_encoding("gzip, deflate") == "gzip, deflate"  # never more than httpx's


@pytest.mark.parametrize(
    ("sdk", "floor", "connect", "read"),
    [
        (httpx2.Timeout(600.0, connect=5.0), 60.0, 60.0, 600.0),  # the SDK's, Inspect's floor
        (httpx2.Timeout(600.0, connect=90.0), 60.0, 90.0, 600.0),
        (1.0, 60.0, 60.0, 1.0),  # client_timeout=1
        (None, 60.0, None, None),  # no timeout at all
    ],
)
def test_the_sdks_timeouts_in_aiohttps_terms(sdk, floor, connect, read):
    timeout = client_timeout(sdk, floor)
    assert (timeout.sock_connect, timeout.sock_read) == (connect, read)
    assert timeout.total is None and timeout.connect is None


def test_connections_send_tcp_keepalive_probes():
    """As Inspect's httpx transport sets them: a long generation keeps its connection."""
    sock = _keepalive_socket((socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", ()))
    with sock:
        assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE)
        if hasattr(socket, "TCP_KEEPIDLE"):
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE) == 60
