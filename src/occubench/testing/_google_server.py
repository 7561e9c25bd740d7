"""A strict local Gemini API server: generateContent, streamGenerateContent, countTokens.

It speaks the Gemini Developer API's REST wire as the google-genai SDK (and so Inspect's
``google`` provider) uses it: ``POST {base_url}/{version}/models/{model}:generateContent``,
``:streamGenerateContent?alt=sse`` and ``:countTokens``, where ``version`` is ``v1`` (the
SDK's default, google-genai ``_api_client.py`` ``GOOGLE_AI_API_DEFAULT_VERSION``), ``v1beta``
or ``v1alpha``. ``server.base_url`` is the origin, the value a user gives as
``GOOGLE_BASE_URL`` (Inspect's ``google.py`` hands it to ``HttpOptions(base_url=...)``, and
the SDK appends the version). Inspect streams only with ``streaming=True`` (a model arg) or
when its caller asks for a stream; otherwise it calls ``generateContent``.

What it refuses, with Google's error body ``{"error": {"code", "message", "status"}}``:

- No API key (neither the ``x-goog-api-key`` header nor the ``key`` query parameter):
  403 ``PERMISSION_DENIED`` "Method doesn't allow unregistered callers ..." (issues:
  PublicAffairs/openai-gemini#92); a key other than ``api_key`` (when set): 400
  "API key not valid. Please pass a valid API key.".
- A path that is no model method of a served version: 404 ``NOT_FOUND`` (wording ours).
- A model no behaviour answers: 404 ``NOT_FOUND`` "models/X is not found for API version
  V, or is not supported for M. Call ListModels ..." (issues: google/adk-python#200).
- A field the API does not know, in either JSON spelling: proto3 JSON parsers accept a
  field's lowerCamelCase name and its proto name (the SDK itself sends
  ``parameters_json_schema`` and ``thinking_level`` inside camelCase bodies), anything else
  is "Invalid JSON payload received. Unknown name "x" at 'path': Cannot find field."
  (issues: zed-industries/zed#44875, free-claude-code#542). Field lists: google-genai
  ``types.py`` (``Content``, ``Part``, ``FunctionCall``, ``FunctionDeclaration``,
  ``Schema``, ``GenerationConfig``, ``ThinkingConfig``, ``ToolConfig``). A
  ``thoughtSignature`` that is not base64 (``types.Part.thought_signature`` is bytes) is
  an invalid value.
- Structure: no contents; a role other than ``user``/``model`` ("Please use a valid role:
  user, model."); a content without parts; a part with no data (the required ``data``
  oneof); a function declaration without a name or with an invalid one.
- Turn order (function calling): a model turn with ``functionCall`` parts must follow a
  user turn ("Please ensure that function call turn comes immediately after a user turn
  or after a function response turn.", issues: google-gemini/gemini-cli#11814); a turn
  with ``functionResponse`` parts must follow a function-call turn ("Please ensure that
  function response turn comes immediately after a function call turn.", issues:
  langchain-ai/langchain#27799); the turn after a function-call turn must hold as many
  ``functionResponse`` parts as it had calls ("Please ensure that the number of function
  response parts is equal to the number of function call parts of the function call
  turn.", issues: google-gemini/gemini-cli#4217).
- Thought signatures (docs: Thought Signatures, ai.google.dev/gemini-api/docs/
  thought-signatures): the *current turn* starts at the last user content with standard
  (non-``functionResponse``) parts; for Gemini 3 models (``GeminiModel.strict_signatures``)
  the first ``functionCall`` part of every model step in it must carry its
  ``thoughtSignature``, else "Function call is missing a thought_signature in
  functionCall parts. ... Additional data, function call `default_api:NAME` , position N.
  ..." (issues: manthanabc/paws#103; N is the 1-based index of the content, as Google's
  examples show). A signature this server did not sign, for that model and that part, is
  "Corrupted thought signature." (issues: google-gemini/gemini-cli#13467) wherever it
  appears in the history. That binding to the part is our choice (Gemini's signature is
  opaque); Inspect's ``google.py`` notes that a signature moved to another part is refused
  as corrupted. The documented dummy signatures ``skip_thought_signature_validator`` and
  ``context_engineering_is_the_way_to_go`` pass (docs: Thought Signatures, FAQ).
- Thinking config (docs: Thinking, ai.google.dev/gemini-api/docs/thinking): a model that
  does not think refuses ``thinkingConfig`` ("thinking_config is not supported.",
  issues: immersive-translate#2976); a budget-only model (2.5) refuses ``thinkingLevel``
  ("Thinking level is not supported for this model.", issues: RooCodeInc/Roo-Code#10700);
  a level it lacks is "Thinking level MINIMAL is not supported for this model." (issues:
  vellum-ai/vellum-assistant#32687); both budget and level: "You can only set only one of
  thinking budget and thinking level." (issues: sterlp/eclipse-peon-ai#115); budget 0 on a
  model that cannot stop thinking: "Budget 0 is invalid. This model only works in thinking
  mode." (issues: vercel/ai#8027); a budget out of range: "The thinking budget (N) is
  invalid." (issues: RooCodeInc/Roo-Code#4399).
- Generation config: ``responseSchema``/``responseJsonSchema`` need ``responseMimeType``
  ``application/json`` and exclude each other (types.py ``GenerateContentConfig.
  response_json_schema``: "If set, response_schema must be omitted, but
  response_mime_type is required"); ``maxOutputTokens`` must be positive and
  ``temperature`` within [0, 2] (types.py ``GenerationConfig``; wording ours).

What it answers: ``candidates[0].content.parts`` (a ``thought: true`` summary first when
``includeThoughts``, then text, then ``functionCall`` parts), ``finishReason`` ``STOP``
even when the turn calls functions (Gemini has no tool-call finish reason, types.py
``FinishReason``; Inspect maps ``STOP`` to ``stop_reason="stop"`` and the tool calls ride
on the message), ``MAX_TOKENS`` when the visible output exceeds ``maxOutputTokens``
(thoughts are not counted against it here), ``usageMetadata`` (``promptTokenCount``,
``candidatesTokenCount``, ``thoughtsTokenCount``, ``cachedContentTokenCount`` when a cache
hit, ``totalTokenCount``), ``modelVersion`` and ``responseId``. A thinking model signs the
first ``functionCall`` part of a response, or, with no call, its last part (docs: Thought
Signatures, "Signatures in function calling parts" and "non function call" responses). A
stream sends one part per chunk, the text in two pieces, a text signature on a final empty
text part, and ``finishReason`` and usage on the last chunk; without ``alt=sse`` the same
chunks come as one JSON array.

Implicit caching (docs: Context caching, "Implicit caching"): a request's prefixes are
the system instruction with the tools and tool config, then that plus each content in
turn; every prefix of at least ``cache_min_tokens`` tokens is stored (per model), and the
longest stored one is reported as ``cachedContentTokenCount``. Storing is free (Gemini
bills no cache writes for implicit caching), so ``stats.cache_write_tokens`` stays 0.
Tokens are ``approx_tokens`` of each piece's JSON.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import re
from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any, NamedTuple, cast

from inspect_ai.model import ChatMessage, messages_from_google
from inspect_ai.tool import ToolInfo, ToolParams
from pydantic import BaseModel, Field, ValidationError

from occubench.providers import GeminiAnswer, generate_response, halves, stream_chunks
from occubench.scripted import Behaviour, Reply
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

API_VERSIONS = ("v1", "v1beta", "v1alpha")
"""The API versions served (the SDK's default is ``v1``)."""

DEFAULT_CACHE_MIN_TOKENS = 1024
"""The smallest prefix, in tokens, implicit caching stores (docs: Context caching)."""

SKIP_SIGNATURES = frozenset(
    {"skip_thought_signature_validator", "context_engineering_is_the_way_to_go"}
)
"""Dummy signatures Google documents for histories whose real signatures are lost."""

_PATH = re.compile(r"^/(?P<version>[^/]+)/models/(?P<model>[^/:]+):(?P<method>[A-Za-z]+)$")
_FUNCTION_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$")


class GoogleStatus(str, Enum):
    """The google.rpc status names the server answers with, and their HTTP codes."""

    INVALID_ARGUMENT = "INVALID_ARGUMENT"
    PERMISSION_DENIED = "PERMISSION_DENIED"
    NOT_FOUND = "NOT_FOUND"

    @property
    def http(self) -> int:
        """The HTTP status Google pairs with this status."""
        return {"INVALID_ARGUMENT": 400, "PERMISSION_DENIED": 403, "NOT_FOUND": 404}[self.value]


class GeminiMethod(str, Enum):
    """The model methods served."""

    GENERATE = "generateContent"
    STREAM = "streamGenerateContent"
    COUNT = "countTokens"


class ThinkingControl(str, Enum):
    """How a model's thinking is set (docs: Thinking)."""

    NONE = "none"
    """The model does not think and refuses ``thinkingConfig`` (Gemini 2.0 and older)."""
    BUDGET = "budget"
    """``thinkingBudget`` only; ``thinkingLevel`` is refused (Gemini 2.5)."""
    LEVEL = "level"
    """``thinkingLevel`` (``thinkingBudget`` still accepted; not both) (Gemini 3)."""


class ThinkingLevel(str, Enum):
    """Thinking levels (types.py ``ThinkingLevel``)."""

    MINIMAL = "MINIMAL"
    LOW = "LOW"
    MEDIUM = "MEDIUM"
    HIGH = "HIGH"


class GeminiModel(BaseModel):
    """What a family of model names accepts; a name takes the longest matching prefix."""

    prefix: str = Field(description="Model names starting with this belong to the family.")
    thinking: ThinkingControl = Field(description="How thinking is set.")
    levels: list[ThinkingLevel] = Field(
        default_factory=list, description="The thinking levels accepted (LEVEL models)."
    )
    can_disable: bool = Field(
        default=False, description="Whether thinkingBudget 0 turns thinking off."
    )
    budget_range: tuple[int, int] = Field(
        default=(1, 32768), description="Accepted thinkingBudget values (besides 0 and -1)."
    )
    strict_signatures: bool = Field(
        default=False,
        description="Refuse a current-turn function call step without its thought signature.",
    )


_ALL_LEVELS = list(ThinkingLevel)
_NO_MINIMAL = [ThinkingLevel.LOW, ThinkingLevel.MEDIUM, ThinkingLevel.HIGH]

DEFAULT_GEMINI_MODELS: list[GeminiModel] = [
    GeminiModel(prefix="gemini-1", thinking=ThinkingControl.NONE),
    GeminiModel(prefix="gemini-2.0", thinking=ThinkingControl.NONE),
    GeminiModel(
        prefix="gemini-2.5-pro", thinking=ThinkingControl.BUDGET, budget_range=(128, 32768)
    ),
    GeminiModel(
        prefix="gemini-2.5-flash",
        thinking=ThinkingControl.BUDGET,
        can_disable=True,
        budget_range=(1, 24576),
    ),
    GeminiModel(
        prefix="gemini-2.5-flash-lite",
        thinking=ThinkingControl.BUDGET,
        can_disable=True,
        budget_range=(512, 24576),
    ),
    GeminiModel(
        prefix="gemini-3",
        thinking=ThinkingControl.LEVEL,
        levels=_ALL_LEVELS,
        strict_signatures=True,
    ),
    GeminiModel(
        prefix="gemini-3-pro",
        thinking=ThinkingControl.LEVEL,
        levels=_NO_MINIMAL,
        strict_signatures=True,
    ),
    GeminiModel(
        prefix="gemini-3.1-pro",
        thinking=ThinkingControl.LEVEL,
        levels=_NO_MINIMAL,
        strict_signatures=True,
    ),
]
"""Model families by name prefix (docs: Thinking, "Thinking levels" and budget tables)."""

_NOT_THINKING = GeminiModel(prefix="", thinking=ThinkingControl.NONE)
"""The family of a name no prefix matches (a bare behaviour name such as ``schema-agent``)."""


def google_error(status: GoogleStatus, message: str) -> dict[str, Any]:
    """Google's error body."""
    return {"error": {"code": status.http, "message": message, "status": status.value}}


def refusal(message: str, status: GoogleStatus = GoogleStatus.INVALID_ARGUMENT) -> Refused:
    """A ``Refused`` carrying Google's error body."""
    return Refused(status.http, google_error(status, message), message)


# --- the request's fields (google-genai types.py), by message ---------------------------------

_SCALAR = "scalar"
_OPAQUE = "opaque"
_SCHEMA_MAP = "schema_map"
_LIST = "scalar[]"

_SCHEMA_SCALARS = (
    "type format title description nullable maxItems minItems minProperties maxProperties "
    "minLength maxLength pattern minimum maximum"
)

_MESSAGES: dict[str, dict[str, str]] = {
    "GenerateContentRequest": {
        "model": _SCALAR,
        "contents": "Content[]",
        "systemInstruction": "Content",
        "tools": "Tool[]",
        "toolConfig": "ToolConfig",
        "safetySettings": "SafetySetting[]",
        "generationConfig": "GenerationConfig",
        "cachedContent": _SCALAR,
    },
    "CountTokensRequest": {
        "contents": "Content[]",
        "generateContentRequest": "GenerateContentRequest",
    },
    "Content": {"role": _SCALAR, "parts": "Part[]"},
    "Part": {
        "text": _SCALAR,
        "thought": _SCALAR,
        "thoughtSignature": _SCALAR,
        "functionCall": "FunctionCall",
        "functionResponse": "FunctionResponse",
        **dict.fromkeys(
            ["inlineData", "fileData", "executableCode", "codeExecutionResult"], _OPAQUE
        ),
        **dict.fromkeys(["videoMetadata", "partMetadata", "mediaResolution"], _OPAQUE),
    },
    "FunctionCall": {"id": _SCALAR, "name": _SCALAR, "args": _OPAQUE},
    "FunctionResponse": {
        "id": _SCALAR,
        "name": _SCALAR,
        "response": _OPAQUE,
        "parts": _OPAQUE,
        "willContinue": _SCALAR,
        "scheduling": _SCALAR,
    },
    "Tool": {
        "functionDeclarations": "FunctionDeclaration[]",
        **dict.fromkeys(
            ["googleSearch", "googleSearchRetrieval", "codeExecution", "urlContext"], _OPAQUE
        ),
        **dict.fromkeys(["computerUse", "fileSearch", "googleMaps"], _OPAQUE),
    },
    "FunctionDeclaration": {
        "name": _SCALAR,
        "description": _SCALAR,
        "parameters": "Schema",
        "parametersJsonSchema": _OPAQUE,
        "response": "Schema",
        "responseJsonSchema": _OPAQUE,
        "behavior": _SCALAR,
    },
    "Schema": {
        **dict.fromkeys(_SCHEMA_SCALARS.split(), _SCALAR),
        **dict.fromkeys(["enum", "required", "propertyOrdering"], _LIST),
        "example": _OPAQUE,
        "default": _OPAQUE,
        "properties": _SCHEMA_MAP,
        "items": "Schema",
        "anyOf": "Schema[]",
    },
    "ToolConfig": {
        "functionCallingConfig": "FunctionCallingConfig",
        "retrievalConfig": _OPAQUE,
        "includeServerSideToolInvocations": _SCALAR,
    },
    "FunctionCallingConfig": {"mode": _SCALAR, "allowedFunctionNames": _LIST},
    "SafetySetting": {"category": _SCALAR, "threshold": _SCALAR, "method": _SCALAR},
    "GenerationConfig": {
        **dict.fromkeys(
            (
                "responseMimeType candidateCount maxOutputTokens temperature topP topK seed "
                "presencePenalty frequencyPenalty responseLogprobs logprobs "
                "enableEnhancedCivicAnswers mediaResolution"
            ).split(),
            _SCALAR,
        ),
        "stopSequences": _LIST,
        "responseModalities": _LIST,
        "speechConfig": _OPAQUE,
        "imageConfig": _OPAQUE,
        "responseSchema": "Schema",
        "responseJsonSchema": _OPAQUE,
        "thinkingConfig": "ThinkingConfig",
    },
    "ThinkingConfig": {
        "includeThoughts": _SCALAR,
        "thinkingBudget": _SCALAR,
        "thinkingLevel": _SCALAR,
    },
}

_PART_DATA = (
    "text functionCall functionResponse inlineData fileData executableCode codeExecutionResult"
).split()
"""The fields of a part's ``data`` oneof (types.py ``Part``)."""


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def _at(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _unknown(name: str, path: str) -> str:
    where = f" at '{path}'" if path else ""
    return f'Invalid JSON payload received. Unknown name "{name}"{where}: Cannot find field.'


def _normalize(value: Any, kind: str, path: str, problems: list[str]) -> Any:
    """``value`` with every message field in camelCase; unknown names go to ``problems``.

    ``kind`` is a message name, ``scalar``, ``opaque`` or ``schema_map``; a trailing ``[]``
    marks a repeated field, whose value must be a list (and only such a value may be one).
    """
    item_kind = kind.removesuffix("[]")
    if kind.endswith("[]"):
        if not isinstance(value, list):
            problems.append(f"Invalid value at '{path}' ({kind}), {value!r}")
            return value
        return [
            _normalize(item, item_kind, f"{path}[{i}]", problems) for i, item in enumerate(value)
        ]
    if kind == _OPAQUE or (kind == _SCALAR and not isinstance(value, dict | list)):
        return value
    if isinstance(value, list):
        name = path.rsplit(".", 1)[-1]
        problems.append(
            f"Invalid JSON payload received. Unknown name \"{name}\" at '{path}': Proto field "
            "is not repeating, cannot start list."
        )
        return value
    if not isinstance(value, dict) or kind == _SCALAR:
        problems.append(f"Invalid value at '{path}' ({kind}), {value!r}")
        return value
    if kind == _SCHEMA_MAP:
        return {
            key: _normalize(item, "Schema", f"{path}[{i}].value", problems)
            for i, (key, item) in enumerate(value.items())
        }
    fields = _MESSAGES[kind]
    normalized: dict[str, Any] = {}
    for key, item in value.items():
        name = _camel(key)
        if name not in fields:
            problems.append(_unknown(key, path))
            continue
        normalized[name] = _normalize(item, fields[name], _at(path, _snake(name)), problems)
    return normalized


def parse_body(body: Any, kind: str) -> dict[str, Any]:
    """The request body as ``kind`` with camelCase names, or ``Refused`` as Google words it."""
    if not isinstance(body, dict):
        raise refusal("Invalid JSON payload received. Expected an object.")
    problems: list[str] = []
    normalized = _normalize(body, kind, "", problems)
    if problems:
        raise refusal("\n".join(problems))
    return dict(normalized)


# --- the conversation's structure -------------------------------------------------------------


def _calls(content: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [p for p in content.get("parts", []) if "functionCall" in p]


def _responses(content: Mapping[str, Any]) -> int:
    return sum("functionResponse" in p for p in content.get("parts", []))


def _role(content: Mapping[str, Any]) -> str:
    return str(content.get("role") or "user")


def check_contents(contents: list[dict[str, Any]], where: str) -> None:
    """Roles, parts and each part's data (the checks countTokens makes too)."""
    if not contents:
        raise refusal(f"* {where}.contents: contents is not specified\n")
    for i, content in enumerate(contents):
        if _role(content) not in ("user", "model"):
            raise refusal("Please use a valid role: user, model.")
        parts = content.get("parts") or []
        if not parts:
            raise refusal(f"* {where}.contents[{i}].parts: contents.parts must not be empty.\n")
        for j, part in enumerate(parts):
            if sum(name in part for name in _PART_DATA) != 1:
                raise refusal(
                    f"* {where}.contents[{i}].parts[{j}].data: required oneof field 'data' "
                    "must have one initialized field\n"
                )
            signature = part.get("thoughtSignature")
            if signature is not None and signature not in SKIP_SIGNATURES:
                _decode(signature, f"contents[{i}].parts[{j}].thought_signature")


def _decode(signature: Any, path: str = "thought_signature") -> bytes:
    """The bytes of a base64 value (standard or URL-safe, as proto3 JSON accepts)."""
    try:
        text = str(signature)
        return base64.b64decode(text.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        raise refusal(
            f"Invalid value at '{path}' (TYPE_BYTES), Base64 decoding failed for {signature!r}"
        ) from None


def check_turns(contents: list[dict[str, Any]]) -> None:
    """Function call and response turns in order, one response per call."""
    for i, content in enumerate(contents):
        before = contents[i - 1] if i else None
        calls_before = len(_calls(before)) if before is not None and _role(before) == "model" else 0
        if _calls(content) and (
            _role(content) != "model" or before is None or _role(before) != "user"
        ):
            raise refusal(
                "Please ensure that function call turn comes immediately after a user turn or "
                "after a function response turn."
            )
        if _responses(content) and not calls_before:
            raise refusal(
                "Please ensure that function response turn comes immediately after a function "
                "call turn."
            )
        if calls_before and _responses(content) != calls_before:
            raise refusal(
                "Please ensure that the number of function response parts is equal to the "
                "number of function call parts of the function call turn."
            )


def current_turn_start(contents: list[dict[str, Any]]) -> int:
    """Index of the last user content with standard (non-functionResponse) parts."""
    for i in range(len(contents) - 1, -1, -1):
        content = contents[i]
        if _role(content) == "user" and any("functionResponse" not in p for p in content["parts"]):
            return i
    return 0


class Signed(NamedTuple):
    """What a signature binds: the model and the part's payload."""

    model: str
    payload: Any

    def text(self) -> str:
        """The text the signer signs."""
        return f"{self.model}\n{digest(self.payload)}"


def signed_payload(part: Mapping[str, Any]) -> Any:
    """The part's content a signature covers (a call's name and args, or the text)."""
    call = part.get("functionCall")
    if call is not None:
        return {"name": call.get("name"), "args": call.get("args") or {}}
    return {"text": part.get("text", "")}


# --- the server ---------------------------------------------------------------------------------


class Turn(NamedTuple):
    """One answered request, before it is put on the wire."""

    parts: list[dict[str, Any]]
    finish: str
    usage: dict[str, Any]


class GoogleServer(WireServer):
    """A strict local Gemini API server (see the module docstring for its rules).

    ``with GoogleServer(behaviours={"gemini-3-pro-preview": BEHAVIOURS["schema-agent"]}) as
    server:`` then ``get_model("google/gemini-3-pro-preview", base_url=server.base_url,
    api_key="test-key")``.

    Args:
        host: A loopback address (anything else is refused).
        port: Port to bind (0: any free port).
        behaviours: More models, by name, beside ``BEHAVIOURS``.
        record: Keep every request (``requests``).
        models: Model families by name prefix (default ``DEFAULT_GEMINI_MODELS``).
        cache_min_tokens: The smallest prefix implicit caching stores.
        api_key: The only key accepted (None: any non-empty key).
    """

    base_path = ""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        behaviours: Mapping[str, Behaviour] | None = None,
        record: bool = False,
        models: Sequence[GeminiModel] | None = None,
        cache_min_tokens: int = DEFAULT_CACHE_MIN_TOKENS,
        api_key: str | None = None,
    ) -> None:
        super().__init__(host=host, port=port, behaviours=behaviours, record=record)
        self.models = list(DEFAULT_GEMINI_MODELS if models is None else models)
        self.cache_min_tokens = cache_min_tokens
        self.api_key = api_key

    @property
    def refused(self) -> list[str]:
        """The message of each refused request, in order."""
        return list(self.stats.refused)

    @property
    def cached_tokens(self) -> dict[str, int]:
        """``cachedContentTokenCount`` reported so far, summed per model."""
        return dict(self.stats.cache_read_tokens)

    def family(self, model: str) -> GeminiModel:
        """The family of a model name (the longest matching prefix)."""
        matches = [m for m in self.models if model.startswith(m.prefix)]
        return max(matches, key=lambda m: len(m.prefix), default=_NOT_THINKING)

    def malformed(self, message: str) -> JsonAnswer:
        """Google's answer to a body that is not JSON."""
        text = f"Invalid JSON payload received. {message}."
        return JsonAnswer(400, google_error(GoogleStatus.INVALID_ARGUMENT, text))

    def route(self, request: WireRequest) -> Answer:
        """Authenticate, find the model and method, and answer."""
        match = _PATH.match(request.path)
        if request.method != "POST" or match is None or match["version"] not in API_VERSIONS:
            raise refusal(f"Method not found: {request.path}", GoogleStatus.NOT_FOUND)
        self._authenticate(request)
        model, version = match["model"], match["version"]
        try:
            method = GeminiMethod(match["method"])
        except ValueError:
            raise refusal(f"Method not found: {request.path}", GoogleStatus.NOT_FOUND) from None
        self.stats.request(model)
        if model not in self.behaviours:
            label = "StreamGenerateContent" if method is GeminiMethod.STREAM else method.value
            raise refusal(
                f"models/{model} is not found for API version {version}, or is not supported "
                f"for {label}. Call ListModels to see the list of available models and their "
                "supported methods.",
                GoogleStatus.NOT_FOUND,
            )
        if method is GeminiMethod.COUNT:
            return self._count(request.body)
        body = parse_body(request.body, "GenerateContentRequest")
        turn = self._generate(model, body)
        answer = GeminiAnswer(model, digest(body)[:22], turn.parts, turn.finish, turn.usage)
        if method is GeminiMethod.STREAM:
            chunks = stream_chunks(answer, pieces=halves)
            if request.query.get("alt") == "sse":
                return StreamAnswer([(None, chunk) for chunk in chunks])
            return JsonAnswer(200, chunks)
        return JsonAnswer(200, generate_response(answer))

    def _authenticate(self, request: WireRequest) -> None:
        key = request.headers.get("x-goog-api-key") or request.query.get("key")
        if not key:
            raise refusal(
                "Method doesn't allow unregistered callers (callers without established "
                "identity). Please use API Key or other form of API consumer identity to call "
                "this API.",
                GoogleStatus.PERMISSION_DENIED,
            )
        if self.api_key is not None and key != self.api_key:
            raise refusal("API key not valid. Please pass a valid API key.")

    def _count(self, raw: Any) -> JsonAnswer:
        body = parse_body(raw, "CountTokensRequest")
        request = body.get("generateContentRequest") or {"contents": body.get("contents") or []}
        check_contents(request.get("contents") or [], "CountTokensRequest")
        total = sum(tokens for _, tokens in self._segments(request))
        details = [{"modality": "TEXT", "tokenCount": total}]
        return JsonAnswer(200, {"totalTokens": total, "promptTokensDetails": details})

    def _segments(self, body: Mapping[str, Any]) -> list[tuple[Any, int]]:
        """The prompt's cacheable pieces in order, each with its tokens."""
        head = {k: body[k] for k in ("systemInstruction", "tools", "toolConfig") if k in body}
        pieces: list[Any] = ([head] if head else []) + list(body.get("contents") or [])
        return [(piece, approx_tokens(piece)) for piece in pieces]

    def _cache(self, model: str, body: Mapping[str, Any]) -> tuple[int, int]:
        """Prompt tokens and the tokens read from the implicit cache; stores the prefixes."""
        prefixes: list[tuple[str, int]] = []
        pieces: list[Any] = []
        total = 0
        for piece, tokens in self._segments(body):
            pieces.append(piece)
            total += tokens
            if total >= self.cache_min_tokens:
                prefixes.append((digest([model, pieces]), total))
        read = self.cache.read(prefixes)
        self.cache.write(prefixes)
        return total, read

    def _generate(self, model: str, body: dict[str, Any]) -> Turn:
        contents: list[dict[str, Any]] = body.get("contents") or []
        check_contents(contents, "GenerateContentRequest")
        check_turns(contents)
        family = self.family(model)
        config: dict[str, Any] = body.get("generationConfig") or {}
        thinks = check_thinking(family, config.get("thinkingConfig"))
        check_generation(config)
        tools = tool_infos(body)
        self._check_signatures(model, family, contents)
        reply = self._reply(model, body, tools)
        reasoning = reasoning_text(model, 1 + sum(_role(c) == "model" for c in contents))
        parts, finish = answer_parts(reply, config.get("maxOutputTokens"))
        if thinks:
            self._sign(model, parts)
            if (config.get("thinkingConfig") or {}).get("includeThoughts"):
                parts.insert(0, {"text": reasoning, "thought": True})
        prompt, cached = self._cache(model, body)
        visible = [p for p in parts if not p.get("thought")]
        output = approx_tokens([signed_payload(p) for p in visible])
        thoughts = approx_tokens(reasoning) if thinks else 0
        usage: dict[str, Any] = {
            "promptTokenCount": prompt,
            "candidatesTokenCount": output,
            "totalTokenCount": prompt + output + thoughts,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt}],
        }
        if thoughts:
            usage["thoughtsTokenCount"] = thoughts
        if cached:
            usage["cachedContentTokenCount"] = cached
        self.stats.answer(model, input_tokens=prompt, output_tokens=output + thoughts, read=cached)
        return Turn(parts, finish, usage)

    def _check_signatures(
        self, model: str, family: GeminiModel, contents: list[dict[str, Any]]
    ) -> None:
        start = current_turn_start(contents)
        for i, content in enumerate(contents):
            if _role(content) != "model":
                continue
            for part in content["parts"]:
                signature = part.get("thoughtSignature")
                if signature is None or signature in SKIP_SIGNATURES:
                    continue
                expected = self.signer.sign(Signed(model, signed_payload(part)).text())
                if not hmac.compare_digest(_decode(expected), _decode(signature)):
                    raise refusal("Corrupted thought signature.")
            calls = _calls(content)
            if family.strict_signatures and i > start and calls:
                first = calls[0]
                if "thoughtSignature" not in first:
                    name = first["functionCall"].get("name")
                    raise refusal(
                        "Function call is missing a thought_signature in functionCall parts. "
                        "This is required for tools to work correctly, and missing "
                        "thought_signature may lead to degraded model performance. Additional "
                        f"data, function call `default_api:{name}` , position {i + 1}. Please "
                        "refer to https://ai.google.dev/gemini-api/docs/thought-signatures for "
                        "more details."
                    )

    def _reply(self, model: str, body: Mapping[str, Any], tools: list[ToolInfo]) -> Reply:
        system = body.get("systemInstruction") or {}
        system_text = "\n".join(str(p.get("text", "")) for p in system.get("parts") or [])
        contents = body.get("contents") or []
        messages: list[ChatMessage] = run_async(
            lambda: messages_from_google(cast(Any, contents), system_text or None, model)
        )
        calling = (body.get("toolConfig") or {}).get("functionCallingConfig") or {}
        mode = str(calling.get("mode") or "AUTO").upper()
        allowed = calling.get("allowedFunctionNames")
        if mode == "NONE":
            tools = []
        elif allowed:
            tools = [t for t in tools if t.name in allowed]
        return scripted_reply(self.behaviours, model, messages, tools)

    def _sign(self, model: str, parts: list[dict[str, Any]]) -> None:
        """Sign the first function call, or else the last part (docs: Thought Signatures)."""
        calls = [p for p in parts if "functionCall" in p]
        part = calls[0] if calls else parts[-1]
        part["thoughtSignature"] = self.signer.sign(Signed(model, signed_payload(part)).text())


def answer_parts(reply: Reply, max_output: Any) -> tuple[list[dict[str, Any]], str]:
    """The reply as parts, and the finish reason (``STOP``, or ``MAX_TOKENS`` if cut)."""
    parts: list[dict[str, Any]] = [{"text": reply.content}] if reply.content else []
    parts += [{"functionCall": {"name": name, "args": args}} for name, args in reply.tool_calls]
    if not parts:
        parts = [{"text": ""}]
    if max_output is not None and approx_tokens([signed_payload(p) for p in parts]) > max_output:
        return [{"text": reply.content[: int(max_output) * 4]}], "MAX_TOKENS"
    return parts, "STOP"


def check_thinking(family: GeminiModel, config: Mapping[str, Any] | None) -> bool:
    """Refuse a thinking config the model does not take; whether the model thinks."""
    if family.thinking is ThinkingControl.NONE:
        if config is not None:
            raise refusal("thinking_config is not supported.")
        return False
    config = config or {}
    budget, level = config.get("thinkingBudget"), config.get("thinkingLevel")
    if budget is not None and level is not None:
        raise refusal("You can only set only one of thinking budget and thinking level.")
    if level is not None:
        if family.thinking is ThinkingControl.BUDGET:
            raise refusal("Thinking level is not supported for this model.")
        name = str(level).upper()
        if name not in {lv.value for lv in family.levels}:
            raise refusal(f"Thinking level {name} is not supported for this model.")
    if budget is None or budget == -1:
        return True
    if budget == 0:
        if not family.can_disable:
            raise refusal("Budget 0 is invalid. This model only works in thinking mode.")
        return False
    low, high = family.budget_range
    if not isinstance(budget, int) or not low <= budget <= high:
        raise refusal(f"The thinking budget ({budget}) is invalid.")
    return True


def check_generation(config: Mapping[str, Any]) -> None:
    """Refuse generation settings the API refuses (schemas, output limit, temperature)."""
    schema, json_schema = config.get("responseSchema"), config.get("responseJsonSchema")
    where = "* GenerateContentRequest.generation_config"
    if schema is not None and json_schema is not None:
        raise refusal(
            f"{where}.response_schema: response_schema must be omitted when "
            "response_json_schema is set.\n"
        )
    if (schema is not None or json_schema is not None) and config.get(
        "responseMimeType"
    ) != "application/json":
        raise refusal(
            f"{where}.response_mime_type: response_mime_type must be application/json when a "
            "response schema is set.\n"
        )
    limit = config.get("maxOutputTokens")
    if limit is not None and (type(limit) is not int or limit <= 0):
        raise refusal(f"{where}.max_output_tokens: max_output_tokens must be positive.\n")
    temperature = config.get("temperature")
    if temperature is not None and (
        type(temperature) not in (int, float) or not 0 <= temperature <= 2
    ):
        raise refusal(f"{where}.temperature: temperature must be between 0 and 2.\n")


def tool_infos(body: Mapping[str, Any]) -> list[ToolInfo]:
    """The declared functions as Inspect tools; refuses a missing or invalid name."""
    infos: list[ToolInfo] = []
    for t, tool in enumerate(body.get("tools") or []):
        for d, declaration in enumerate(tool.get("functionDeclarations") or []):
            where = f"* GenerateContentRequest.tools[{t}].function_declarations[{d}].name"
            name = str(declaration.get("name") or "")
            if not name:
                raise refusal(f"{where}: Name cannot be empty.\n")
            if not _FUNCTION_NAME.match(name):
                raise refusal(
                    f"{where}: Invalid function name. Must start with a letter or an "
                    "underscore. Must be a-z, A-Z, 0-9, or contain underscores, dots, colons "
                    "and dashes, with a maximum length of 64.\n"
                )
            schema = declaration.get("parametersJsonSchema") or _lower_types(
                declaration.get("parameters") or {}
            )
            try:
                params = ToolParams.model_validate(schema) if schema else ToolParams()
            except ValidationError:
                params = ToolParams()
            infos.append(
                ToolInfo(
                    name=name, description=declaration.get("description", ""), parameters=params
                )
            )
    return infos


def _lower_types(schema: Mapping[str, Any]) -> dict[str, Any]:
    """An OpenAPI ``Schema`` (``"type": "OBJECT"``) with JSON Schema's lower-case types."""
    lowered = dict(schema)
    if "type" in schema:
        lowered["type"] = str(schema["type"]).lower()
    if "items" in schema:
        lowered["items"] = _lower_types(schema["items"])
    if "anyOf" in schema:
        lowered["anyOf"] = [_lower_types(s) for s in schema["anyOf"]]
    if "properties" in schema:
        lowered["properties"] = {k: _lower_types(v) for k, v in schema["properties"].items()}
    return lowered
