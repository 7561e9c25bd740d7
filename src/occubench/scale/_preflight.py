"""The preflight: every model of a run tried before the first sample, on its own wire.

A missing API key, an unknown provider or model, an endpoint that does not answer, or a
setting the provider refuses would otherwise surface minutes later as errored samples,
or, under the paper protocol, as samples graded on an agent API error. The preflight
finds them first and says, in one line per model, which role it plays, the settings it
was tried with and what to do.

Each model is tried as the run calls it, per role: with the role's generation settings
and token limit (``occubench.config.role_settings``), and, for the agent, with a tool.
It is a two-turn round trip: a first turn (for the agent, a request to call the tool),
then the answer sent back as the run's loop sends it (``release_message`` under the
paper protocol: the reasoning the wire needs and nothing more), with the tool's result,
and a second turn.
A run and a sweep build it alike, from their runs (``run_calls``): each run's models with
its roles' settings and its protocol's way of sending an answer back.
The first turn is ``check``; the second, ``follow_up``, can run while the run starts
(``occubench run`` does: a refusal stops it, ``cli.run``). Requests are retried once
after a transient failure (``DEFAULT_PREFLIGHT_RETRIES``, through the resilient model
every run uses) and made outside the eval, so they are in no log; the estimate counts
their tokens. The error text is redacted by the one rule (``occubench.redaction``): a
provider may quote the key it was sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import re
import signal
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    Model,
    get_model,
)
from inspect_ai.tool import ToolInfo, ToolParam, ToolParams
from pydantic import BaseModel, Field

from occubench.calls import TRANSPORT_SETTINGS, failure_text, refusal_status, resilient
from occubench.config import RunConfig, protocol_points, role_settings
from occubench.defaults import (
    DEFAULT_PREFLIGHT_RETRIES,
    DEFAULT_PREFLIGHT_TIMEOUT,
    DEFAULT_REASONING_SUMMARY,
    PREFLIGHT_TOOL_NAME,
)
from occubench.errors import UsageError
from occubench.providers import (
    fast_path,
    model_wire,
    provider_name,
    release_message,
    service_variables,
)
from occubench.redaction import redact
from occubench.roles import Role
from occubench.scale._interrupt import Interruption
from occubench.scale._spec import RunSpec

PREFLIGHT_PROMPT = "Reply with the word OK."
"""The first request of a role called without tools, and every second turn's."""

PREFLIGHT_TOOL = ToolInfo(
    name=PREFLIGHT_TOOL_NAME,
    description="Echo a word back.",
    parameters=ToolParams(
        properties={"word": ToolParam(type="string", description="The word to echo.")},
        required=["word"],
    ),
)
"""The tool the agent's first turn is offered."""

AGENT_PROMPT = f"Call the tool {PREFLIGHT_TOOL_NAME} once with the word OK."
"""The agent's first request."""


UNCALLED_PROVIDERS = ("none",)
"""Providers whose models are never called (``none/none``, an agent program's run)."""

_MARKUP = re.compile(r"\[/?[a-z ]+\]")
_VARIABLE = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_(?:API_KEY|BASE_URL|TOKEN|KEY)\b")


WORLD_ROLES = (Role.SIMULATOR, Role.SIMULATOR_FALLBACK, Role.USER)
"""The roles a world answers (tool calls, a user's turns): a replay never asks them."""


def preflight_models(models: Mapping[Role, str], config: RunConfig) -> dict[Role, str]:
    """The models of a run its preflight tries: those its samples may ask.

    A replay of a world (``RunConfig.asks_simulator``) never asks the simulator or the
    user, so their models are not tried: a gold world's person (``human/NAME``) cannot
    answer a test request, and a replayed world needs no simulator or user endpoint.
    """
    if config.asks_simulator():
        return dict(models)
    return {role: model for role, model in models.items() if role not in WORLD_ROLES}


class PreflightFailure(BaseModel):
    """One model of a run that cannot be used."""

    roles: list[Role] = Field(description="The roles that model plays in the run.")
    model: str = Field(description="The Inspect model name.")
    problem: str = Field(description="What is wrong, in a few words.")
    fix: str = Field(description="What to do: the variable to set, the name to check.")
    settings: str = Field(
        default="", description="The settings it was tried with (empty: none of the role's)."
    )

    def line(self) -> str:
        """The failure as one line of text (no markup)."""
        roles = ", ".join(role.value for role in self.roles)
        tried = f" (with {self.settings})" if self.settings else ""
        return f"{roles} model {self.model}{tried}: {self.problem}; {self.fix}"


class Remedy(NamedTuple):
    """What is wrong with a model, in a few words, and what to do about it."""

    problem: str
    fix: str


def _plain(text: str) -> str:
    """An exception's text on one line, without Inspect's rich markup or any secret."""
    return redact(" ".join(_MARKUP.sub("", text).split()))


def diagnose(model: str, error: BaseException) -> Remedy:
    """What is wrong with a model that failed to build or to answer, and the fix."""
    text = _plain(failure_text(error).split(": ", 1)[-1])
    name = type(error).__name__
    key_var, url_var = service_variables(model)
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
    if isinstance(error, UsageError) and provider_name(model) == "occubench":
        return Remedy("unknown scripted model", text.split("; ", 1)[-1])
    failed = f"the test request failed ({_plain(failure_text(error))[:300]})"
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


def settings_text(config: GenerateConfig) -> str:
    """The generation settings a config sets, as ``name=value`` words (transport left out)."""
    given = config.model_dump(exclude_none=True, exclude=set(TRANSPORT_SETTINGS))
    return ", ".join(f"{name}={value}" for name, value in given.items())


def _failure(
    model: str, roles: list[Role], error: BaseException, settings: str = "", turn: int = 1
) -> PreflightFailure:
    if isinstance(error, TimeoutError):
        _, url_var = service_variables(model)
        problem, fix = "the endpoint did not answer in time", f"check that it is up and {url_var}"
    else:
        problem, fix = diagnose(model, error)
        if turn == 2:  # it answered once: the wire refused how the run goes on
            problem = problem.replace("the test request failed", "the second turn was refused")
            fix = "check the role's settings (or --carry-reasoning)"
        elif settings and refusal_status(error) is not None:  # refused as the run would ask
            problem = problem.replace("the test request failed", "the request was refused")
            fix = "check the role's settings"
    return PreflightFailure(roles=roles, model=model, problem=problem, fix=fix, settings=settings)


class RoleCall(NamedTuple):
    """One model in one role, as a run calls it: what the preflight tries."""

    role: Role
    model: str
    config: GenerateConfig
    """The role's generation settings and token limit (``occubench.config.role_settings``)."""
    carry_reasoning: bool = True
    """Send an answer back whole (the ``occubench`` protocol); otherwise as the release
    does (``release_message``)."""
    fast: bool = True
    """On the fast path, as the run puts it (``occubench.providers.fast_path``): the
    requests are checked on the transport the run uses."""


def role_calls(
    models: Mapping[Role, str] | Iterable[tuple[Role, str]],
    settings: Mapping[Role, GenerateConfig] | None = None,
    carry_reasoning: bool = True,
    fast: bool = True,
) -> list[RoleCall]:
    """The calls of models by role (or (role, model) pairs), each with its role's settings.

    A role that ``settings`` does not name is tried with none of its own.
    """
    pairs = models.items() if isinstance(models, Mapping) else models
    return [
        RoleCall(role, model, (settings or {}).get(role) or GenerateConfig(), carry_reasoning, fast)
        for role, model in pairs
    ]


def run_calls(run: RunSpec) -> list[RoleCall]:
    """The calls of a run that its preflight tries, made as its samples make them.

    The models its samples may ask (``preflight_models``), each with its role's settings
    and token limit (``RunSpec.generate_config`` under the protocol's points), answers
    sent back as the protocol sends them, on the transport its options choose.
    """
    points = protocol_points(run.config)
    asked = preflight_models({Role.AGENT: run.agent, **run.roles}, run.config)
    settings = role_settings(asked, run.generate_config, points)
    return role_calls(asked, settings, points.carry_reasoning, run.options.fast_path)


class _Trial(NamedTuple):
    """One model tried with one role's settings (the roles that share them)."""

    model: str
    roles: list[Role]
    config: GenerateConfig
    tools: list[ToolInfo]
    carry_reasoning: bool
    fast: bool


class Preflight:
    """Every model of a run, built (its provider imported, its key read), to be tried.

    Building comes first and sends nothing, so that a run can start its shard processes
    right after it, with the providers imported, while ``check`` waits on the endpoints.
    A model called alike by several roles or runs (same settings but for the transport's,
    same protocol) is tried once.

    Args:
        calls: Each role's model as the run calls it: ``run_calls`` for each run, or
            ``role_calls`` for models by role.
        timeout: Seconds each request has to be answered.
    """

    def __init__(
        self, calls: Iterable[RoleCall], timeout: float = DEFAULT_PREFLIGHT_TIMEOUT
    ) -> None:
        self.timeout = timeout
        self.transport = GenerateConfig(
            max_retries=DEFAULT_PREFLIGHT_RETRIES,
            timeout=int(timeout),
            attempt_timeout=int(timeout),
            reasoning_summary=DEFAULT_REASONING_SUMMARY,  # no probe request of Inspect's
        )
        trials: dict[tuple[str, str, bool, bool, bool], _Trial] = {}
        for call in calls:
            tools = [PREFLIGHT_TOOL] if call.role is Role.AGENT else []
            # what the call asks, its transport aside (connections differ between runs)
            asked = call.config.model_dump_json(exclude_none=True, exclude=set(TRANSPORT_SETTINGS))
            key = (call.model, asked, bool(tools), call.carry_reasoning, call.fast)
            trial = trials.setdefault(
                key, _Trial(call.model, [], call.config, tools, call.carry_reasoning, call.fast)
            )
            if call.role not in trial.roles:
                trial.roles.append(call.role)
        self.trials = list(trials.values())
        self.roles: dict[tuple[str, bool], list[Role]] = {}
        for trial in self.trials:
            roles = self.roles.setdefault((trial.model, trial.fast), [])
            roles.extend(r for r in trial.roles if r not in roles)
        self.built: dict[tuple[str, bool], Model | PreflightFailure] = {}
        self._first: dict[int, list[ChatMessage]] = {}
        # Inspect prints its version and hooks once per process, as the first model is
        # built: here that would split the preflight's one line from the command's output
        with contextlib.redirect_stdout(io.StringIO()):
            for (model, fast), roles in self.roles.items():
                try:
                    built = get_model(model, config=self.transport, memoize=False)
                    if fast:
                        fast_path(built)
                    self.built[model, fast] = resilient(built, replay=False)
                except Exception as error:  # noqa: BLE001 - any failure is reported
                    self.built[model, fast] = _failure(model, roles, error)

    def _config(self, trial: _Trial) -> GenerateConfig:
        """The role's settings, carried as the preflight carries a request (its retries)."""
        return trial.config.merge(self.transport)

    async def _turn(
        self, index: int, trial: _Trial, messages: list[ChatMessage], turn: int
    ) -> PreflightFailure | float | None:
        """One turn of a trial: its failure, or the seconds it took (None: never called)."""
        built = self.built[trial.model, trial.fast]
        if isinstance(built, PreflightFailure):
            return built if turn == 1 else None
        if provider_name(trial.model) in UNCALLED_PROVIDERS:
            return None
        start = time.perf_counter()
        try:
            output = await asyncio.wait_for(
                built.generate(messages, tools=trial.tools, config=self._config(trial)),
                self.timeout,
            )
        except Exception as error:  # noqa: BLE001 - any failure is reported, never raised
            if turn == 2 and refusal_status(error) is None:
                return None  # the endpoint answered once: its hiccups are the run's to retry
            shown = settings_text(trial.config)
            return _failure(trial.model, trial.roles, error, shown, turn)
        if turn == 1:
            self._first[index] = [*messages, *self._answered(built, trial, output.message)]
        return time.perf_counter() - start

    def _answered(
        self, model: Model, trial: _Trial, message: ChatMessageAssistant
    ) -> list[ChatMessage]:
        """The first turn's answer as the run sends it back, and what follows it."""
        if not trial.carry_reasoning:
            message = release_message(message, model_wire(model, trial.tools, trial.config))
        if not message.tool_calls:
            return [message, ChatMessageUser(content=PREFLIGHT_PROMPT)]
        results: list[ChatMessage] = [
            ChatMessageTool(content="OK", tool_call_id=call.id, function=call.function)
            for call in message.tool_calls
        ]
        return [message, *results]

    def _run(self, turns: list[Any], quiet: bool) -> list[PreflightFailure | float | None]:
        """Every turn at once.

        ``quiet``: what Inspect prints is held back (never in a thread: the redirection
        is the whole process's).
        """

        async def all_of() -> list[PreflightFailure | float | None]:
            return list(await asyncio.gather(*turns))

        if not quiet:
            return asyncio.run(all_of())
        with contextlib.redirect_stdout(io.StringIO()):
            return asyncio.run(all_of())

    def check(self) -> PreflightReport:
        """The first turn of every trial (each model once per distinct role settings)."""
        firsts = []
        for index, trial in enumerate(self.trials):
            prompt = AGENT_PROMPT if trial.tools else PREFLIGHT_PROMPT
            firsts.append(self._turn(index, trial, [ChatMessageUser(content=prompt)], 1))
        checked = self._run(firsts, quiet=True)
        times = [c for c in checked if isinstance(c, float)]
        return PreflightReport(
            failures=_each_model_once(c for c in checked if isinstance(c, PreflightFailure)),
            latency=min(times, default=None),
        )

    def follow_up(self) -> list[PreflightFailure]:
        """The second turn of every trial whose first was answered (after ``check``).

        Only a refusal counts (an HTTP 4xx other than 408, 409 and 429): a timeout, a
        rate limit or a server error there is the endpoint's, which the run retries.
        """
        seconds = [
            self._turn(index, self.trials[index], messages, 2)
            for index, messages in sorted(self._first.items())
        ]
        checked = self._run(seconds, quiet=False)
        return _each_model_once(c for c in checked if isinstance(c, PreflightFailure))


class FollowUp:
    """The preflight's second turns, tried in a thread while the run starts.

    A refusal stops the run as Ctrl-C would (what finished is kept, the same command
    resumes), with the failures in ``stop.cause``; ``finish`` waits for the turns and
    returns the failures. The first samples' first turns overlap the check, so it costs
    the run no wall time unless it fails.
    """

    def __init__(self, checks: Preflight, stop: Interruption) -> None:
        self.failures: list[PreflightFailure] = []
        self._stop = stop
        self._armed = True
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._try, name="preflight", daemon=True)
        self._checks = checks
        self._thread.start()

    def _try(self) -> None:
        failures = self._checks.follow_up()
        with self._lock:
            self.failures = failures
            if failures and self._armed:
                self._stop.cause += [failure.line() for failure in failures]
                os.kill(os.getpid(), signal.SIGINT)

    def finish(self) -> list[PreflightFailure]:
        """Wait for the second turns (no longer stopping the run); their failures."""
        with self._lock:
            self._armed = False
        self._thread.join()
        return self.failures


def _each_model_once(failures: Iterable[PreflightFailure]) -> list[PreflightFailure]:
    """One failure per model and problem, naming every role it hit.

    A model tried with two roles' settings that fails alike for both (no key, no
    endpoint) is one line; the settings are named only when one role's were tried.
    """
    merged: dict[tuple[str, str], PreflightFailure] = {}
    for failure in failures:
        key = (failure.model, failure.problem)
        found = merged.get(key)
        if found is None:
            merged[key] = failure.model_copy()
            continue
        roles = found.roles + [r for r in failure.roles if r not in found.roles]
        settings = found.settings if found.settings == failure.settings else ""
        merged[key] = found.model_copy(update={"roles": roles, "settings": settings})
    return list(merged.values())


def preflight(
    models: Mapping[Role, str] | Iterable[tuple[Role, str]],
    timeout: float = DEFAULT_PREFLIGHT_TIMEOUT,
    settings: Mapping[Role, GenerateConfig] | None = None,
    carry_reasoning: bool = True,
) -> list[PreflightFailure]:
    """Resolve every model and try each (once per distinct role settings), both turns.

    ``models`` maps roles to models, or lists (role, model) pairs (``role_calls``).
    Models that are never called (``UNCALLED_PROVIDERS``) are resolved only. Returns the
    failures, one per model; empty when every model answered.
    """
    checks = Preflight(role_calls(models, settings, carry_reasoning), timeout)
    return checks.check().failures or checks.follow_up()
