"""A failed model call in a few words, and whether the provider refused the request."""

from __future__ import annotations

from inspect_ai.model._model import ModelGenerateError
from tenacity import RetryError

NOT_REFUSALS = frozenset({408, 409, 429})
"""4xx statuses that say "not now" (timeout, conflict, rate limit), not "never"."""


def failure_text(error: BaseException) -> str:
    """``HTTP 400: <the provider's message>``, else ``<type>: <text>``.

    Inspect raises a provider's refusal as ``ModelGenerateError``, whose text begins with
    the whole request it sent; its ``provider_message`` is what the provider said.
    """
    if isinstance(error, ModelGenerateError) and error.provider_message:
        status = f"HTTP {error.status_code}" if error.status_code else "refused"
        return f"{status}: {error.provider_message}"
    return f"{type(error).__name__}: {error}"


def refusal_status(error: BaseException) -> int | None:
    """The HTTP status with which the provider refused the request (4xx), or None.

    Read from the error or what it wraps (Inspect's retry error, the SDK's exception as
    the cause): an SDK error's ``status_code``, Google's ``code``. A timeout, a conflict,
    a rate limit, a 5xx or a dropped connection is not a refusal.
    """
    seen: set[int] = set()
    found: BaseException | None = error
    while found is not None and id(found) not in seen:
        seen.add(id(found))
        if isinstance(found, RetryError):
            found = found.last_attempt.exception()
            continue
        status = getattr(found, "status_code", None)
        if not isinstance(status, int):
            status = getattr(found, "code", None)
        if isinstance(status, int) and 400 <= status < 500:
            return None if status in NOT_REFUSALS else status
        found = found.__cause__ or found.__context__
    return None
