"""The Language Environment Simulator: an LLM answers each tool call with an observation."""

from __future__ import annotations

import json
from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, Model
from pydantic import BaseModel, Field

from occubench.asking import ask
from occubench.defaults import DEFAULT_SIMULATOR_RETRIES
from occubench.errors import ErrorSource, InfrastructureError
from occubench.simulator._layout import OccubenchLayout, SimulatorLayout, system_message
from occubench.simulator._prompt import failed_observation
from occubench.simulator._state import PatchError, apply_reply_patch


class SimulatorError(InfrastructureError):
    """The simulator gave no usable observation: an infrastructure error, not an agent failure."""

    source = ErrorSource.SIMULATOR


class Observation(BaseModel):
    """What the simulator answered one action with."""

    value: Any = Field(description="The observation's JSON value (None: the reply had none).")
    text: str = Field(description="The observation as the agent sees it.")
    parse_failed: bool = Field(
        default=False,
        description="No attempt parsed and the last raw reply was passed on (fallback).",
    )


class SimStep(BaseModel):
    """One action and what the simulator's history holds for it."""

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


class Simulator:
    """Simulates one environment for one sample, with its history as the state.

    Args:
        model: The ``simulator`` role model.
        system_prompt: The rendered system prompt (``layout.system_prompt``).
        layout: How the simulator is asked and read (default: occubench's).
        max_retries: Re-asks (or re-samples, per the layout) when a reply holds no usable
            observation (or, in explicit state mode, no patch that applies).
        fallback: When every attempt fails, pass the last raw reply on as the
            observation (or ``{}`` without one) instead of raising ``SimulatorError``.
        max_tokens: max_tokens of each simulator call (None: not set).
        cache: Let Inspect cache simulator responses.
        state: The initial state, for explicit state mode (None: history mode). The
            system prompt must then include ``STATE_CONTRACT``.
    """

    def __init__(
        self,
        model: Model,
        system_prompt: str,
        *,
        layout: SimulatorLayout | None = None,
        max_retries: int = DEFAULT_SIMULATOR_RETRIES,
        fallback: bool = False,
        max_tokens: int | None = None,
        cache: bool = False,
        state: dict[str, Any] | None = None,
    ) -> None:
        self.model = model
        self.state = state
        self.system_prompt = system_prompt
        self.layout = layout or OccubenchLayout()
        self.max_retries = max_retries
        self.fallback = fallback
        self.config = GenerateConfig(max_tokens=max_tokens) if max_tokens else GenerateConfig()
        self.cache = cache
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
            SimulatorError: when every attempt's reply is unusable and there is no fallback.
        """
        action = self.layout.action_text(tool, arguments, raw_arguments)

        def read(text: str) -> tuple[Any, str, list[dict[str, Any]] | None, Any]:
            value, shown = self.layout.read(text)
            if self.state is None:
                return value, shown, None, None
            patch, new_state = apply_reply_patch(text, self.state)
            return value, shown, patch, new_state

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
            if not self.fallback:
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
        value, shown, patch, new_state = asked.value
        if new_state is not None:
            self.state = new_state
        self._append(
            SimStep(
                tool=tool,
                arguments=arguments,
                raw_arguments=raw_arguments,
                observation=value,
                text=shown,
                attempts=asked.attempts,
                patch=patch,
                state=new_state,
            ),
            action,
        )
        return Observation(value=value, text=shown)

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
