"""The preflight: every model of a run resolved and called once before the first sample.

A missing API key, an unknown provider or model, or an endpoint that does not answer
would otherwise surface minutes later as errored samples (or as a long traceback): the
preflight finds them first and says, in one line per model, which role it plays and what
to set. The request is tiny (a few tokens), retried once after a transient failure
(``DEFAULT_PREFLIGHT_RETRIES``, through the resilient model every run uses), and made
outside the eval, so it is in no log. Its error text is redacted by the one rule
(``occubench.redaction``): a provider may quote the key it was sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import re
import time
from collections.abc import Iterable, Mapping
from typing import NamedTuple

from inspect_ai.model import GenerateConfig, Model, get_model
from pydantic import BaseModel, Field

from occubench.calls import resilient
from occubench.config import RunConfig
from occubench.defaults import (
    DEFAULT_PREFLIGHT_RETRIES,
    DEFAULT_PREFLIGHT_TIMEOUT,
    DEFAULT_REASONING_SUMMARY,
)
from occubench.errors import UsageError
from occubench.providers import fast_path
from occubench.redaction import redact
from occubench.roles import Role

PREFLIGHT_PROMPT = "Reply with the word OK."
"""The tiny request each model is sent."""

UNCALLED_PROVIDERS = ("none",)
"""Providers whose models are never called (``none/none``, an agent program's run)."""

_MARKUP = re.compile(r"\[/?[a-z ]+\]")
_VARIABLE = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_(?:API_KEY|BASE_URL|TOKEN|KEY)\b")


SIMULATOR_ROLES = (Role.SIMULATOR, Role.SIMULATOR_FALLBACK)
"""The roles that answer tool calls: a replay of a world never asks them."""


def preflight_models(models: Mapping[Role, str], config: RunConfig) -> dict[Role, str]:
    """The models of a run its preflight tries: those its samples may ask.

    A replay of a world (``RunConfig.asks_simulator``) never asks the simulator, so its
    model is not tried: a gold world's person (``human/NAME``) cannot answer a test
    request, and a replayed world needs no simulator endpoint.
    """
    if config.asks_simulator():
        return dict(models)
    return {role: model for role, model in models.items() if role not in SIMULATOR_ROLES}


class PreflightFailure(BaseModel):
    """One model of a run that cannot be used."""

    roles: list[Role] = Field(description="The roles that model plays in the run.")
    model: str = Field(description="The Inspect model name.")
    problem: str = Field(description="What is wrong, in a few words.")
    fix: str = Field(description="What to do: the variable to set, the name to check.")

    def line(self) -> str:
        """The failure as one line of text (no markup)."""
        roles = ", ".join(role.value for role in self.roles)
        return f"{roles} model {self.model}: {self.problem}; {self.fix}"


class Remedy(NamedTuple):
    """What is wrong with a model, in a few words, and what to do about it."""

    problem: str
    fix: str


def _provider(model: str) -> str:
    return model.split("/", 1)[0]


def _service_variables(model: str) -> tuple[str, str]:
    """The key and base-URL variables Inspect reads for a model (best guess by provider)."""
    parts = model.split("/")
    service = parts[1] if parts[0] == "openai-api" and len(parts) > 2 else parts[0]
    prefix = re.sub(r"[^A-Za-z0-9]", "_", service).upper()
    return f"{prefix}_API_KEY", f"{prefix}_BASE_URL"


def _plain(text: str) -> str:
    """An exception's text on one line, without Inspect's rich markup or any secret."""
    return redact(" ".join(_MARKUP.sub("", text).split()))


def diagnose(model: str, error: BaseException) -> Remedy:
    """What is wrong with a model that failed to build or to answer, and the fix."""
    text = _plain(str(error))
    name = type(error).__name__
    key_var, url_var = _service_variables(model)
    named = _VARIABLE.findall(text)
    lowered = text.lower()
    if "api_key" in lowered or "api key" in lowered or name == "AuthenticationError":
        if name == "AuthenticationError" or "invalid" in lowered or "incorrect" in lowered:
            return Remedy("the API key was refused", f"check {named[0] if named else key_var}")
        return Remedy("no API key", f"set {named[0] if named else key_var}")
    if "not recognized" in lowered:
        return Remedy("unknown model provider", "check the name (Inspect's provider/model)")
    if "requires optional dependencies" in lowered or "pip install" in lowered:
        found = re.search(r"pip install ([\w\-\[\]., ]+)", text)
        return Remedy(
            "its provider's package is not installed",
            f"pip install {found.group(1).strip()}" if found else "install the provider's package",
        )
    if name in ("NotFoundError",) or "model_not_found" in lowered or "does not exist" in lowered:
        return Remedy("the endpoint does not know this model", "check the model name")
    if "base_url" in lowered or "base url" in lowered:
        return Remedy("no endpoint URL", f"set {named[0] if named else url_var}")
    if name in ("APIConnectionError", "ConnectError", "ConnectionError", "APITimeoutError") or (
        "connect" in lowered or "timed out" in lowered or "timeout" in lowered
    ):
        return Remedy("the endpoint did not answer", f"check that it is up and {url_var}")
    if isinstance(error, UsageError) and _provider(model) == "occubench":
        return Remedy("unknown scripted model", text.split("; ", 1)[-1])
    failed = f"the test request failed ({name}: {text[:160]})"
    return Remedy(failed, "check the model and its endpoint")


class PreflightReport(BaseModel):
    """What the preflight found: the unusable models, and how long the others took."""

    failures: list[PreflightFailure] = Field(description="One per unusable model.")
    latency: float | None = Field(
        default=None,
        description="Seconds the fastest answered model took for its test request (None: "
        "no request was answered): the least a call takes, whatever else this machine "
        "is doing.",
    )


def _failure(model: str, roles: list[Role], error: BaseException) -> PreflightFailure:
    if isinstance(error, TimeoutError):
        _, url_var = _service_variables(model)
        problem, fix = "the endpoint did not answer in time", f"check that it is up and {url_var}"
    else:
        problem, fix = diagnose(model, error)
    return PreflightFailure(roles=roles, model=model, problem=problem, fix=fix)


class Preflight:
    """Every model of a run, built (its provider imported, its key read), to be checked.

    Building comes first and sends nothing, so that a run can start its shard processes
    right after it, with the providers imported, while ``check`` waits on the endpoints.

    Args:
        models: Roles and their models (``preflight``'s).
        timeout: Seconds each model has to answer.
        fast: Put the models on the fast path, as the run will
            (``occubench.providers.fast_path``): the request is checked on the transport
            the run uses, and the OpenAI SDK's client is not built for it.
    """

    def __init__(
        self,
        models: Mapping[Role, str] | Iterable[tuple[Role, str]],
        timeout: float = DEFAULT_PREFLIGHT_TIMEOUT,
        fast: bool = True,
    ) -> None:
        pairs = models.items() if isinstance(models, Mapping) else models
        self.roles: dict[str, list[Role]] = {}
        for role, model in pairs:
            if role not in self.roles.setdefault(model, []):
                self.roles[model].append(role)
        self.timeout = timeout
        self.config = GenerateConfig(
            max_retries=DEFAULT_PREFLIGHT_RETRIES,
            timeout=int(timeout),
            attempt_timeout=int(timeout),
            reasoning_summary=DEFAULT_REASONING_SUMMARY,  # no probe request of Inspect's
        )
        self.built: dict[str, Model | PreflightFailure] = {}
        # Inspect prints its version and hooks once per process, as the first model is
        # built: here that would split the preflight's one line from the command's output
        with contextlib.redirect_stdout(io.StringIO()):
            for model, roles in self.roles.items():
                try:
                    built = get_model(model, config=self.config, memoize=False)
                    if fast:
                        fast_path(built)
                    self.built[model] = resilient(built, replay=False)
                except Exception as error:  # noqa: BLE001 - any failure is reported
                    self.built[model] = _failure(model, roles, error)

    async def _check(self, model: str) -> PreflightFailure | float | None:
        """The model's failure, or the seconds its request took (None: never called)."""
        built = self.built[model]
        if isinstance(built, PreflightFailure):
            return built
        if _provider(model) in UNCALLED_PROVIDERS:
            return None
        config = self.config.merge(GenerateConfig(max_tokens=16))
        start = time.perf_counter()
        try:
            await asyncio.wait_for(built.generate(PREFLIGHT_PROMPT, config=config), self.timeout)
        except Exception as error:  # noqa: BLE001 - any failure is reported, never raised
            return _failure(model, self.roles[model], error)
        return time.perf_counter() - start

    def check(self) -> PreflightReport:
        """Send each model (once, however many roles it plays) its tiny request."""

        async def check_all() -> list[PreflightFailure | float | None]:
            return list(await asyncio.gather(*(self._check(m) for m in self.roles)))

        with contextlib.redirect_stdout(io.StringIO()):
            checked = asyncio.run(check_all())
        times = [c for c in checked if isinstance(c, float)]
        return PreflightReport(
            failures=[c for c in checked if isinstance(c, PreflightFailure)],
            latency=min(times, default=None),
        )


def preflight(
    models: Mapping[Role, str] | Iterable[tuple[Role, str]],
    timeout: float = DEFAULT_PREFLIGHT_TIMEOUT,
) -> list[PreflightFailure]:
    """Resolve every model and send each (once, however many roles it plays) a tiny request.

    ``models`` maps roles to models, or lists (role, model) pairs (a sweep's models play
    several roles). Models that are never called (``UNCALLED_PROVIDERS``) are resolved
    only. Returns the failures, one per model; empty when every model answered.
    """
    return Preflight(models, timeout).check().failures
