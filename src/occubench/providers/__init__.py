"""Model providers of our own on Inspect's model API, and the lean path for Inspect's.

``occubench-openai/<service>/<model>`` is the lean OpenAI-compatible provider;
``fast_path`` puts Inspect's ``openai-api`` and ``vllm`` models on the same lean path.
``model_wire`` says which API a model speaks and ``continuity_kept`` what reasoning that
API needs sent back. ``provider_probe`` reads what Inspect's providers send for a generate
config; ``provider_name``, ``service_variables`` and ``PROVIDER_PACKAGES`` say what a model
name and a failure's traceback tell of the provider.
"""

from occubench.providers._fast_path import fast_path, lean_class
from occubench.providers._lean_openai import PROVIDER, LeanOpenAIAPI, model_calls_kept
from occubench.providers._names import PROVIDER_PACKAGES, provider_name, service_variables
from occubench.providers._requests import (
    EFFORT_FIELDS,
    REASONING_FIELDS,
    ProviderProbe,
    Request,
    provider_probe,
)
from occubench.providers._wire import (
    Wire,
    continuity_kept,
    model_wire,
    release_message,
    release_stop_reason,
)

__all__ = [
    "EFFORT_FIELDS",
    "PROVIDER",
    "PROVIDER_PACKAGES",
    "REASONING_FIELDS",
    "ProviderProbe",
    "Request",
    "provider_name",
    "provider_probe",
    "service_variables",
    "LeanOpenAIAPI",
    "Wire",
    "continuity_kept",
    "fast_path",
    "lean_class",
    "model_calls_kept",
    "model_wire",
    "release_message",
    "release_stop_reason",
]
