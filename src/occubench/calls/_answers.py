"""Provider answers that cannot be read: how they are recognised, where they are caught.

An HTTP 200 whose body is cut short, is not JSON, or holds no ``choices`` is a failed
call like a 5xx, and gateways and proxies do return such bodies. Neither the OpenAI SDK
nor Inspect retries it (the SDK raises ``JSONDecodeError`` while parsing, Inspect a
``TypeError`` on the missing choices), so the sample errored and was re-run from its
start. Here it becomes a retryable failure of the call:

- For providers with an httpx client (Inspect's ``openai``, ``openai-api``, ``vllm`` and
  every OpenAI-compatible provider, occubench's own included), ``check_answer`` is a
  response hook on that client: a 2xx chat completion that does not read as one raises
  ``UnreadableAnswer`` inside the client's send, which the SDK retries as it retries a
  dropped connection (twice, quickly), and which then reaches Inspect as a connection
  error, retried with the backoff, ``max_retries`` and ``timeout`` of a 5xx.
- For any provider, a ``JSONDecodeError`` raised by the call (or under its cause) is
  taken as an unreadable answer (``is_unreadable``), retried by Inspect in the same
  loop (``ResilientModel.should_retry``).

Each unreadable answer is counted in the sample's store (``CallCounts.unreadable``) and
logged at INFO (the sample transcript keeps it).
"""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx2
from inspect_ai.util import StoreModel, store_as
from pydantic import Field

logger = logging.getLogger(__name__)

CHECKED_PATH = "/chat/completions"
"""The requests whose answers ``check_answer`` reads (chat completions)."""
QUOTED = 200
"""Characters of an unreadable body quoted in the error."""


class CallCounts(StoreModel):
    """Per sample attempt: what happened to its model calls beyond plain answers."""

    unreadable: int = Field(
        default=0, description="Provider answers that could not be read, each retried at the call."
    )
    replayed: int = Field(
        default=0,
        description="Calls answered from a record instead of the provider (not paid "
        "again): this sample's earlier attempt's, or the journal of an interrupted run "
        "(``occubench.calls`` replay).",
    )
    resumed: int = Field(
        default=0,
        description="Of the replayed calls, those answered from the journal an interrupted "
        "run left (what the resume saved; absent in logs before journals).",
    )


class UnreadableAnswer(httpx2.RemoteProtocolError):
    """A 2xx chat completion that cannot be read: cut short, not JSON, or without choices.

    A protocol error of the server's, as httpx classes it, so that clients retry it like
    a dropped connection.
    """


def answer_problem(body: bytes) -> str | None:
    """Why a chat-completion body cannot be read (None when it can)."""
    try:
        data: Any = json.loads(body)
    except ValueError as e:
        return f"not JSON ({e})"
    if not isinstance(data, dict):
        return f"a JSON {type(data).__name__}, not an object"
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        return "no choices"
    if not all(isinstance(c, dict) and isinstance(c.get("message"), dict) for c in choices):
        return "a choice without a message"
    return None


def count_unreadable(problem: str, where: str) -> None:
    """Count and log one unreadable answer (in the running sample's store, if any)."""
    logger.info("unreadable answer from %s: %s; retried at the call", where, problem)
    try:
        store_as(CallCounts).unreadable += 1
    except (LookupError, RuntimeError):
        pass  # not inside a sample


async def check_answer(response: httpx2.Response) -> None:
    """Httpx response hook: a 2xx chat completion that does not read as one raises.

    Raises:
        UnreadableAnswer: the body is cut short, not JSON, or has no choices (streamed
            answers are left to the client).
    """
    request = response.request
    if request.method != "POST" or not request.url.path.endswith(CHECKED_PATH):
        return
    if not response.is_success or "event-stream" in response.headers.get("content-type", ""):
        return
    body = await response.aread()
    problem = answer_problem(body)
    if problem is None:
        return
    count_unreadable(problem, str(request.url.copy_with(query=None)))
    await response.aclose()
    quoted = body[:QUOTED].decode("utf-8", errors="replace")
    raise UnreadableAnswer(
        f"unreadable chat completion (HTTP {response.status_code}): {problem}; body: {quoted!r}",
        request=request,
    )


def watch_answers(api: object) -> bool:
    """Put ``check_answer`` on a provider's httpx client, if it has one (once).

    Inspect's OpenAI-compatible providers keep their client in ``http_client``. A provider
    that reads its answers itself (``checks_answers``, e.g. ``occubench-openai``) is left
    alone: its bodies are not parsed twice.

    Returns:
        Whether the provider's answers are checked (by this hook or by the provider).
    """
    if getattr(api, "checks_answers", False):
        return True
    client = getattr(api, "http_client", None)
    if not isinstance(client, httpx2.AsyncClient):
        return False
    hooks = client.event_hooks["response"]
    if check_answer not in hooks:
        hooks.append(check_answer)
    return True


def is_unreadable(error: BaseException) -> bool:
    """Whether a failed call's exception is an unreadable answer (itself, or under it)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, UnreadableAnswer | json.JSONDecodeError):
            return True
        current = current.__cause__ or current.__context__
    return False
