"""The wire of the lean provider: the request body, answer reading, errors, quick retries.

A chat-completions request is a JSON object posted to ``BASE_URL/chat/completions``.
The body is the request Inspect prepares (model, messages, tools, tool choice, the
generate settings) with ``extra_body`` merged in, serialised as the OpenAI SDK does
(UTF-8, compact separators, no NaN) and in its key order (model, messages, then the
other fields alphabetically, then ``extra_body``), so the bytes on the wire are the
SDK's.

Failures are raised as the OpenAI SDK's exception classes, so that Inspect's retry
logic for OpenAI-compatible providers (``openai_classify_retry``), its bad-request
handling (context-length answers) and its credential refresh (401) treat them exactly
as they treat the SDK's: a status answer by its code (429 a rate limit, 408/409/5xx
transient), a timeout or a dropped connection as transient, and an answer that cannot
be read (not JSON, no ``choices``) as a server error, which Inspect retries like a 5xx.

Before Inspect's retry, a failed attempt is retried here as the SDK would have done it
(``QuickRetry``): twice, 0.5 s then 1 s (jittered, up to 8 s), or after the answer's
``Retry-After`` when it asks for at most 60 s.
"""

from __future__ import annotations

import email.utils
import json
import math
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx2
import openai
from inspect_ai.model._openai import OpenAIResponseError
from openai.types.chat import ChatCompletion
from pydantic import ValidationError

from occubench.calls import count_unreadable
from occubench.redaction import known_secrets, redact

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


def read_completion(response: httpx2.Response, secret: str | None = None) -> ChatCompletion:
    """The completion in a 2xx answer.

    Validated against the SDK's model when it conforms; an answer that has the shape
    of a completion but not every field the model wants (servers differ) is built as
    leniently as the SDK builds it.

    Raises:
        OpenAIResponseError: ``server_error`` when the body is not JSON or has no
            choices with messages (Inspect retries it like a 5xx).
    """
    try:
        data = json.loads(response.content)
    except ValueError:
        data = None
    if not _readable(data):
        text = _redact(response.text[:MAX_ERROR_TEXT], secret)
        count_unreadable(f"{text!r}", str(response.request.url.copy_with(query=None)))
        raise OpenAIResponseError(
            "server_error", f"unreadable chat completion (HTTP {response.status_code}): {text!r}"
        )
    try:
        return ChatCompletion.model_validate(data)
    except ValidationError:
        return ChatCompletion.construct(**data)


def status_error(response: httpx2.Response, secret: str | None = None) -> openai.APIStatusError:
    """The SDK's exception for a non-2xx answer (its class chosen by the status code)."""
    message = f"Error code: {response.status_code}"
    text = _redact(response.text.strip(), secret)
    body: Any = text
    try:
        body = json.loads(text)
    except ValueError:
        pass
    error = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(error, dict) and isinstance(error.get("message"), str) and error["message"]:
        message += f" - {error['message']}"
    kind = _STATUS_ERRORS.get(response.status_code)
    if kind is None:
        kind = openai.InternalServerError if response.status_code >= 500 else openai.APIStatusError
    return kind(message, response=response, body=error)


def transport_error(ex: httpx2.TransportError, request: httpx2.Request) -> openai.APIError:
    """The SDK's exception for a request that got no answer (timeout, connection)."""
    if isinstance(ex, httpx2.TimeoutException):
        return openai.APITimeoutError(request=request)
    return openai.APIConnectionError(request=request)


@dataclass(frozen=True)
class QuickRetry:
    """Retries of one call inside the provider, as the OpenAI SDK makes them."""

    retries: int = 2
    """Attempts after the first."""
    initial_delay: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = 60.0
    """A ``Retry-After`` longer than this is left to Inspect's retry."""

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
