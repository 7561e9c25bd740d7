"""A failed call in a few words, and whether the provider refused it (a 4xx) or not."""

from __future__ import annotations

import httpx
import openai
import pytest
from inspect_ai.model._model import ModelGenerateError
from tenacity import Future, RetryError

from occubench.calls import failure_text, refusal_status


def sdk_error(status: int) -> openai.APIStatusError:
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx.Response(status, request=request, json={"error": {"message": "no"}})
    return openai.APIStatusError("no", response=response, body=None)


STATUSES = [(400, 400), (404, 404), (429, None), (408, None), (500, None), (503, None)]


@pytest.mark.parametrize(("status", "refused"), STATUSES)
def test_only_a_4xx_that_means_never_is_a_refusal(status, refused):
    assert refusal_status(sdk_error(status)) == refused


def test_the_status_is_found_under_what_wraps_it():
    future: Future = Future(attempt_number=3)
    future.set_exception(sdk_error(400))
    assert refusal_status(RetryError(future)) == 400
    try:
        try:
            raise sdk_error(400)
        except openai.APIStatusError as cause:
            raise RuntimeError("the call failed") from cause
    except RuntimeError as wrapped:
        assert refusal_status(wrapped) == 400
    assert refusal_status(ConnectionError("reset")) is None


def test_inspects_error_says_the_providers_message_not_the_request():
    error = ModelGenerateError(
        'Request: {"messages": [...]} Error: Missing field', status_code=400,
        provider_message="Missing `reasoning_content` field",
    )  # fmt: skip
    assert failure_text(error) == "HTTP 400: Missing `reasoning_content` field"
    assert refusal_status(error) == 400
    assert failure_text(ValueError("bad")) == "ValueError: bad"
