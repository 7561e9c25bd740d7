"""A failed model call in a few words: the provider's own message where Inspect keeps it."""

from __future__ import annotations

from inspect_ai.model._model import ModelGenerateError


def failure_text(error: BaseException) -> str:
    """``HTTP 400: <the provider's message>``, else ``<type>: <text>``.

    Inspect raises a provider's refusal as ``ModelGenerateError``, whose text begins with
    the whole request it sent; its ``provider_message`` is what the provider said.
    """
    if isinstance(error, ModelGenerateError) and error.provider_message:
        status = f"HTTP {error.status_code}" if error.status_code else "refused"
        return f"{status}: {error.provider_message}"
    return f"{type(error).__name__}: {error}"
