"""Model providers of our own, the lean path for Inspect's, and each wire's shapes.

``occubench-openai/<service>/<model>`` is the lean OpenAI-compatible provider;
``fast_path`` puts Inspect's ``openai-api`` and ``vllm`` models on the same lean path.
``model_wire`` says which API a model speaks and ``continuity_kept`` what reasoning that
API needs sent back. One module per wire (Anthropic Messages, OpenAI Responses, chat
completions, Gemini) holds that wire's answer shapes and tells a whole answer as the
events of its stream; ``sse`` frames any stream (the SDKs' types are read for type
checking only). ``provider_probe`` reads what Inspect's providers send for a generate
config; ``provider_name``, ``service_variables`` and ``PROVIDER_PACKAGES`` say what a
model name and a failure's traceback tell of the provider. The names that need Inspect
(the lean provider, the fast path, ``Wire``) load with their module on first use, so
that a command's ``--help`` imports no model library.
"""

from typing import TYPE_CHECKING

from occubench.lazy import lazy_names
from occubench.providers._chat_api import (
    FunctionCall,
    completion_body,
    completion_chunks,
    function_calls,
    usage_asked,
)
from occubench.providers._gemini_api import GeminiAnswer, generate_response, stream_chunks
from occubench.providers._messages_api import THINKING_FIELDS, message_blocks, message_events
from occubench.providers._names import PROVIDER_PACKAGES, provider_name, service_variables
from occubench.providers._requests import (
    EFFORT_FIELDS,
    REASONING_FIELDS,
    ProviderProbe,
    Request,
    provider_probe,
)
from occubench.providers._responses_api import assistant_text, response_events
from occubench.providers._sse import Event, Pieces, halves, sse, whole

if TYPE_CHECKING:
    from occubench.providers._fast_path import fast_path, lean_class
    from occubench.providers._lean_openai import PROVIDER, LeanOpenAIAPI, model_calls_kept
    from occubench.providers._wire import (
        Wire,
        continuity_kept,
        model_wire,
        release_message,
        release_stop_reason,
    )

__getattr__ = lazy_names(
    __name__,
    {
        "fast_path": "_fast_path",
        "lean_class": "_fast_path",
        "PROVIDER": "_lean_openai",
        "LeanOpenAIAPI": "_lean_openai",
        "model_calls_kept": "_lean_openai",
        "Wire": "_wire",
        "continuity_kept": "_wire",
        "model_wire": "_wire",
        "release_message": "_wire",
        "release_stop_reason": "_wire",
    },
)

__all__ = [
    "EFFORT_FIELDS",
    "Event",
    "FunctionCall",
    "GeminiAnswer",
    "LeanOpenAIAPI",
    "PROVIDER",
    "PROVIDER_PACKAGES",
    "Pieces",
    "ProviderProbe",
    "REASONING_FIELDS",
    "Request",
    "THINKING_FIELDS",
    "Wire",
    "assistant_text",
    "completion_body",
    "completion_chunks",
    "continuity_kept",
    "fast_path",
    "function_calls",
    "generate_response",
    "halves",
    "lean_class",
    "message_blocks",
    "message_events",
    "model_calls_kept",
    "model_wire",
    "provider_name",
    "provider_probe",
    "release_message",
    "release_stop_reason",
    "response_events",
    "service_variables",
    "sse",
    "stream_chunks",
    "usage_asked",
    "whole",
]
