"""The Language Environment Simulator: an LLM answers each tool call with an observation."""

from __future__ import annotations

from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageUser, Model
from pydantic import BaseModel, Field

from occubench.asking import ask
from occubench.defaults import DEFAULT_SIMULATOR_RETRIES
from occubench.errors import ErrorSource, InfrastructureError
from occubench.simulator._parse import ObservationParseError, parse_observation
from occubench.simulator._prompt import action_message, observation_message, system_message
from occubench.simulator._state import PatchError, apply_reply_patch, reask_for, state_action


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
    """

    def __init__(
        self,
        model: Model,
        system_prompt: str,
        *,
        max_retries: int = DEFAULT_SIMULATOR_RETRIES,
        cache: bool = False,
        state: dict[str, Any] | None = None,
    ) -> None:
        self.model = model
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

        def read(text: str) -> tuple[dict[str, Any], list[dict[str, Any]] | None, Any]:
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
        )
        if asked.value is None:
            raise SimulatorError(
                f"simulator gave no usable observation for {tool!r} after "
                f"{asked.attempts} attempts: {asked.problem}"
            )
        observation, patch, new_state = asked.value
        if new_state is not None:
            self.state = new_state
        self._append(
            SimStep(
                tool=tool,
                arguments=arguments,
                observation=observation,
                attempts=asked.attempts,
                patch=patch,
                state=new_state,
            ),
            action,
        )
        return observation

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
