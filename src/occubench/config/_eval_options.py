"""Eval options: how a run is carried out, never what it computes.

Concurrency, retries, timeouts and log buffering change how fast a run goes and how
it survives a flaky endpoint, not its results; they are left out of a run's identity
(its default log folder and a sweep's digest).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from occubench.defaults import (
    DEFAULT_ATTEMPT_TIMEOUT,
    DEFAULT_FAST_PATH,
    DEFAULT_LOG_MODEL_API,
    DEFAULT_LOG_REALTIME,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_RETRIES,
    DEFAULT_REASONING_SUMMARY,
    DEFAULT_SAMPLE_RETRIES,
    DEFAULT_SAMPLES_PER_CONNECTION,
    DEFAULT_TIMEOUT,
)
from occubench.roles import Role

if TYPE_CHECKING:
    from inspect_ai.model import GenerateConfig


def _share(total: int, count: int) -> int:
    """An even share of ``total`` over ``count`` parts, rounded up."""
    return -(-total // count)


class EvalOptions(BaseModel):
    """How Inspect carries out a run (``occubench run`` options, a sweep's ``options``)."""

    model_config = ConfigDict(extra="forbid")

    max_connections: int = Field(
        default=DEFAULT_MAX_CONNECTIONS,
        ge=1,
        description="Concurrent requests per model at most: agent and simulator (the verifier "
        "gets this x votes); on the fast path the number in flight adapts below it to the "
        "endpoint's rate limits.",
    )
    max_samples: int | None = Field(
        default=None,
        ge=1,
        description=f"Samples run at once (default: {DEFAULT_SAMPLES_PER_CONNECTION} x "
        "max-connections).",
    )
    log_realtime: bool = Field(
        default=DEFAULT_LOG_REALTIME,
        description="Stream running samples to the log (live inspect view; costs CPU).",
    )
    log_model_api: bool = Field(
        default=DEFAULT_LOG_MODEL_API,
        description="Keep every model call's raw request and response in the log (failed "
        "calls are kept anyway; costs CPU and space).",
    )
    log_buffer: int | None = Field(
        default=None,
        ge=1,
        description="Finished samples buffered before each log write (default: Inspect's).",
    )
    retry_on_error: int = Field(
        default=DEFAULT_SAMPLE_RETRIES, ge=0, description="Retries of an errored sample."
    )
    replay_calls: bool = Field(
        default=True,
        description="A restarted sample replays the model calls its earlier attempt made "
        "instead of paying for them again.",
    )
    max_retries: int = Field(
        default=DEFAULT_MAX_RETRIES,
        ge=0,
        description="Retries of a model call (429, 5xx, timeouts), after the SDK's.",
    )
    timeout: int = Field(
        default=DEFAULT_TIMEOUT, ge=1, description="Seconds for a model call and its retries."
    )
    attempt_timeout: int = Field(
        default=DEFAULT_ATTEMPT_TIMEOUT,
        ge=1,
        description="Seconds for one attempt of a model call before a retry.",
    )
    fast_path: bool = Field(
        default=DEFAULT_FAST_PATH,
        description="Send OpenAI-compatible models' requests (openai-api, vllm) on "
        "occubench's lean path: the same bytes, about half the CPU, requests in flight "
        "adapted to the endpoint's rate limits (off: Inspect's own path through the SDK).",
    )
    budget: float | None = Field(
        default=None,
        ge=0,
        description="Dollars the run may spend (needs a price table, --prices, and a "
        "max_tokens for every role): no model call that could pass it is made, no sample it "
        "could not pay for starts. Shards get an even share each.",
    )

    def samples_at_once(self, shards: int = 1) -> int:
        """Samples in flight in one of ``shards`` shards of the run.

        The run's total is as given, else ``DEFAULT_SAMPLES_PER_CONNECTION`` x
        connections; each shard gets an even share, rounded up.

        A sample waits on the agent or the simulator about half the time each, so twice
        as many samples as connections keep both pools busy.
        """
        total = self.max_samples or DEFAULT_SAMPLES_PER_CONNECTION * self.max_connections
        return _share(total, shards)

    def generate_config(self, role: Role, votes: int = 1, shards: int = 1) -> GenerateConfig:
        """Connections, retries and timeouts of one model in one of ``shards`` shards.

        ``max_connections`` is the run's total: each shard gets an even share, rounded
        up, so N shards put about the load of one process on a rate-limited API.

        The verifier gets ``votes`` times the connections: the k votes of a sample run at
        once, so a judge round of ``max_connections`` samples is one round of latency.

        ``reasoning_summary`` is ``DEFAULT_REASONING_SUMMARY`` unless a role sets it (no
        uncounted probe request; see the constant).
        """
        from inspect_ai.model import GenerateConfig  # Inspect: when a run starts, not for --help

        connections = self.max_connections * (votes if role is Role.VERIFIER else 1)
        return GenerateConfig(
            max_connections=_share(connections, shards),
            max_retries=self.max_retries,
            timeout=self.timeout,
            attempt_timeout=self.attempt_timeout,
            reasoning_summary=DEFAULT_REASONING_SUMMARY,
        )
