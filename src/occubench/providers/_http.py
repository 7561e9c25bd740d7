"""The wire of the lean provider: the request body, answer reading, errors, quick retries.

A chat-completions request is a JSON object posted to ``BASE_URL/chat/completions``.
The body is the request Inspect prepares (model, messages, tools, tool choice, the
generate settings) with ``extra_body`` merged in, serialised as the OpenAI SDK does
(UTF-8, compact separators, no NaN) and in its key order (model, messages, then the
other fields alphabetically, then ``extra_body``), so the bytes on the wire are the
SDK's. It is posted on the provider's aiohttp session (``occubench.providers._sessions``)
with the headers the SDK's httpx client sends, and each attempt and answer is reported
to Inspect's request tracking as its httpx hooks would (the call's time, retries,
rate-limit headers). An answer body is read up to ``DEFAULT_MAX_ANSWER_BYTES`` (64 MiB,
decoded); a larger one is refused unread, as an unreadable answer.

Failures are raised as the OpenAI SDK's exception classes, so that Inspect's retry
logic for OpenAI-compatible providers (``openai_classify_retry``), its bad-request
handling (context-length answers) and its credential refresh (401) treat them exactly
as they treat the SDK's: a status answer by its code (429 a rate limit, 408/409/5xx
transient), a timeout or a dropped connection as transient, and an answer that cannot
be read (not JSON, no ``choices``, too large) as a server error, which Inspect retries
like a 5xx.

Before Inspect's retry, a failed attempt is retried here as the SDK would have done it
(``QuickRetry``): twice, 0.5 s then 1 s (jittered, up to 8 s), or after the answer's
``Retry-After`` when it asks for at most 60 s.

Every attempt runs under the model's adaptive limit (``occubench.calls.AdaptiveLimit``):
it waits for a place in the model's window of requests in flight, and reports how it
ended (an answer grows the window, a 429 halves it and its ``Retry-After`` pauses the
model's attempts). A rate-limited attempt is retried here up to ``rate_limit_retries``
times (after the pause, or after the SDK's backoff when the answer gives no wait), so a
rate limit is paced by the endpoint's own answers instead of Inspect's exponential
backoff; a 429 is not billed, so these retries repeat no paid call. ``post_chat`` is
that loop, for every request of the lean path.
"""

from __future__ import annotations

import email.utils
import json
import logging
import math
import random
import time
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp
import anyio
import httpx2
import openai
from inspect_ai._util.constants import HTTP
from inspect_ai.model._openai import OpenAIResponseError
from inspect_ai.model._providers.util.hooks import HttpHooks
from openai.types.chat import ChatCompletion
from pydantic import ValidationError

from occubench.calls import AdaptiveLimit, count_unreadable
from occubench.defaults import (
    DEFAULT_MAX_ANSWER_BYTES,
    DEFAULT_MAX_RETRY_AFTER,
    DEFAULT_RATE_LIMIT_RETRIES,
)
from occubench.redaction import known_secrets, redact

logger = logging.getLogger(__name__)

FIRST_FIELDS = ("model", "messages")
"""Body fields sent first, as the SDK orders them; the others follow alphabetically."""
MAX_ERROR_TEXT = 2000
"""Characters of an unreadable answer quoted in the error (the rest is cut)."""

_STATUS_ERRORS: dict[int, type[openai.APIStatusError]] = {
    400: openai.BadRequestError,
    401: openai.AuthenticationError,
    403: openai.PermissionDeniedError,
    404: openai.NotFoundError,
    409: openai.ConflictError,
    422: openai.UnprocessableEntityError,
    429: openai.RateLimitError,
}


def request_body(request: Mapping[str, Any]) -> bytes:
    """The JSON body of a chat-completions request, as the OpenAI SDK serialises it.

    Args:
        request: Body fields (``model``, ``messages``, ``tools``, generate settings),
            optionally ``extra_body`` (merged last, its keys win).
    """
    fields = {k: v for k, v in request.items() if k != "extra_body"}
    ordered = {k: fields.pop(k) for k in FIRST_FIELDS if k in fields}
    ordered.update(sorted(fields.items()))
    ordered.update(request.get("extra_body") or {})
    return json.dumps(ordered, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def _redact(text: str, secret: str | None) -> str:
    """``text`` with the call's API key and every known secret redacted (one rule)."""
    return redact(text, (known_secrets() | {secret}) if secret else None)


def _readable(data: Any) -> bool:
    """Whether a decoded answer has the shape of a completion: a list of choices with messages."""
    if not isinstance(data, dict):
        return False
    choices = data.get("choices")
    return (
        isinstance(choices, list)
        and len(choices) > 0
        and all(isinstance(c, dict) and isinstance(c.get("message"), dict) for c in choices)
    )


def _without_query(url: str) -> str:
    """``url`` without its query (where an error names the endpoint)."""
    return urllib.parse.urlsplit(url)._replace(query="").geturl()


def read_completion(
    content: bytes, status: int, url: str, secret: str | None = None
) -> ChatCompletion:
    """The completion in a 2xx answer.

    Validated against the SDK's model when it conforms; an answer that has the shape
    of a completion but not every field the model wants (servers differ) is built as
    leniently as the SDK builds it.

    Args:
        content: The answer's body (decoded).
        status: Its HTTP status.
        url: The URL it answered.
        secret: The API key, cut out of the error text.

    Raises:
        OpenAIResponseError: ``server_error`` when the body is not JSON or has no
            choices with messages (Inspect retries it like a 5xx).
    """
    try:
        data = json.loads(content)
    except ValueError:
        data = None
    if not _readable(data):
        text = _redact(
            content[: 4 * MAX_ERROR_TEXT].decode(errors="replace")[:MAX_ERROR_TEXT], secret
        )
        raise _unreadable(f"unreadable chat completion (HTTP {status}): {text!r}", f"{text!r}", url)
    try:
        return ChatCompletion.model_validate(data)
    except ValidationError:
        return ChatCompletion.construct(**data)


def _unreadable(message: str, problem: str, url: str) -> OpenAIResponseError:
    """The error of an unreadable answer, counted (``count_unreadable``)."""
    count_unreadable(problem, _without_query(url))
    return OpenAIResponseError("server_error", message)


def status_error(
    status: int,
    headers: Mapping[str, str],
    content: bytes,
    url: str,
    secret: str | None = None,
) -> openai.APIStatusError:
    """The SDK's exception for a non-2xx answer (its class chosen by the status code).

    Args:
        status: The answer's HTTP status.
        headers: Its headers.
        content: Its body (decoded: a ``Content-Encoding`` header is not passed on).
        url: The URL it answered.
        secret: The API key, cut out of the error text.
    """
    kept = [(k, v) for k, v in headers.items() if k.lower() != "content-encoding"]
    response = httpx2.Response(
        status, headers=kept, content=content, request=httpx2.Request("POST", url)
    )
    message = f"Error code: {status}"
    text = _redact(response.text.strip(), secret)
    body: Any = text
    try:
        body = json.loads(text)
    except ValueError:
        pass
    error = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(error, dict) and isinstance(error.get("message"), str) and error["message"]:
        message += f" - {error['message']}"
    kind = _STATUS_ERRORS.get(status)
    if kind is None:
        kind = openai.InternalServerError if status >= 500 else openai.APIStatusError
    return kind(message, response=response, body=error)


async def read_answer(response: aiohttp.ClientResponse, max_bytes: int, url: str) -> bytes:
    """The body of an answer, decoded, if it has at most ``max_bytes`` bytes.

    A larger one is refused as it arrives (its ``Content-Length`` first), never held
    whole: the connection is closed.

    Raises:
        OpenAIResponseError: ``server_error``, the answer is too large (an unreadable
            answer, retried like a 5xx).
    """
    length = response.content_length
    size = 0
    chunks: list[bytes] = []
    if length is None or length <= max_bytes:
        async for chunk in response.content.iter_any():
            size += len(chunk)
            if size > max_bytes:
                break
            chunks.append(chunk)
        else:
            return b"".join(chunks)
    response.close()
    problem = f"an answer of more than {max_bytes} bytes"
    raise _unreadable(f"{problem} (HTTP {response.status}): refused", problem, url)


@dataclass(frozen=True)
class QuickRetry:
    """Retries of one call inside the provider, as the OpenAI SDK makes them."""

    retries: int = 2
    """Attempts after the first."""
    initial_delay: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = 60.0
    """A ``Retry-After`` longer than this is left to Inspect's retry."""
    rate_limit_retries: int = DEFAULT_RATE_LIMIT_RETRIES
    """Rate-limited (429) attempts retried here, paced by the adaptive limit."""
    max_pause: float = DEFAULT_MAX_RETRY_AFTER
    """The longest ``Retry-After`` the model's attempts wait for (a longer one is cut)."""

    def should_retry(self, error: Exception) -> bool:
        """Whether a failed attempt is retried here (the SDK's rule, unreadable answers too)."""
        if isinstance(error, openai.APIStatusError):
            response = error.response
            retry_after = retry_after_seconds(response.headers)
            if retry_after is not None and retry_after > self.max_retry_after:
                return False
            hint = response.headers.get("x-should-retry")
            if hint in ("true", "false"):
                return hint == "true"
            return response.status_code in (408, 409, 429) or response.status_code >= 500
        return isinstance(error, openai.APIConnectionError | OpenAIResponseError)

    def delay(self, retry: int, error: Exception) -> float:
        """Seconds to wait before retry number ``retry`` (0-based)."""
        if isinstance(error, openai.APIStatusError):
            retry_after = retry_after_seconds(error.response.headers)
            if retry_after is not None and 0 < retry_after <= self.max_retry_after:
                return retry_after
        base = min(self.initial_delay * 2.0**retry, self.max_delay)
        return base * (1 - 0.25 * random.random())


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """Seconds asked by ``retry-after-ms`` or ``Retry-After`` (seconds or a date); else None."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / scale
        except ValueError:
            continue
        return seconds if math.isfinite(seconds) else math.inf
    value = headers.get("retry-after")
    try:
        when = email.utils.parsedate_tz(value) if value else None
        return None if when is None else float(email.utils.mktime_tz(when) - time.time())
    except (TypeError, ValueError, OverflowError):
        return None


async def post_chat(
    session: aiohttp.ClientSession,
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    *,
    timeout: aiohttp.ClientTimeout,
    limit: AdaptiveLimit,
    retry: QuickRetry,
    secret: str | None = None,
    count_header: str | None = None,
    hooks: HttpHooks | None = None,
    max_bytes: int = DEFAULT_MAX_ANSWER_BYTES,
) -> ChatCompletion:
    """Post one chat-completion body until it is answered, as the module's docstring says.

    Args:
        session: The provider's session on the running loop (``LoopSessions``).
        url: The chat-completions URL.
        body: The request body (``request_body``).
        headers: Every header of the request (the credential included), names in lower case.
        timeout: The connect and read timeouts of each attempt.
        limit: The model's adaptive limit of requests in flight.
        retry: Quick retries and rate-limit retries.
        secret: The API key, cut out of any error text.
        count_header: A header that carries the number of retries so far (the SDK's
            ``x-stainless-retry-count``), if any.
        hooks: Inspect's request tracking of the provider: each attempt and answer of
            the request whose id is in ``hooks.REQUEST_ID_HEADER`` is reported to it, as
            its httpx hooks do (the call's time in the log, retries, rate-limit headers).
        max_bytes: The largest answer body read.

    Raises:
        openai.APIError: the SDK's exception for the last failure (status, timeout,
            connection), once retries are spent or the failure is not retried here.
        OpenAIResponseError: an unreadable answer, once retries are spent.
    """
    retries = limited = 0
    while True:
        sent = dict(headers)
        if count_header is not None:
            sent[count_header] = str(retries + limited)
        async with limit.slot() as attempt:
            try:
                completion = await _attempt(
                    session, url, body, sent, timeout, secret, hooks, max_bytes
                )
            except openai.RateLimitError as ex:
                attempt.throttled(_pause(ex, retry))
                error: Exception = ex
            except (openai.APIError, OpenAIResponseError) as ex:
                attempt.failed()
                error = ex
            else:
                attempt.answered()
                return completion
        if not retry.should_retry(error):
            raise error
        if isinstance(error, openai.RateLimitError):
            limited += 1
            if limited > retry.rate_limit_retries:
                raise error
            if _pause(error, retry) is None:  # no wait asked: the SDK's backoff
                await anyio.sleep(retry.delay(limited - 1, error))
            continue  # with a Retry-After, the limit's pause is the wait
        if retries >= retry.retries:
            raise error
        await anyio.sleep(retry.delay(retries, error))
        retries += 1


def _pause(error: openai.APIStatusError, retry: QuickRetry) -> float | None:
    """The seconds a rate-limited answer asks to wait (at most ``max_pause``), if it asks."""
    seconds = retry_after_seconds(error.response.headers)
    if seconds is None or not seconds > 0:
        return None
    return min(seconds, retry.max_pause)


async def _attempt(
    session: aiohttp.ClientSession,
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    timeout: aiohttp.ClientTimeout,
    secret: str | None,
    hooks: HttpHooks | None,
    max_bytes: int,
) -> ChatCompletion:
    """One POST of the body; the completion, or the SDK's exception for the failure."""
    request_id = headers.get(HttpHooks.REQUEST_ID_HEADER) if hooks is not None else None
    if hooks is not None and request_id:
        hooks.update_request_time(request_id)  # the call's time counts from here
    try:
        async with session.post(url, data=body, headers=headers, timeout=timeout) as response:
            if hooks is not None:
                _answered(hooks, request_id, response)
            content = await read_answer(response, max_bytes, url)
    except TimeoutError as ex:  # aiohttp's timeouts are TimeoutErrors
        raise openai.APITimeoutError(request=httpx2.Request("POST", url)) from ex
    except (aiohttp.ClientError, OSError) as ex:
        raise openai.APIConnectionError(request=httpx2.Request("POST", url)) from ex
    if not 200 <= response.status < 300:
        raise status_error(response.status, response.headers, content, url, secret)
    return read_completion(content, response.status, url, secret)


def _answered(hooks: HttpHooks, request_id: str | None, response: aiohttp.ClientResponse) -> None:
    """Report an answer's status and headers to Inspect, as its httpx response hook does."""
    if logger.isEnabledFor(HTTP):
        version = response.version
        http = f"HTTP/{version.major}.{version.minor}" if version else "HTTP/1.1"
        logger.log(HTTP, f'POST {response.url} "{http} {response.status} {response.reason}" ')
    hooks.record_response(request_id, response.status, response.headers)
