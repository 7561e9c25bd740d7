"""What a model's name and a failure's traceback say about its provider.

- ``provider_name``: the provider part of an Inspect model name (``openai/gpt-5``: openai);
- ``service_variables``: the key and base-URL variables Inspect reads for a model, a
  best guess by provider (``openai-api/<service>/<model>`` reads ``<SERVICE>_API_KEY``);
- ``PROVIDER_PACKAGES``: the top-level packages of the providers' SDKs and their
  transports, whose exceptions (or innermost frames) are model API failures; the
  knowledge ``occubench.errors.error_source`` is given to tell them from the harness's.
"""

from __future__ import annotations

import re

PROVIDER_PACKAGES = (
    "openai",
    "anthropic",
    "google",
    "httpx",
    "httpcore",
    "aiohttp",
    "botocore",
    "tenacity",
)
"""Top-level packages whose exceptions (or innermost frames) are model API failures."""

OPENAI_API_PROVIDER = "openai-api"
"""Inspect's provider of any OpenAI-compatible service: ``openai-api/<service>/<model>``."""


def provider_name(model: str) -> str:
    """The provider of an Inspect model name: its part before the first ``/``."""
    return model.split("/", 1)[0]


def service_variables(model: str) -> tuple[str, str]:
    """The key and base-URL variables Inspect reads for a model (best guess by provider)."""
    parts = model.split("/")
    service = parts[1] if parts[0] == OPENAI_API_PROVIDER and len(parts) > 2 else parts[0]
    prefix = re.sub(r"[^A-Za-z0-9]", "_", service).upper()
    return f"{prefix}_API_KEY", f"{prefix}_BASE_URL"
