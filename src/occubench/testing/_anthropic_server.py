"""A strict local Anthropic Messages API server (``POST /v1/messages`` and friends).

It answers with the scripted behaviours (``occubench.scripted``) and refuses, with the
real API's status, error shape and message, what the real API refuses. The rules, each
with its source (the anthropic SDK's types under ``anthropic/types``, Anthropic's docs,
or the API's own error text as quoted in public issue threads):

- Auth and version (docs: "API overview", "Versioning"): a key in ``x-api-key`` or, as
  the 2.x SDKs send it, ``Authorization: Bearer`` (else 401 ``authentication_error``
  "x-api-key header is required"); an ``anthropic-version`` header of a published version.
- Body (SDK: ``message_create_params.py``): ``model``, ``max_tokens`` and ``messages``
  required; ``system`` a string or text blocks; tools with ``name`` and an object
  ``input_schema`` (``tool_param.py``); ``tool_choice`` auto/any/tool/none naming a tool
  that exists (``tool_choice_param.py``).
- Tool pairing (docs: "Handle tool calls"): every ``tool_use`` of an assistant message is
  answered by a ``tool_result`` at the head of the next user message, and every
  ``tool_result`` answers a ``tool_use`` of the message before it.
- Thinking (SDK: ``thinking_config_*_param.py``; docs: "Extended thinking", "Adaptive
  thinking"): ``enabled`` needs ``1024 <= budget_tokens < max_tokens`` and a model that
  takes a budget; ``adaptive`` a model that supports it; ``output_config.effort`` a model
  with that level (``output_config_param.py``). With thinking on, a forced
  ``tool_choice`` is refused for ``enabled``, and the final assistant message of a tool
  loop must start with a thinking block (docs: "Preserving thinking blocks"); every
  returned ``thinking`` block must carry this server's ``signature``
  (``thinking_block_param.py``) and every ``redacted_thinking`` block its ``data``
  (``redacted_thinking_block_param.py``).
- Sampling (docs: "Versioning", API version 2026-10-21): ``temperature``, ``top_p`` and
  ``top_k`` are refused outright under 2026-10-21 (the version SDK 2.x sends); under
  2023-06-01, with thinking on, ``temperature`` other than 1 and any ``top_k`` are.
- Prompt caching (docs: "Prompt caching"): at most 4 ``cache_control`` breakpoints
  (blocks, and the top-level automatic one, which marks the last cacheable block).

What is modelled, and what is not:

- The answer: ``thinking`` (or, every ``redact_every``-th turn, ``redacted_thinking``)
  when thinking is on, then ``text``, then ``tool_use`` blocks (ids ``toolu_...``);
  ``stop_reason`` is ``tool_use`` or ``end_turn`` (no ``max_tokens`` cut-off). Thinking
  blocks of earlier turns are accepted (signatures checked) and counted as input like
  any block: no model here strips them. ``adaptive`` is held to the same continuity rule
  as ``enabled``, since this server thinks on every turn. An omitted ``thinking`` means
  disabled (no model here thinks by default).
- Streaming (docs: "Streaming messages"): ``message_start``, ``ping``, per block
  ``content_block_start`` / ``content_block_delta`` (``thinking_delta`` then
  ``signature_delta``, ``text_delta``, ``input_json_delta``) / ``content_block_stop``,
  then ``message_delta`` (stop reason, usage) and ``message_stop``.
- Cache accounting: the prefix is tools, then system, then messages, block by block
  (``approx_tokens`` each). A breakpoint caches its prefix when that is at least the
  model's ``min_cacheable_tokens``. A request reads the longest stored prefix found at
  its breakpoints or up to ``CACHE_LOOKBACK_BLOCKS`` block boundaries before each (the
  docs' automatic lookback), and writes the breakpoints beyond that. Usage reports
  ``cache_read_input_tokens``, ``cache_creation_input_tokens`` (the written prefix beyond
  the read one) and ``input_tokens`` (the rest). Caches are per model; TTLs are not
  modelled (nothing expires).
"""

from __future__ import annotations

import base64
import binascii
import itertools
import threading
from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any, NamedTuple

from anthropic.types import Message
from inspect_ai.model import ChatMessage, messages_from_anthropic
from inspect_ai.tool import ToolInfo, ToolParams
from pydantic import BaseModel, Field

from occubench.providers import THINKING_FIELDS, halves, message_events
from occubench.scripted import Behaviour
from occubench.testing._server import (
    Answer,
    JsonAnswer,
    Refused,
    Signer,
    StreamAnswer,
    WireRequest,
    WireServer,
    approx_tokens,
    digest,
    reasoning_text,
    run_async,
    scripted_reply,
)

API_VERSIONS = ("2023-01-01", "2023-06-01", "2026-10-21")
"""The published ``anthropic-version`` values (docs: "Versioning")."""
SAMPLING_REMOVED = "2026-10-21"
"""The API version that refuses ``temperature``, ``top_p`` and ``top_k`` outright."""
SAMPLING_PARAMS = ("temperature", "top_p", "top_k")
MIN_THINKING_BUDGET = 1024
"""The least ``budget_tokens`` (SDK: ``thinking_config_enabled_param.py``)."""
MAX_CACHE_BREAKPOINTS = 4
"""Breakpoints a request may set (docs: "Prompt caching")."""
CACHE_LOOKBACK_BLOCKS = 20
"""Block boundaries before a breakpoint checked for a cache hit (docs: "Prompt caching")."""
DEFAULT_MIN_CACHEABLE_TOKENS = 1024
"""The shortest cacheable prefix of most models (docs: "Prompt caching")."""

_THINKING_DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
_CONSIDERATIONS = f"{_THINKING_DOCS}#important-considerations-when-using-extended-thinking"

# The API's error texts. Quoted from its answers in public issue threads unless marked
# "modelled" (no public text found: written in the API's style).
KEY_REQUIRED = "x-api-key header is required"
KEY_INVALID = "invalid x-api-key"
VERSION_REQUIRED = "anthropic-version: header is required"
VERSION_INVALID = 'anthropic-version: "{version}" is not a valid version'
NOT_JSON = "The request body is not valid JSON."  # modelled
FIELD_REQUIRED = "{field}: Field required"
UNKNOWN_MODEL = "model: {model}"
EXTRA_INPUT = "{field}: Extra inputs are not permitted"
EMPTY_CONTENT = (
    "messages.{index}: all messages must have non-empty content except for the optional "
    "final assistant message"
)
EMPTY_TEXT = "messages: text content blocks must be non-empty"
MISSING_RESULTS = (
    "messages.{index}: `tool_use` ids were found without `tool_result` blocks immediately "
    "after: {ids}. Each `tool_use` block must have a corresponding `tool_result` block in "
    "the next message."
)
UNEXPECTED_RESULT = (
    "messages.{index}.content.{block}: unexpected `tool_use_id` found in `tool_result` "
    "blocks: {id}. Each `tool_result` block must have a corresponding `tool_use` block in "
    "the previous message."
)
THINKING_FIRST = (
    "messages.{index}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
    "`{found}`. When `thinking` is enabled, a final `assistant` message must start with a "
    "thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). "
    "We recommend you include thinking blocks from previous turns. To avoid this "
    f"requirement, disable `thinking`. Please consult our documentation at {_THINKING_DOCS}"
)
THINKING_WHEN_DISABLED = (
    "messages.{index}.content.{block}: When thinking is disabled, an `assistant` message in "
    "the final position cannot contain `thinking`. To use thinking blocks, enable "
    "`thinking` in your request."
)
BAD_SIGNATURE = "messages.{index}.content.{block}: Invalid `signature` in `thinking` block"
BAD_REDACTED = (  # modelled on BAD_SIGNATURE
    "messages.{index}.content.{block}: Invalid `data` in `redacted_thinking` block"
)
BUDGET_TOO_SMALL = "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
BUDGET_TOO_LARGE = "`max_tokens` must be greater than `thinking.budget_tokens`."
THINKING_TYPE = (
    "thinking: Input tag '{found}' found using 'type' does not match any of the expected "
    "tags: 'adaptive', 'disabled', 'enabled'"
)
NO_THINKING = "`{model}` does not support thinking."  # modelled
NO_ADAPTIVE = "adaptive thinking is not supported on this model"
NO_BUDGET = (
    '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" '
    'and "output_config.effort" to control thinking behavior.'
)
NO_EFFORT = "This model does not support the effort parameter."
EFFORT_LEVEL = "output_config.effort: `{effort}` is not supported by this model."  # modelled
FORCED_TOOL = "Thinking may not be enabled when tool_choice forces tool use."
TEMPERATURE = (
    "`temperature` may only be set to 1 when thinking is enabled. Please consult our "
    f"documentation at {_CONSIDERATIONS}"
)
TOP_K = (
    "`top_k` must be unset when thinking is enabled. Please consult our documentation at "
    f"{_CONSIDERATIONS}"
)
TOO_MANY_BREAKPOINTS = "A maximum of 4 blocks with cache_control may be provided. Found {count}."
CHOICES = ("auto", "any", "tool", "none")
"""``tool_choice.type`` (SDK: ``tool_choice_param.py``)."""
CHOICE_TYPE = (
    "tool_choice: Input tag '{found}' found using 'type' does not match any of the expected "
    "tags: 'auto', 'any', 'tool', 'none'"
)
TOOL_NOT_FOUND = "tool_choice.tool.name: Tool '{name}' not found in `tools`."  # modelled


class ErrorType(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """The ``error.type`` of an API error (SDK: ``*_error.py``, e.g. ``authentication_error``)."""

    INVALID_REQUEST = "invalid_request_error"
    AUTHENTICATION = "authentication_error"
    NOT_FOUND = "not_found_error"


class ThinkingType(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """``thinking.type`` (SDK: ``thinking_config_param.py``)."""

    ENABLED = "enabled"
    ADAPTIVE = "adaptive"
    DISABLED = "disabled"


class Effort(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """``output_config.effort`` (SDK: ``output_config_param.py``)."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    XHIGH = "xhigh"
    MAX = "max"


class BlockType(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """The content block types this server reasons about."""

    TEXT = "text"
    THINKING = "thinking"
    REDACTED_THINKING = "redacted_thinking"
    TOOL_USE = "tool_use"
    TOOL_RESULT = "tool_result"


THINKING_BLOCKS = tuple(THINKING_FIELDS)
"""The reasoning block types (``thinking``, ``redacted_thinking``)."""


class ModelSupport(BaseModel):
    """What one model accepts (as the models endpoint's ``capabilities`` say it).

    SDK: ``model_capabilities.py``, ``thinking_capability.py``, ``effort_capability.py``.
    """

    thinking: bool = Field(default=True, description="It thinks at all.")
    budget_thinking: bool = Field(
        default=True, description='It takes {"type": "enabled", "budget_tokens": N}.'
    )
    adaptive_thinking: bool = Field(default=False, description='It takes {"type": "adaptive"}.')
    efforts: list[Effort] = Field(
        default_factory=list, description="The effort levels it takes (none: effort refused)."
    )
    min_cacheable_tokens: int = Field(
        default=DEFAULT_MIN_CACHEABLE_TOKENS, ge=0, description="The shortest cached prefix."
    )


ADAPTIVE_MODEL = ModelSupport(
    budget_thinking=True, adaptive_thinking=True, efforts=[Effort.LOW, Effort.MEDIUM, Effort.HIGH]
)
"""A model of the Claude 4.6 kind: budgets, adaptive thinking and three effort levels."""


class Usage(BaseModel):
    """Token counts as Anthropic's ``usage`` reports them (SDK: ``usage.py``)."""

    input_tokens: int = Field(
        default=0, description="Input neither read from nor written to cache."
    )
    cache_creation_input_tokens: int = Field(default=0, description="Input written to cache.")
    cache_read_input_tokens: int = Field(default=0, description="Input read from cache.")
    output_tokens: int = Field(default=0, description="Output, thinking included.")


def refused(
    message: str, status: int = 400, kind: ErrorType = ErrorType.INVALID_REQUEST
) -> Refused:
    """The API's refusal: ``{"type": "error", "error": {"type": ..., "message": ...}}``."""
    payload = {"type": "error", "error": {"type": kind.value, "message": message}}
    return Refused(status, payload, message)


def seal(signer: Signer, text: str) -> str:
    """An opaque token that carries ``text`` and this server's signature of it."""
    return f"{base64.b64encode(text.encode()).decode()}.{signer.sign(text)}"


def unseal(signer: Signer, token: str) -> str | None:
    """The text a token of ``seal`` carries, or None if it is not this server's."""
    encoded, _, signature = token.partition(".")
    try:
        text = base64.b64decode(encoded, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None
    return text if signer.verify(text, signature) else None


_REDACTED = "redacted:"
"""What a ``redacted_thinking`` block's sealed ``data`` starts with."""


class Thinking(NamedTuple):
    """A request's thinking settings."""

    type: ThinkingType
    display_omitted: bool = False

    @property
    def on(self) -> bool:
        """Whether the model thinks."""
        return self.type is not ThinkingType.DISABLED


class Turn(NamedTuple):
    """One message after consecutive same-role messages are merged (as the API does).

    Block numbers in refusals count across the merged messages.
    """

    at: int
    """The index of its first message in the request."""
    role: str
    blocks: list[dict[str, Any]]


def _blocks(content: Any) -> list[dict[str, Any]]:
    """A message's or system's content as blocks (a string is one text block)."""
    if isinstance(content, str):
        return [{"type": BlockType.TEXT.value, "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _turns(messages: list[Any]) -> list[Turn]:
    """The messages, checked for shape, with consecutive same-role messages merged."""
    turns: list[Turn] = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            raise refused(f"messages.{index}.role: Input should be 'user' or 'assistant'")
        blocks = _blocks(message.get("content"))
        final = index == len(messages) - 1 and message["role"] == "assistant"
        if not blocks and not final:
            raise refused(EMPTY_CONTENT.format(index=index))
        if any(b.get("type") == BlockType.TEXT.value and not b.get("text") for b in blocks):
            raise refused(EMPTY_TEXT)
        if turns and turns[-1].role == message["role"]:
            turns[-1].blocks.extend(blocks)
        else:
            turns.append(Turn(index, message["role"], list(blocks)))
    return turns


def _ids(blocks: list[dict[str, Any]], kind: BlockType, key: str) -> list[str]:
    return [str(b.get(key)) for b in blocks if b.get("type") == kind.value]


def check_pairing(turns: list[Turn]) -> None:
    """Every ``tool_use`` answered at the head of the next user turn, and only those."""
    for position, turn in enumerate(turns):
        following = turns[position + 1].blocks if position + 1 < len(turns) else []
        if turn.role == "assistant":
            head = list(itertools.takewhile(lambda b: b.get("type") == "tool_result", following))
            answered = set(_ids(head, BlockType.TOOL_RESULT, "tool_use_id"))
            missing = [i for i in _ids(turn.blocks, BlockType.TOOL_USE, "id") if i not in answered]
            if missing:
                raise refused(MISSING_RESULTS.format(index=turn.at, ids=", ".join(missing)))
            continue
        previous = turns[position - 1] if position else None
        used = set(_ids(previous.blocks, BlockType.TOOL_USE, "id")) if previous else set()
        for number, block in enumerate(turn.blocks):
            if block.get("type") == "tool_result" and block.get("tool_use_id") not in used:
                raise refused(
                    UNEXPECTED_RESULT.format(
                        index=turn.at, block=number, id=block.get("tool_use_id")
                    )
                )


def check_reasoning(turns: list[Turn], thinking: Thinking, signer: Signer) -> None:
    """Returned thinking is this server's, and a tool loop's last assistant turn has it."""
    for turn in turns:
        for number, block in enumerate(turn.blocks):
            kind = block.get("type")
            if kind == BlockType.THINKING.value:
                original = unseal(signer, str(block.get("signature") or ""))
                if original is None or block.get("thinking") not in (original, ""):
                    raise refused(BAD_SIGNATURE.format(index=turn.at, block=number))
            elif kind == BlockType.REDACTED_THINKING.value:
                original = unseal(signer, str(block.get("data") or ""))
                if original is None or not original.startswith(_REDACTED):
                    raise refused(BAD_REDACTED.format(index=turn.at, block=number))
    last = turns[-1]
    if not thinking.on and last.role == "assistant":
        for number, block in enumerate(last.blocks):
            if block.get("type") in THINKING_BLOCKS:
                raise refused(THINKING_WHEN_DISABLED.format(index=last.at, block=number))
    in_tool_loop = (
        len(turns) >= 2
        and last.role == "user"
        and turns[-2].role == "assistant"
        and any(b.get("type") == BlockType.TOOL_RESULT.value for b in last.blocks)
    )
    if thinking.on and in_tool_loop:
        assistant = turns[-2]
        found = str(assistant.blocks[0].get("type")) if assistant.blocks else "text"
        if found not in THINKING_BLOCKS:
            raise refused(THINKING_FIRST.format(index=assistant.at, found=found))


def read_thinking(body: dict[str, Any], model: str, support: ModelSupport) -> Thinking:
    """The request's ``thinking`` and ``output_config``, checked against the model."""
    config = body.get("thinking")
    output = body.get("output_config")
    effort = output.get("effort") if isinstance(output, dict) else None
    if effort is not None:
        if not support.efforts:
            raise refused(NO_EFFORT)
        if effort not in {e.value for e in support.efforts}:
            raise refused(EFFORT_LEVEL.format(effort=effort))
    if config is None:
        return Thinking(ThinkingType.DISABLED)
    found = config.get("type") if isinstance(config, dict) else None
    if found not in {t.value for t in ThinkingType}:
        raise refused(THINKING_TYPE.format(found=found))
    thinking = Thinking(ThinkingType(found), config.get("display") == "omitted")
    if not thinking.on:
        return thinking
    if not support.thinking:
        raise refused(NO_THINKING.format(model=model))
    if thinking.type is ThinkingType.ADAPTIVE:
        if not support.adaptive_thinking:
            raise refused(NO_ADAPTIVE)
        return thinking
    if not support.budget_thinking:
        raise refused(NO_BUDGET)
    budget = config.get("budget_tokens")
    if not isinstance(budget, int):
        raise refused(FIELD_REQUIRED.format(field="thinking.enabled.budget_tokens"))
    if budget < MIN_THINKING_BUDGET:
        raise refused(BUDGET_TOO_SMALL)
    if isinstance(body.get("max_tokens"), int) and budget >= body["max_tokens"]:
        raise refused(BUDGET_TOO_LARGE)
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") in ("any", "tool"):
        raise refused(FORCED_TOOL)
    return thinking


def check_sampling(body: dict[str, Any], version: str, thinking: Thinking) -> None:
    """``temperature``/``top_p``/``top_k``: gone in 2026-10-21, limited with thinking before."""
    if version == SAMPLING_REMOVED:
        for name in SAMPLING_PARAMS:
            if name in body:
                raise refused(EXTRA_INPUT.format(field=name))
        return
    if thinking.on and body.get("temperature", 1) != 1:
        raise refused(TEMPERATURE)
    if thinking.on and "top_k" in body:
        raise refused(TOP_K)


def read_tools(body: dict[str, Any]) -> list[ToolInfo]:
    """The request's tools as Inspect ``ToolInfo``s, and its ``tool_choice`` checked."""
    tools: list[ToolInfo] = []
    for index, tool in enumerate(body.get("tools") or []):
        where = f"tools.{index}.custom"
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise refused(FIELD_REQUIRED.format(field=f"{where}.name"))
        schema = tool.get("input_schema")
        if not isinstance(schema, dict):
            raise refused(FIELD_REQUIRED.format(field=f"{where}.input_schema"))
        if schema.get("type") != "object":
            raise refused(f"{where}.input_schema.type: Input should be 'object'")
        tools.append(
            ToolInfo(
                name=tool["name"],
                description=str(tool.get("description") or ""),
                parameters=ToolParams.model_validate(schema),
            )
        )
    choice = body.get("tool_choice")
    if choice is not None and (not isinstance(choice, dict) or choice.get("type") not in CHOICES):
        found = choice.get("type") if isinstance(choice, dict) else None
        raise refused(CHOICE_TYPE.format(found=found))
    if choice is not None and choice.get("type") == "tool":
        if choice.get("name") not in {t.name for t in tools}:
            raise refused(TOOL_NOT_FOUND.format(name=choice.get("name")))
    return tools


class Prefix(NamedTuple):
    """The cacheable prefix of a request, block by block (tools, system, messages)."""

    digests: list[str]
    """The digest of the prefix ending at each block."""
    tokens: list[int]
    """The tokens of the prefix ending at each block."""
    breakpoints: list[int]
    """The blocks that carry a cache breakpoint."""


def _unmarked(block: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if k != "cache_control"}


def prefix(body: dict[str, Any], model: str) -> Prefix:
    """The request's prefix; refuses more than ``MAX_CACHE_BREAKPOINTS`` breakpoints."""
    items: list[tuple[str, dict[str, Any]]] = [("tool", t) for t in _blocks(body.get("tools"))]
    items += [("system", b) for b in _blocks(body.get("system") or [])]
    for message in body.get("messages") or []:
        items += [(str(message.get("role")), b) for b in _blocks(message.get("content"))]
    breakpoints = {n for n, (_, block) in enumerate(items) if block.get("cache_control")}
    automatic = bool(body.get("cache_control"))
    count = len(breakpoints) + automatic
    if count > MAX_CACHE_BREAKPOINTS:
        raise refused(TOO_MANY_BREAKPOINTS.format(count=count))
    cacheable = [n for n, (_, b) in enumerate(items) if b.get("type") not in THINKING_BLOCKS]
    if automatic and cacheable:  # automatic caching marks the last cacheable block
        breakpoints.add(cacheable[-1])
    digests, tokens = [], []
    chain, total = digest(model), 0
    for role, block in items:
        chain = digest([chain, role, _unmarked(block)])
        total += approx_tokens(_unmarked(block))
        digests.append(chain)
        tokens.append(total)
    return Prefix(digests, tokens, sorted(breakpoints))


class Checked(NamedTuple):
    """A request that meets every rule, read."""

    model: str
    thinking: Thinking
    turns: list[Turn]
    tools: list[ToolInfo]
    prefix: Prefix


class AnthropicServer(WireServer):
    """A strict local Anthropic Messages API: ``with AnthropicServer() as s: s.base_url``.

    ``base_url`` is what a user sets in ``ANTHROPIC_BASE_URL`` (the SDK appends
    ``/v1/messages``). Models are behaviours named by the request's model (its last
    ``/`` part); ``models`` says what each model name accepts (``ModelSupport``), the rest
    get ``default_model``.

    Args:
        host: A loopback address (anything else is refused).
        port: Port to bind (0: any free port).
        behaviours: More models, by name, beside ``BEHAVIOURS``.
        record: Keep every request (``requests``).
        models: What each model name accepts (thinking kinds, effort levels, cache minimum).
        default_model: What any other model accepts.
        api_keys: The keys accepted (None: any non-empty key).
        hold_turn: Hold each request at this many assistant turns (``WireServer``).
        redact_every: With thinking on, answer every this-many-th turn of a conversation
            with a ``redacted_thinking`` block instead of a ``thinking`` block (0: never).
    """

    base_path = ""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        behaviours: Mapping[str, Behaviour] | None = None,
        record: bool = False,
        models: Mapping[str, ModelSupport] | None = None,
        default_model: ModelSupport | None = None,
        api_keys: Sequence[str] | None = None,
        redact_every: int = 0,
        hold_turn: int | None = None,
    ) -> None:
        super().__init__(host, port, behaviours, record, hold_turn)
        self.models = dict(models or {})
        self.default_model = default_model or ModelSupport()
        self.api_keys = None if api_keys is None else set(api_keys)
        self.redact_every = redact_every
        self._ids = itertools.count(1)
        self._ids_lock = threading.Lock()

    @property
    def refused(self) -> list[str]:
        """The message of each refusal so far, in order."""
        return list(self.stats.refused)

    def usage(self, model: str) -> Usage:
        """The usage of ``model``'s answers so far, in Anthropic's fields."""
        stats = self.stats.snapshot()
        read = stats["cache_read_tokens"].get(model, 0)
        written = stats["cache_write_tokens"].get(model, 0)
        return Usage(
            input_tokens=stats["input_tokens"].get(model, 0) - read - written,
            cache_creation_input_tokens=written,
            cache_read_input_tokens=read,
            output_tokens=stats["output_tokens"].get(model, 0),
        )

    def support(self, model: str) -> ModelSupport:
        """What ``model`` accepts."""
        return self.models.get(model) or self.default_model

    def malformed(self, message: str) -> JsonAnswer:
        """A body that is not JSON: the API's invalid request error."""
        error = refused(NOT_JSON)
        return JsonAnswer(error.status, error.payload)

    def route(self, request: WireRequest) -> Answer:
        """Check auth and version, then answer messages, count_tokens or models."""
        version = self._authorize(request.headers)
        path = request.path.rstrip("/")
        if request.method == "GET" and path == "/v1/models":
            return self._json(self._model_list())
        if request.method == "POST" and path == "/v1/messages":
            return self._messages(request.body, version)
        if request.method == "POST" and path == "/v1/messages/count_tokens":
            return self._json(self._count(request.body, version))
        raise refused(f"Not found: {request.method} {path}", 404, ErrorType.NOT_FOUND)

    def _authorize(self, headers: Mapping[str, str]) -> str:
        bearer = headers.get("authorization", "")
        key = headers.get("x-api-key") or (bearer[7:] if bearer.startswith("Bearer ") else "")
        if not key:
            raise refused(KEY_REQUIRED, 401, ErrorType.AUTHENTICATION)
        if self.api_keys is not None and key not in self.api_keys:
            raise refused(KEY_INVALID, 401, ErrorType.AUTHENTICATION)
        version = headers.get("anthropic-version")
        if not version:
            raise refused(VERSION_REQUIRED)
        if version not in API_VERSIONS:
            raise refused(VERSION_INVALID.format(version=version))
        return version

    def _request_id(self) -> str:
        with self._ids_lock:
            return f"req_{next(self._ids):024d}"

    def _json(self, payload: Any) -> JsonAnswer:
        return JsonAnswer(200, payload, {"request-id": self._request_id()})

    def _model_list(self) -> dict[str, Any]:
        names = sorted({*self.models, *self.behaviours})
        data = [
            {"type": "model", "id": n, "display_name": n, "created_at": "2025-01-01T00:00:00Z"}
            for n in names
        ]
        return {"data": data, "has_more": False, "first_id": names[0], "last_id": names[-1]}

    def _checked(self, body: Any, version: str, *, generate: bool) -> Checked:
        """Every rule a request of either endpoint must meet."""
        if not isinstance(body, dict):
            raise refused(NOT_JSON)
        for field in ("model", "max_tokens", "messages") if generate else ("model", "messages"):
            if field not in body:
                raise refused(FIELD_REQUIRED.format(field=field))
        model = body["model"]
        if not isinstance(model, str) or model.split("/")[-1] not in self.behaviours:
            raise refused(UNKNOWN_MODEL.format(model=model), 404, ErrorType.NOT_FOUND)
        self.stats.request(model)
        if generate and (not isinstance(body["max_tokens"], int) or body["max_tokens"] < 0):
            raise refused("max_tokens: Input should be greater than or equal to 0")
        if not isinstance(body["messages"], list) or not body["messages"]:
            raise refused("messages: at least one message is required")
        system = body.get("system")
        if system is not None and not isinstance(system, str):
            kinds = [b.get("type") if isinstance(b, dict) else None for b in system]
            if not isinstance(system, list) or any(k != BlockType.TEXT.value for k in kinds):
                raise refused("system: Input should be a valid string or a list of text blocks")
        tools = read_tools(body)
        support = self.support(model)
        thinking = read_thinking(body, model, support)
        check_sampling(body, version, thinking)
        turns = _turns(body["messages"])
        check_pairing(turns)
        check_reasoning(turns, thinking, self.signer)
        return Checked(model, thinking, turns, tools, prefix(body, model))

    def _count(self, body: Any, version: str) -> dict[str, int]:
        tokens = self._checked(body, version, generate=False).prefix.tokens
        return {"input_tokens": tokens[-1] if tokens else 0}

    def _cache(self, cached: Prefix, support: ModelSupport) -> tuple[int, int]:
        """Tokens read from and written to the cache by a request (docs: "Prompt caching")."""
        eligible = [n for n, t in enumerate(cached.tokens) if t >= support.min_cacheable_tokens]
        looked = sorted(
            {n for b in cached.breakpoints for n in eligible if b - CACHE_LOOKBACK_BLOCKS < n <= b}
        )
        read = self.cache.read([(cached.digests[n], cached.tokens[n]) for n in looked])
        writes = [
            (cached.digests[b], cached.tokens[b])
            for b in cached.breakpoints
            if b in eligible and cached.tokens[b] > read
        ]
        self.cache.write(writes)
        return read, max((t for _, t in writes), default=read) - read

    def _messages(self, body: Any, version: str) -> Answer:
        model, thinking, turns, tools, cached = self._checked(body, version, generate=True)
        system = body.get("system")
        system_text = (
            system if isinstance(system, str) else "\n".join(b["text"] for b in system or [])
        )
        messages: list[ChatMessage] = run_async(
            lambda: messages_from_anthropic(body["messages"], system_text or None)
        )
        reply = scripted_reply(self.behaviours, model, messages, tools)
        turn = 1 + sum(t.role == "assistant" for t in turns)
        content = self._content(model, turn, thinking, reply.content, reply.tool_calls, body)
        read, written = self._cache(cached, self.support(model))
        total = cached.tokens[-1] if cached.tokens else 0
        usage = Usage(
            input_tokens=total - read - written,
            cache_creation_input_tokens=written,
            cache_read_input_tokens=read,
            output_tokens=sum(approx_tokens(_visible(block)) for block in content),
        )
        self.stats.answer(
            model, input_tokens=total, output_tokens=usage.output_tokens, read=read, written=written
        )
        message = {
            "id": f"msg_{digest(body)[:24]}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": "tool_use" if reply.tool_calls else "end_turn",
            "stop_sequence": None,
            "usage": usage.model_dump(),
        }
        if body.get("stream"):
            events = message_events(Message.model_validate(message), pieces=halves, ping=True)
            return StreamAnswer(list(events), {"request-id": self._request_id()})
        return self._json(message)

    def _content(
        self,
        model: str,
        turn: int,
        thinking: Thinking,
        text: str,
        calls: list[tuple[str, dict[str, Any]]],
        body: dict[str, Any],
    ) -> list[dict[str, Any]]:
        """The answer's blocks: reasoning when thinking is on, text, then tool calls."""
        blocks: list[dict[str, Any]] = []
        if thinking.on:
            reasoning = reasoning_text(model, turn)
            if self.redact_every and turn % self.redact_every == 0:
                data = seal(self.signer, _REDACTED + reasoning)
                blocks.append({"type": BlockType.REDACTED_THINKING.value, "data": data})
            else:
                shown = "" if thinking.display_omitted else reasoning
                signature = seal(self.signer, reasoning)
                blocks.append(
                    {"type": BlockType.THINKING.value, "thinking": shown, "signature": signature}
                )
        if text:
            blocks.append({"type": BlockType.TEXT.value, "text": text})
        request = digest(body.get("messages"))
        for number, (name, arguments) in enumerate(calls):
            blocks.append(
                {
                    "type": BlockType.TOOL_USE.value,
                    "id": f"toolu_{digest([request, number])[:24]}",
                    "name": name,
                    "input": arguments,
                }
            )
        return blocks


def _visible(block: dict[str, Any]) -> Any:
    """What of a block counts as output (its text, reasoning or input)."""
    kind = block["type"]
    if kind == BlockType.THINKING.value:
        return block["thinking"] or block["signature"]
    if kind == BlockType.REDACTED_THINKING.value:
        return block["data"]
    return block["input"] if kind == BlockType.TOOL_USE.value else block["text"]
