"""Local servers for trying settings offline and for tests, bound to loopback only.

``ScriptedOpenAIServer`` is OpenAI-compatible and can be flaky, rate-limited and recording
(run it alone with ``python -m occubench.testing.openai_server``). The strict wire
servers speak each provider's own API and refuse, with its own error, what it refuses:
``AnthropicServer`` (Messages), ``GoogleServer`` (generateContent), ``ResponsesServer``
(OpenAI Responses) and ``ReasoningChatServer`` (OpenAI-compatible chat as DeepSeek, Kimi,
GLM, MiniMax and Qwen speak it). All of them run on one HTTP stack, ``LocalServer``
(``occubench.testing._server``), whose hooks (failures, holds, rate limits) any of them
can use; they take each wire's answer shapes and streams from ``occubench.providers``.
``WIRE_CASES`` puts a run's three roles on one wire.
"""

from occubench.testing._anthropic_server import ADAPTIVE_MODEL, AnthropicServer, ModelSupport
from occubench.testing._cases import WIRE_CASES, WireCase, WireName
from occubench.testing._google_server import DEFAULT_GEMINI_MODELS, GeminiModel, GoogleServer
from occubench.testing._hooks import TRANSIENT_KINDS, FailureKind, Flakiness, HardFailure, Hold
from occubench.testing._openai_server import ScriptedOpenAIServer, ServerStats
from occubench.testing._rate_limits import RateLimiter, RateLimits
from occubench.testing._reasoning_chat_server import ChatDialect, ReasoningChatServer
from occubench.testing._responses_server import ResponsesServer
from occubench.testing._server import LocalServer, WireServer, WireStats

__all__ = [
    "ADAPTIVE_MODEL",
    "DEFAULT_GEMINI_MODELS",
    "TRANSIENT_KINDS",
    "WIRE_CASES",
    "AnthropicServer",
    "ChatDialect",
    "FailureKind",
    "Flakiness",
    "GeminiModel",
    "GoogleServer",
    "HardFailure",
    "Hold",
    "LocalServer",
    "ModelSupport",
    "RateLimiter",
    "RateLimits",
    "ReasoningChatServer",
    "ResponsesServer",
    "ScriptedOpenAIServer",
    "ServerStats",
    "WireCase",
    "WireName",
    "WireServer",
    "WireStats",
]
