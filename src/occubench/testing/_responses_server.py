"""A strict local OpenAI Responses API server (``POST /v1/responses``), reasoning included.

What it enforces is what the real API enforces on the requests Inspect's OpenAI provider
sends for reasoning models (``inspect_ai/model/_providers/openai_responses.py``,
``completion_params_responses``): ``store: false``, ``include:
["reasoning.encrypted_content"]``, ``reasoning: {effort, summary}``, the whole history in
``input`` (no ``previous_response_id``), ``prompt_cache_key`` when the model is given one.
Request and item shapes follow the openai SDK's types (``types/responses/``:
``response_create_params.py``, ``response_input_item_param.py``,
``response_reasoning_item_param.py``); each refusal's text is the real API's, as quoted in
public issue threads (cited where the rule is made).

Reasoning continuity, as the real API has it:

* A reasoning item sent back by id only (no ``encrypted_content``) is looked up among the
  stored items: under ``store: false`` nothing was stored, so it is refused (404).
* ``encrypted_content`` must be the server's own (signed by ``self.signer``): anything else
  is refused as content that "could not be verified".
* Reasoning items are not required: a history that drops them all is accepted.
* But an output item that followed a reasoning item (a ``function_call`` or an assistant
  ``message``), sent back with its ``fc_``/``msg_`` id while that reasoning item is dropped,
  is refused ("provided without its required 'reasoning' item"). Without its id it is
  plain history and accepted. Inspect replays a function call with its id whenever its
  per-sample cache holds the call (``_openai_responses.py``,
  ``_tool_call_items_from_assistant_message``), so a message rebuilt from text and tool
  calls alone is refused in the sample that produced it.
* A reasoning item must be followed by the item it preceded in the output.

Prompt caching (docs: Prompt caching): automatic for prompts of 1024 tokens or more, the
cached part growing in steps of 128 tokens, reported in
``usage.input_tokens_details.cached_tokens``. Modelled on item boundaries: the prompt is
tools and instructions, then each input item; every prefix ending at an item boundary
that reaches 1024 tokens is stored (rounded down to a multiple of 128), the longest stored
one is read. ``prompt_cache_key`` joins the prefix hash (the docs: it is combined with the
prefix to route requests), so requests with different keys share nothing. Cache writes
are reported as none (``cache_write_tokens`` 0: the API bills none for automatic caching).

The OpenAI-family pieces the chat-completions server shares (Bearer auth, the error
shape, prefix offers, the refused/cache views) are in ``OpenAIFamilyServer``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import secrets
import threading
import time
from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any, NamedTuple

from inspect_ai.model import ChatMessage, ChatMessageSystem, messages_from_openai_responses
from inspect_ai.tool import ToolInfo, ToolParams
from openai.types.responses import Response
from openai.types.responses.response_create_params import ResponseCreateParamsBase

from occubench.providers import response_events
from occubench.scripted import Reply
from occubench.testing._server import (
    Answer,
    JsonAnswer,
    Refused,
    StreamAnswer,
    WireRequest,
    WireServer,
    approx_tokens,
    digest,
    reasoning_text,
    run_async,
    scripted_reply,
)

DEFAULT_API_KEY = "test-key"
"""The key a server accepts unless told another."""


class CacheRule(NamedTuple):
    """How a provider's automatic prefix cache counts: a minimum, then whole units."""

    minimum: int
    """Fewest prompt tokens a cached prefix holds."""
    unit: int
    """Cached tokens are a multiple of this."""


OPENAI_CACHE = CacheRule(minimum=1024, unit=128)
"""docs: OpenAI Prompt caching (1024 tokens or more, hits in 128-token increments)."""


def openai_error(
    status: int,
    message: str,
    *,
    kind: str = "invalid_request_error",
    param: str | None = None,
    code: str | None = None,
) -> Refused:
    """A refusal in OpenAI's error shape ``{"error": {message, type, param, code}}``.

    openai SDK: ``_exceptions.py`` reads ``message``, ``type``, ``param`` and ``code``.
    """
    error = {"message": message, "type": kind, "param": param, "code": code}
    return Refused(status, {"error": error}, message)


def unknown_model(model: str) -> Refused:
    """OpenAI's 404 for a model it does not serve."""
    return openai_error(
        404,
        f"The model `{model}` does not exist or you do not have access to it.",
        code="model_not_found",
    )


def tool_info(name: str, description: str | None, parameters: Any) -> ToolInfo:
    """An Inspect tool from an OpenAI function tool's fields."""
    params = ToolParams.model_validate(parameters or {"type": "object", "properties": {}})
    return ToolInfo(name=name, description=description or "", parameters=params)


def prefix_offers(namespace: Any, blocks: Sequence[Any], rule: CacheRule) -> list[tuple[str, int]]:
    """The cacheable prefixes of a prompt, shortest first, as (digest, cached tokens).

    A prefix ends at each block boundary whose running token count reaches
    ``rule.minimum``; its cached tokens are that count rounded down to ``rule.unit``.
    The digest chains the blocks, so equal prefixes (in the same ``namespace``) match.
    """
    offers: list[tuple[str, int]] = []
    chain = digest(namespace)
    tokens = 0
    for block in blocks:
        tokens += approx_tokens(block)
        chain = hashlib.sha256(f"{chain}:{digest(block)}".encode()).hexdigest()
        if tokens >= rule.minimum:
            offers.append((chain, tokens - tokens % rule.unit))
    return offers


def prompt_tokens(blocks: Sequence[Any]) -> int:
    """The prompt tokens of these blocks (as ``prefix_offers`` counts them)."""
    return sum(approx_tokens(block) for block in blocks)


def item_id(prefix: str) -> str:
    """A fresh provider-style id (``rs_...``, ``msg_...``, ``fc_...``, ``call_...``)."""
    return f"{prefix}_{secrets.token_hex(20)}"


class OpenAIFamilyServer(WireServer):
    """What the OpenAI-family servers share: Bearer auth, OpenAI's error shape, views.

    Args:
        api_key: The key requests must carry as ``Authorization: Bearer <key>``.
        **wire: ``WireServer``'s arguments (host, port, behaviours, record).
    """

    base_path = "/v1"

    def __init__(self, api_key: str = DEFAULT_API_KEY, **wire: Any) -> None:
        super().__init__(**wire)
        self.api_key = api_key

    def malformed(self, message: str) -> JsonAnswer:
        """OpenAI's answer to a body that is not JSON (400)."""
        text = f"We could not parse the JSON body of your request ({message})."
        refused = openai_error(400, text)
        self.stats.refuse(text)
        return JsonAnswer(400, refused.payload)

    def authorize(self, request: WireRequest) -> None:
        """Refuse (401) a request without this server's key as a Bearer token.

        The key is never echoed in full: OpenAI masks all but its last four characters.
        """
        header = request.headers.get("authorization", "")
        if not header.startswith("Bearer ") or not header[7:].strip():
            raise openai_error(
                401,
                "You didn't provide an API key. You need to provide your API key in an "
                "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
            )
        key = header[7:].strip()
        if key != self.api_key:
            masked = "*" * max(0, len(key) - 4) + key[-4:]
            raise openai_error(
                401, f"Incorrect API key provided: {masked}.", code="invalid_api_key"
            )

    def post_json(self, request: WireRequest, path: str) -> dict[str, Any]:
        """The body of an authorized ``POST`` to ``path``, or OpenAI's refusal."""
        if request.method != "POST" or request.path.rstrip("/") != path:
            raise openai_error(404, f"Invalid URL ({request.method} {request.path})")
        self.authorize(request)
        if not isinstance(request.body, dict):
            raise openai_error(400, "The request body must be a JSON object.")
        model = request.body.get("model")
        if not isinstance(model, str) or not model:
            raise openai_error(400, "Missing required parameter: 'model'.", param="model")
        return request.body

    def reply(self, model: str, messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
        """The scripted behaviour's reply, or OpenAI's 404 for a model it does not know."""
        try:
            return scripted_reply(self.behaviours, model, messages, tools)
        except KeyError:
            raise unknown_model(model) from None

    def cache_read(self, offers: Sequence[tuple[str, int]]) -> int:
        """Read the longest stored prefix among ``offers``, then store them all."""
        read = self.cache.read(offers)
        self.cache.write(offers)
        return read

    @property
    def refused(self) -> list[str]:
        """The message of each refused request, in order."""
        return list(self.stats.refused)

    @property
    def cache_read_tokens(self) -> dict[str, int]:
        """Prompt tokens read from the cache per model (the usage's cached tokens)."""
        return dict(self.stats.cache_read_tokens)


class Effort(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """A Responses ``reasoning.effort`` (openai SDK: ``types/shared/reasoning_effort.py``)."""

    NONE = "none"
    MINIMAL = "minimal"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    XHIGH = "xhigh"


DEFAULT_REASONING: dict[str, tuple[Effort, ...]] = {
    "gpt-5.2": (Effort.NONE, Effort.LOW, Effort.MEDIUM, Effort.HIGH, Effort.XHIGH),
    "gpt-5": (Effort.MINIMAL, Effort.LOW, Effort.MEDIUM, Effort.HIGH),
    "o3": (Effort.LOW, Effort.MEDIUM, Effort.HIGH),
}
"""Reasoning models and the efforts each accepts (docs: Reasoning models; gpt-5.1 and
later add ``none`` and drop ``minimal``, ``xhigh`` came with gpt-5.1-codex-max/5.2)."""

ENCRYPTED_INCLUDE = "reasoning.encrypted_content"
PARAMETERS = frozenset(ResponseCreateParamsBase.__annotations__) | {"stream"}
"""The request fields the API knows (openai SDK: ``response_create_params.py``)."""
ASSISTANT_OUTPUTS = ("message", "function_call")
"""Output item types a reasoning item precedes."""


def _listed(values: Sequence[str]) -> str:
    """``'a', 'b', and 'c'``: how OpenAI lists supported values."""
    quoted = [f"'{v}'" for v in values]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])}, and {quoted[-1]}"


def _abbreviated(text: str) -> str:
    """``gAAA...DQ==``: how OpenAI quotes encrypted content in an error."""
    return text if len(text) <= 8 else f"{text[:4]}...{text[-4:]}"


def _kind(item: Mapping[str, Any]) -> str:
    """An input item's type (an easy message has a role and no type)."""
    return str(item.get("type") or ("message" if "role" in item else ""))


class _Prepared(NamedTuple):
    """A validated request: what the answer is built from."""

    model: str
    items: list[dict[str, Any]]
    effort: Effort | None
    summary: bool
    encrypted: bool
    store: bool


class ResponsesServer(OpenAIFamilyServer):
    """The OpenAI Responses API, strict about reasoning continuity (see the module).

    ``with ResponsesServer(behaviours={"gpt-5.2": BEHAVIOURS["schema-agent"]}) as s:``
    then ``get_model("openai/gpt-5.2", base_url=s.base_url, api_key="test-key")``.

    Args:
        reasoning: Reasoning models by name (a request's model, its last ``/`` part) and
            the efforts each accepts; other models do not reason.
        api_key: The key requests must carry.
        **wire: ``WireServer``'s arguments (host, port, behaviours, record).
    """

    def __init__(
        self,
        reasoning: Mapping[str, Sequence[Effort]] | None = None,
        api_key: str = DEFAULT_API_KEY,
        **wire: Any,
    ) -> None:
        super().__init__(api_key=api_key, **wire)
        source = DEFAULT_REASONING if reasoning is None else reasoning
        self.reasoning: dict[str, tuple[Effort, ...]] = {k: tuple(v) for k, v in source.items()}
        self._items_lock = threading.Lock()
        self._stored: dict[str, dict[str, Any]] = {}
        """Output items of responses made with ``store`` on, by id."""
        self._responses: dict[str, list[dict[str, Any]]] = {}
        """Stored responses: their input and output items, by response id."""
        self._follows: dict[str, str] = {}
        """The reasoning item id each issued message or function call followed."""

    def route(self, request: WireRequest) -> Answer:
        """``POST /v1/responses``."""
        body = self.post_json(request, f"{self.base_path}/responses")
        model = str(body["model"]).split("/")[-1]
        self.stats.request(model)
        if model not in self.behaviours:
            raise unknown_model(model)
        prepared = self._prepare(model, body)
        tools = [
            tool_info(t["name"], t.get("description"), t.get("parameters"))
            for t in body.get("tools") or []
            if isinstance(t, dict) and t.get("type") == "function"
        ]
        messages = self._messages(body.get("instructions"), prepared.items)
        reply = self.reply(model, messages, tools)
        response = self._respond(body, prepared, reply)
        if body.get("stream"):
            return StreamAnswer(list(response_events(Response.model_validate(response))))
        return JsonAnswer(200, response)

    def _prepare(self, model: str, body: dict[str, Any]) -> _Prepared:
        """Validate the request as the API does; its input items, resolved."""
        unknown = sorted(set(body) - PARAMETERS)
        if unknown:
            raise openai_error(
                400,
                f"Unknown parameter: '{unknown[0]}'.",
                param=unknown[0],
                code="unknown_parameter",
            )
        limit = body.get("max_output_tokens")
        if limit is not None and (not isinstance(limit, int) or limit < 16):
            raise openai_error(
                400,
                "Invalid 'max_output_tokens': integer below minimum value. Expected a value "
                f">= 16, but got {limit} instead.",
                param="max_output_tokens",
                code="integer_below_min_value",
            )
        effort = self._effort(model, body.get("reasoning"))
        store = body.get("store") is not False  # the API's default is to store
        items = self._history(body.get("previous_response_id")) + _input_items(body.get("input"))
        self._check_items(items, store)
        reasoning = body.get("reasoning") or {}
        summary = effort is not None and reasoning.get("summary") not in (None, "none")
        encrypted = ENCRYPTED_INCLUDE in (body.get("include") or [])
        return _Prepared(model, items, effort, summary, encrypted, store)

    def _effort(self, model: str, reasoning: Any) -> Effort | None:
        """The effort this request reasons with (None: no reasoning), or the API's refusal.

        Texts from OpenAI's 400s (issues: ``Unsupported value: 'reasoning.effort' does not
        support 'none' with this model. Supported values are: ...``; a non-reasoning model
        refuses the parameter itself).
        """
        asked = reasoning.get("effort") if isinstance(reasoning, dict) else None
        accepted = self.reasoning.get(model)
        if accepted is None:
            if asked is not None:
                raise openai_error(
                    400,
                    "Unsupported parameter: 'reasoning.effort' is not supported with this model.",
                    param="reasoning.effort",
                    code="unsupported_parameter",
                )
            return None
        values = [e.value for e in accepted]
        if asked is None:
            effort = Effort.NONE if Effort.NONE in accepted else Effort.MEDIUM
        elif asked in values:
            effort = Effort(asked)
        else:
            raise openai_error(
                400,
                f"Unsupported value: 'reasoning.effort' does not support '{asked}' with this "
                f"model. Supported values are: {_listed(values)}.",
                param="reasoning.effort",
                code="unsupported_value",
            )
        return None if effort is Effort.NONE else effort

    def _history(self, previous: Any) -> list[dict[str, Any]]:
        """The stored input and output of ``previous_response_id`` (none when not given)."""
        if previous is None:
            return []
        with self._items_lock:
            found = self._responses.get(str(previous))
        if found is None:
            raise openai_error(
                404,
                f"Previous response with id '{previous}' not found.",
                param="previous_response_id",
            )
        return list(found)

    def _check_items(self, items: list[dict[str, Any]], store: bool) -> None:
        """Refuse a history the API refuses (tool pairing, reasoning continuity)."""
        reasoning_seen: set[str] = set()
        calls: list[str] = []
        answered: set[str] = set()
        for index, item in enumerate(items):
            kind = _kind(item)
            if kind == "reasoning":
                self._check_reasoning(index, item, items[index + 1 : index + 2], store)
                reasoning_seen.add(str(item.get("id")))
            elif kind in ASSISTANT_OUTPUTS:
                self._check_follows(item, kind, reasoning_seen)
                if kind == "function_call":
                    calls.append(str(item.get("call_id")))
            elif kind == "function_call_output":
                call_id = str(item.get("call_id"))
                if call_id not in calls:
                    # issues: "No tool call found for function call output with call_id ..."
                    raise openai_error(
                        400,
                        f"No tool call found for function call output with call_id {call_id}.",
                        param="input",
                    )
                answered.add(call_id)
            elif kind == "item_reference":
                self._lookup(str(item.get("id")), store)
        for call_id in calls:
            if call_id not in answered:
                # issues: "No tool output found for function call call_..."
                raise openai_error(
                    400, f"No tool output found for function call {call_id}.", param="input"
                )

    def _check_reasoning(
        self, index: int, item: dict[str, Any], following: list[dict[str, Any]], store: bool
    ) -> None:
        """A reasoning item: its encrypted content verified, or found stored by id."""
        rid = item.get("id")
        encrypted = item.get("encrypted_content")
        if encrypted:
            if not self._verify(str(encrypted)):
                # issues (openai/codex #8145): "The encrypted content gAAA...DQ== could not
                # be verified." code invalid_encrypted_content; later with a Reason.
                raise openai_error(
                    400,
                    f"The encrypted content {_abbreviated(str(encrypted))} could not be "
                    "verified. Reason: Encrypted content could not be decrypted or parsed.",
                    code="invalid_encrypted_content",
                )
        elif rid is None:
            raise openai_error(
                400,
                f"Missing required parameter: 'input[{index}].id'.",
                param=f"input[{index}].id",
                code="missing_required_parameter",
            )
        else:
            self._lookup(str(rid), store)
        if not following or _kind(following[0]) not in ASSISTANT_OUTPUTS:
            # issues (continuedev/continue #8933)
            raise openai_error(
                400,
                f"Item '{rid}' of type 'reasoning' was provided without its required "
                "following item.",
                param="input",
            )

    def _lookup(self, rid: str, store: bool) -> None:
        """An item referred to by id alone must have been stored (404 otherwise).

        issues (vercel/ai #7543, continuedev/continue #9101): the text under ``store:
        false``; a 404 (can1357/oh-my-pi #41).
        """
        with self._items_lock:
            if rid in self._stored:
                return
        if store:
            raise openai_error(404, f"Item with id '{rid}' not found.", param="input")
        raise openai_error(
            404,
            f"Item with id '{rid}' not found. Items are not persisted when `store` is set to "
            "false. Try again with `store` set to true, or remove this item from your input.",
            param="input",
        )

    def _check_follows(self, item: dict[str, Any], kind: str, seen: set[str]) -> None:
        """An issued item sent back with its id needs the reasoning item it followed.

        issues (mastra-ai/mastra #8738, VRSEN/agency-swarm #367): "Item 'fc_...' of type
        'function_call' was provided without its required 'reasoning' item: 'rs_...'.";
        an item without its id is not tied to any reasoning (laravel/ai #1052).
        """
        iid = item.get("id")
        with self._items_lock:
            needed = self._follows.get(str(iid)) if iid else None
        if needed is not None and needed not in seen:
            raise openai_error(
                400,
                f"Item '{iid}' of type '{kind}' was provided without its required "
                f"'reasoning' item: '{needed}'.",
                param="input",
            )

    def _messages(self, instructions: Any, items: list[dict[str, Any]]) -> list[ChatMessage]:
        """The request as Inspect messages (Inspect's own Responses converter)."""
        messages: list[ChatMessage] = list(
            run_async(lambda: messages_from_openai_responses(items))  # type: ignore[arg-type]
        )
        if isinstance(instructions, str) and instructions:
            messages.insert(0, ChatMessageSystem(content=instructions))
        return messages

    def _encrypt(self, rid: str, text: str) -> str:
        """Signed, self-contained reasoning (what ``encrypted_content`` carries)."""
        payload = base64.b64encode(json.dumps({"id": rid, "text": text}).encode()).decode()
        return f"{payload}.{self.signer.sign(payload)}"

    def _verify(self, encrypted: str) -> bool:
        """Whether ``encrypted`` is this server's ``_encrypt`` output, unchanged."""
        payload, _, signature = encrypted.rpartition(".")
        try:
            base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError):
            return False
        return bool(payload) and self.signer.verify(payload, signature)

    def _respond(self, body: dict[str, Any], prepared: _Prepared, reply: Reply) -> dict[str, Any]:
        """The response object (openai SDK: ``types/responses/response.py``), usage counted."""
        turn = 1 + sum(_kind(i) == "function_call_output" for i in prepared.items)
        thought = reasoning_text(prepared.model, turn) if prepared.effort else None
        output = self._output(reply, thought, prepared)
        blocks = [{"instructions": body.get("instructions"), "tools": body.get("tools")}]
        blocks += prepared.items
        namespace = [prepared.model, body.get("prompt_cache_key")]
        cached = self.cache_read(prefix_offers(namespace, blocks, OPENAI_CACHE))
        input_tokens = prompt_tokens(blocks)
        reasoning_tokens = approx_tokens(thought) if thought else 0
        visible = [i for i in output if i["type"] != "reasoning"]
        output_tokens = reasoning_tokens + (approx_tokens(visible) if visible else 0)
        self.stats.answer(
            prepared.model, input_tokens=input_tokens, output_tokens=output_tokens, read=cached
        )
        response = {
            "id": item_id("resp"),
            "object": "response",
            "created_at": int(time.time()),
            "status": "completed",
            "error": None,
            "incomplete_details": None,
            "instructions": body.get("instructions"),
            "max_output_tokens": body.get("max_output_tokens"),
            "model": prepared.model,
            "output": output,
            "parallel_tool_calls": body.get("parallel_tool_calls", True),
            "previous_response_id": body.get("previous_response_id"),
            "prompt_cache_key": body.get("prompt_cache_key"),
            "reasoning": {
                "effort": prepared.effort.value if prepared.effort else None,
                "summary": (body.get("reasoning") or {}).get("summary"),
            },
            "store": prepared.store,
            "text": body.get("text") or {"format": {"type": "text"}},
            "tool_choice": body.get("tool_choice", "auto"),
            "tools": body.get("tools") or [],
            "usage": {
                "input_tokens": input_tokens,
                "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": 0},
                "output_tokens": output_tokens,
                "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
                "total_tokens": input_tokens + output_tokens,
            },
        }
        if prepared.store:
            with self._items_lock:
                self._stored.update({i["id"]: i for i in output})
                self._responses[response["id"]] = prepared.items + output
        return response

    def _output(
        self, reply: Reply, thought: str | None, prepared: _Prepared
    ) -> list[dict[str, Any]]:
        """The output items: reasoning first (when the model reasons), text, calls."""
        output: list[dict[str, Any]] = []
        rid: str | None = None
        if thought is not None:
            rid = item_id("rs")
            summary = [{"type": "summary_text", "text": thought}] if prepared.summary else []
            reasoning: dict[str, Any] = {"type": "reasoning", "id": rid, "summary": summary}
            if prepared.encrypted:
                reasoning["encrypted_content"] = self._encrypt(rid, thought)
            output.append(reasoning)
        if reply.content:
            text = {"type": "output_text", "text": reply.content, "annotations": []}
            output.append(
                {
                    "type": "message",
                    "id": item_id("msg"),
                    "role": "assistant",
                    "status": "completed",
                    "content": [text],
                }
            )
        for name, args in reply.tool_calls:
            output.append(
                {
                    "type": "function_call",
                    "id": item_id("fc"),
                    "call_id": item_id("call"),
                    "name": name,
                    "arguments": json.dumps(args),
                    "status": "completed",
                }
            )
        if rid is not None:
            with self._items_lock:
                self._follows.update({i["id"]: rid for i in output if i["id"] != rid})
        return output


def _input_items(value: Any) -> list[dict[str, Any]]:
    """The request's ``input`` as a list of items (a string is one user message)."""
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    if not isinstance(value, list) or not all(isinstance(i, dict) for i in value):
        raise openai_error(
            400, "Invalid 'input': expected a string or an array of input items.", param="input"
        )
    return [dict(i) for i in value]
