"""Model providers of our own on Inspect's model API (``occubench-openai/<service>/<model>``)."""

from occubench.providers._lean_openai import PROVIDER, LeanOpenAIAPI, model_calls_kept

__all__ = ["PROVIDER", "LeanOpenAIAPI", "model_calls_kept"]
