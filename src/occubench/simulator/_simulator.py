"""The Language Environment Simulator: an LLM answers each tool call with an observation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageUser,
    GenerateConfig,
    Model,
)
from pydantic import BaseModel, Field

from occubench.asking import Asked, ask
from occubench.defaults import DEFAULT_SIMULATOR_RETRIES
from occubench.errors import ErrorSource, InfrastructureError
from occubench.simchecks import CheckFailure, KeptAnswer, ObservationChecker, SimCheck
from occubench.simulator._parse import ObservationParseError, parse_observation
from occubench.simulator._prompt import (
    action_message,
    observation_message,
    reask_action,
    system_message,
)
from occubench.simulator._state import PatchError, apply_reply_patch, reask_for, state_action


def _problem(failures: list[CheckFailure]) -> str:
    """The re-ask's ``harness_check``: every failed check, named."""
    return "; ".join(f"{f.kind.value} check failed: {f.detail}" for f in failures)


class SimulatorError(InfrastructureError):
    """The simulator gave no usable observation: an infrastructure error, not an agent failure."""

    source = ErrorSource.SIMULATOR


class SimStep(BaseModel):
    """One action and what the simulator's history holds for it."""

    tool: str = Field(description="Action name.")
    arguments: dict[str, Any] = Field(description="Action arguments.")
    observation: dict[str, Any] = Field(description="Clean observation (or the error, if failed).")
    failed: bool = Field(default=False, description="Failed before reaching the environment.")
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


Reading = tuple[dict[str, Any], list[dict[str, Any]] | None, Any]
"""A parsed reply: the observation, and in explicit state mode the patch and new state."""


class Simulator:
    """Simulates one environment for one sample, with its history as the state.

    Args:
        model: The ``simulator`` role model.
        system_prompt: The rendered system prompt (see ``render_system_prompt``).
        max_retries: Re-asks when a reply holds no JSON object (or, in explicit state
            mode, no patch that applies), before ``SimulatorError``.
        cache: Let Inspect cache simulator responses.
        state: The initial state, for explicit state mode (None: history mode). The
            system prompt must then include ``STATE_CONTRACT``.
        checker: Online checks of every observation (None: off). The system prompt must
            then include ``SIM_CHECK_CONTRACT``. An observation that fails a check is
            re-asked once with the problem named; the re-ask's answer is kept unless it is
            unusable or fails more kinds of check than the first.
        fallback: The model re-asked after a failed check (None: this simulator).
        config: Generate settings of every call (e.g. the simulator's seed).
    """

    def __init__(
        self,
        model: Model,
        system_prompt: str,
        *,
        max_retries: int = DEFAULT_SIMULATOR_RETRIES,
        cache: bool = False,
        state: dict[str, Any] | None = None,
        checker: ObservationChecker | None = None,
        fallback: Model | None = None,
        config: GenerateConfig | None = None,
    ) -> None:
        self.config = config
        self.model = model
        self.checker = checker
        self.fallback = fallback
        self.checked = 0
        """Observations the online checks looked at."""
        self.state = state
        self.system_prompt = system_prompt
        self.max_retries = max_retries
        self.cache = cache
        self.steps: list[SimStep] = []
        self._messages: list[ChatMessage] = [system_message(system_prompt)]

    async def observe(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Ask the simulator for the observation of one action and add it to the history.

        Raises:
            SimulatorError: when every attempt's reply holds no JSON object.
        """
        action = action_message(tool, arguments)
        sent = (
            action
            if self.state is None
            else ChatMessageUser(content=state_action(tool, arguments, self.state))
        )

        def read(text: str) -> Reading:
            observation = parse_observation(text)
            if self.state is None:
                return observation, None, None
            patch, new_state = apply_reply_patch(text, self.state)
            return observation, patch, new_state

        asked = await ask(
            self.model,
            [*self._messages, sent],
            read,
            attempts=self.max_retries + 1,
            reask=reask_for,
            errors=(ObservationParseError, PatchError),
            cache=self.cache,
            config=self.config,
        )
        if asked.value is None:
            raise SimulatorError(
                f"simulator gave no usable observation for {tool!r} after "
                f"{asked.attempts} attempts: {asked.problem}"
            )
        value, check, extra = asked.value, None, 0
        if self.checker is not None:
            value, check, extra = await self._checked(tool, arguments, sent, asked, read)
        observation, patch, new_state = value
        if new_state is not None:
            self.state = new_state
        self._append(
            SimStep(
                tool=tool,
                arguments=arguments,
                observation=observation,
                attempts=asked.attempts + extra,
                patch=patch,
                state=new_state,
                check=check,
            ),
            action,
        )
        return observation

    async def _checked(
        self,
        tool: str,
        arguments: dict[str, Any],
        sent: ChatMessageUser,
        asked: Asked[Reading],
        read: Callable[[str], Reading],
    ) -> tuple[Reading, SimCheck | None, int]:
        """Check the answer; on a failure re-ask once with the problem named.

        Returns the reading kept, the check record (None when every check passed) and
        the model calls the re-ask took.
        """
        assert self.checker is not None and asked.value is not None
        first = asked.value
        self.checked += 1
        failures = self.checker.check(tool, arguments, first[0])
        if not failures:
            self.checker.record(tool, arguments, first[0])
            return first, None, 0
        model = self.fallback or self.model
        again = await ask(
            model,
            [
                *self._messages,
                sent,
                ChatMessageAssistant(content=asked.last_text),
                reask_action(sent.text, _problem(failures)),
            ],
            read,
            attempts=self.max_retries + 1,
            reask=reask_for,
            errors=(ObservationParseError, PatchError),
            cache=self.cache,
            config=self.config,
        )
        retried = (
            None if again.value is None else self.checker.check(tool, arguments, again.value[0])
        )
        reask_kept = again.value is not None and retried is not None
        reask_kept = reask_kept and len(retried or []) <= len(failures)
        kept, rejected = (again.value, first) if reask_kept else (first, again.value)
        assert kept is not None
        self.checker.record(tool, arguments, kept[0])
        check = SimCheck(
            failures=failures,
            reask_model=str(model),
            reask_failures=retried,
            kept=KeptAnswer.REASK if reask_kept else KeptAnswer.FIRST,
            rejected=None if rejected is None else rejected[0],
            suspect=bool(retried) if reask_kept else True,
        )
        return kept, check, again.attempts

    def record_failure(self, tool: str, arguments: dict[str, Any], error: dict[str, Any]) -> None:
        """Note in the history that an action failed before reaching the environment."""
        self._append(
            SimStep(
                tool=tool,
                arguments=arguments,
                observation=error,
                failed=True,
                attempts=0,
                state=self.state,
            ),
            action_message(tool, arguments),
        )

    def _append(self, step: SimStep, action: ChatMessage) -> None:
        """Add a step; the history keeps the plain action (no state), so it stays a prefix."""
        self.steps.append(step)
        self._messages += [action, observation_message(step.observation, failed=step.failed)]
