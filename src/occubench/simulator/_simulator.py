"""The Language Environment Simulator: an LLM answers each tool call with an observation."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, NamedTuple

from inspect_ai.model import ChatMessage, ChatMessageAssistant, GenerateConfig, Model
from pydantic import BaseModel, ConfigDict, Field

from occubench.calls import Asked, ask
from occubench.defaults import DEFAULT_SIMULATOR_RETRIES
from occubench.errors import ErrorSource, InfrastructureError
from occubench.simchecks import CheckFailure, KeptAnswer, ObservationChecker, SimCheck
from occubench.simulator._layout import OccubenchLayout, SimulatorLayout, system_message
from occubench.simulator._prompt import failed_observation, reask_action
from occubench.simulator._state import PatchError, apply_reply_patch


def _problem(failures: list[CheckFailure]) -> str:
    """The re-ask's ``harness_check``: every failed check, named."""
    return "; ".join(f"{f.kind.value} check failed: {f.detail}" for f in failures)


class SimulatorError(InfrastructureError):
    """The simulator gave no usable observation: an infrastructure error, not an agent failure."""

    source = ErrorSource.SIMULATOR


class Observation(BaseModel):
    """What the simulator answered one action with."""

    value: Any = Field(description="The observation's JSON value (None: the reply had none).")
    text: str = Field(description="The observation as the agent sees it.")
    parse_failed: bool = Field(
        default=False,
        description="No attempt parsed and the last raw reply was passed on (pass_raw).",
    )


class SimStep(BaseModel):
    """One action and what the simulator's history holds for it (``Episode.steps``).

    A simulator may answer NaN or Infinity; the log writes them as JSON's extension
    constants (``NaN``), as it does in a plain dict, not as null.
    """

    model_config = ConfigDict(ser_json_inf_nan="constants")

    tool: str = Field(description="Action name.")
    arguments: dict[str, Any] = Field(description="Action arguments (parsed).")
    raw_arguments: str | None = Field(
        default=None, description="The agent's raw argument string, when it was passed on."
    )
    observation: Any = Field(description="Clean observation (or the error, if failed).")
    text: str | None = Field(default=None, description="The observation's text in the history.")
    failed: bool = Field(default=False, description="Failed before reaching the environment.")
    parse_failed: bool = Field(
        default=False, description="No reply parsed; the last raw reply was passed on."
    )
    attempts: int = Field(default=1, description="Simulator calls it took (re-asks included).")
    patch: list[dict[str, Any]] | None = Field(
        default=None, description="Explicit state mode: the JSON Patch the step applied."
    )
    state: dict[str, Any] | None = Field(
        default=None, description="Explicit state mode: the state after the step."
    )
    check: SimCheck | None = Field(
        default=None,
        description="Online simulator checks: the checks the first answer failed and what "
        "the re-ask gave (None: checks off, or every check passed).",
    )


class Reading(NamedTuple):
    """A usable reply, read: its observation, and in explicit state mode its state patch."""

    value: Any
    """The observation's JSON value."""
    text: str
    """The observation as the agent sees it."""
    patch: list[dict[str, Any]] | None = None
    """Explicit state mode: the reply's JSON Patch (None: history mode)."""
    state: dict[str, Any] | None = None
    """Explicit state mode: the state after the patch (None: history mode)."""


class _Checked(NamedTuple):
    """What the online checks made of an answer (``Simulator._checked``)."""

    reading: Reading
    """The answer kept: the first, or the re-ask's."""
    check: SimCheck | None
    """The record of the checks (None: every check passed)."""
    reasks: int
    """Model calls the re-ask took."""


def _checkable(value: Any) -> dict[str, Any]:
    """An observation as the online checks read it (a bare JSON value wrapped)."""
    return value if isinstance(value, dict) else {"value": value}


class Simulator:
    """Simulates one environment for one sample, with its history as the state.

    Args:
        model: The ``simulator`` role model.
        system_prompt: The rendered system prompt (``layout.system_prompt``).
        layout: How the simulator is asked and read (default: occubench's).
        max_retries: Re-asks (or re-samples, per the layout) when a reply holds no usable
            observation (or, in explicit state mode, no patch that applies).
        pass_raw: When every attempt fails, pass the last raw reply on as the
            observation (or ``{}`` without one) instead of raising ``SimulatorError``.
        cache: Let Inspect cache simulator responses.
        state: The initial state, for explicit state mode (None: history mode). The
            system prompt must then include ``STATE_CONTRACT``.
        checker: Online checks of every observation (None: off). The system prompt must
            then include ``SIM_CHECK_CONTRACT``. An observation that fails a check is
            re-asked once with the problem named; the re-ask's answer is kept unless it is
            unusable or fails more kinds of check than the first.
        check_model: The model re-asked after a failed check (None: this simulator).
        config: Generate settings of every call (max_tokens, the simulator's seed).
    """

    def __init__(
        self,
        model: Model,
        system_prompt: str,
        *,
        layout: SimulatorLayout | None = None,
        max_retries: int = DEFAULT_SIMULATOR_RETRIES,
        pass_raw: bool = False,
        cache: bool = False,
        state: dict[str, Any] | None = None,
        checker: ObservationChecker | None = None,
        check_model: Model | None = None,
        config: GenerateConfig | None = None,
    ) -> None:
        self.model = model
        self.system_prompt = system_prompt
        self.layout = layout or OccubenchLayout()
        self.max_retries = max_retries
        self.pass_raw = pass_raw
        self.cache = cache
        self.state = state
        self.checker = checker
        self.check_model = check_model
        self.config = config or GenerateConfig()
        self.checked = 0
        """Observations the online checks looked at."""
        self.steps: list[SimStep] = []
        self._messages: list[ChatMessage] = [system_message(system_prompt)]

    async def observe(
        self, tool: str, arguments: dict[str, Any], raw_arguments: str | None = None
    ) -> Observation:
        """Ask the simulator for the observation of one action and add it to the history.

        Args:
            tool: The action's name.
            arguments: Its arguments, parsed.
            raw_arguments: The agent's own argument string, when the protocol passes it
                on unchanged (the paper's layout shows it to the simulator).

        Raises:
            SimulatorError: when every attempt's reply is unusable and ``pass_raw`` is off.
        """
        action = self.layout.action_text(tool, arguments, raw_arguments)

        def read(text: str) -> Reading:
            value, shown = self.layout.read(text)
            if self.state is None:
                return Reading(value, shown)
            return Reading(value, shown, *apply_reply_patch(text, self.state))

        layout = self.layout
        asked = await ask(
            self.model,
            [*self._messages, layout.current(action, self.state)],
            read,
            attempts=self.max_retries + 1,
            reask=lambda error: layout.reask(error),
            errors=(*layout.parse_errors, PatchError),
            cache=self.cache,
            config=self.config,
        )
        if asked.value is None:
            if not self.pass_raw:
                raise SimulatorError(
                    f"simulator gave no usable observation for {tool!r} after "
                    f"{asked.attempts} attempts: {asked.problem}"
                )
            text = asked.last_text or "{}"
            found = Observation(value=None, text=text, parse_failed=True)
            self._append(
                SimStep(
                    tool=tool,
                    arguments=arguments,
                    raw_arguments=raw_arguments,
                    observation=None,
                    text=text,
                    parse_failed=True,
                    attempts=asked.attempts,
                    state=self.state,
                ),
                action,
            )
            return found
        checked = _Checked(asked.value, None, 0)
        if self.checker is not None:
            checked = await self._checked(tool, arguments, action, asked, read)
        value, shown, patch, new_state = checked.reading
        if new_state is not None:
            self.state = new_state
        self._append(
            SimStep(
                tool=tool,
                arguments=arguments,
                raw_arguments=raw_arguments,
                observation=value,
                text=shown,
                attempts=asked.attempts + checked.reasks,
                patch=patch,
                state=new_state,
                check=checked.check,
            ),
            action,
        )
        return Observation(value=value, text=shown)

    async def _checked(
        self,
        tool: str,
        arguments: dict[str, Any],
        action: str,
        asked: Asked[Reading],
        read: Callable[[str], Reading],
    ) -> _Checked:
        """Check the answer; on a failure re-ask once with the problem named."""
        assert self.checker is not None and asked.value is not None
        first = asked.value
        self.checked += 1
        failures = self.checker.check(tool, arguments, _checkable(first.value))
        if not failures:
            self.checker.record(tool, arguments, _checkable(first.value))
            return _Checked(first, None, 0)
        model = self.check_model or self.model
        layout = self.layout
        again = await ask(
            model,
            [
                *self._messages,
                layout.current(action, self.state),
                ChatMessageAssistant(content=asked.last_text or ""),
                layout.current(reask_action(action, _problem(failures)), self.state),
            ],
            read,
            attempts=self.max_retries + 1,
            reask=lambda error: layout.reask(error),
            errors=(*layout.parse_errors, PatchError),
            cache=self.cache,
            config=self.config,
        )
        retried = (
            None
            if again.value is None
            else self.checker.check(tool, arguments, _checkable(again.value.value))
        )
        reask_kept = again.value is not None and retried is not None
        reask_kept = reask_kept and len(retried or []) <= len(failures)
        kept, rejected = (again.value, first) if reask_kept else (first, again.value)
        assert kept is not None
        self.checker.record(tool, arguments, _checkable(kept.value))
        check = SimCheck(
            failures=failures,
            reask_model=str(model),
            reask_failures=retried,
            kept=KeptAnswer.REASK if reask_kept else KeptAnswer.FIRST,
            rejected=None if rejected is None else _checkable(rejected.value),
            suspect=bool(retried) if reask_kept else True,
        )
        return _Checked(kept, check, again.attempts)

    def record_failure(
        self,
        tool: str,
        arguments: dict[str, Any],
        error: dict[str, Any],
        raw_arguments: str | None = None,
    ) -> None:
        """Note in the history that an action failed before reaching the environment."""
        self._append(
            SimStep(
                tool=tool,
                arguments=arguments,
                raw_arguments=raw_arguments,
                observation=error,
                text=json.dumps(failed_observation(error), ensure_ascii=False),
                failed=True,
                attempts=0,
                state=self.state,
            ),
            self.layout.action_text(tool, arguments, raw_arguments),
        )

    def _append(self, step: SimStep, action: str) -> None:
        """Add a step; the history keeps the plain action (no state), so it stays a prefix."""
        self.steps.append(step)
        self._messages += self.layout.history(action, step.text or "{}")
