"""``occubench env try``: one tool call, the simulator's request as sent, its observation.

The env is read as a run reads it, the arguments pass the protocol's rule
(``occubench.agent``: checked against the tool's schema under occubench's, passed on as
typed under the paper's), and the simulator is built as a run builds it
(``environment_simulator``: the protocol's layout, the state mode, the online checks, the
re-asks). Every request the simulator model is sent for the call (re-asks included) is
recorded with the reply it gave, then the observation as parsed and as the agent sees it.
No fault is injected: it is the clean environment the author wrote.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai.model import ChatMessage, Model, ModelOutput
from pydantic import BaseModel, Field

from occubench.agent import BadToolCall, CallRule, environment_simulator
from occubench.calls import ResilientModel, named_model, resilient
from occubench.config import ResolvedRun, RunConfig
from occubench.dataset import load_env
from occubench.errors import UsageError
from occubench.simulator import SimulatorError


class SentMessage(BaseModel):
    """One message of a request, as the simulator model was sent it."""

    role: str = Field(description="system, user or assistant.")
    content: str = Field(description="Its text.")


class SimulatorExchange(BaseModel):
    """One request to the simulator model and its reply."""

    messages: list[SentMessage] = Field(description="The messages sent, in order.")
    reply: str = Field(description="The model's reply, as it came.")


class TryResult(BaseModel):
    """What the simulator made of one call."""

    env: str = Field(description="The env's name.")
    tool: str = Field(description="The tool called.")
    arguments: dict[str, Any] = Field(description="The arguments, parsed.")
    protocol: str = Field(description="The protocol the simulator was asked under.")
    simulator: str = Field(description="The simulator model.")
    exchanges: list[SimulatorExchange] = Field(description="Every request and reply, in order.")
    observation: Any = Field(description="The observation parsed (None: none parsed).")
    shown: str = Field(description="The observation as the agent sees it.")
    error: str | None = Field(
        default=None, description="Why the simulator gave no usable observation, if it did not."
    )


class _Recording(ResilientModel):
    """A simulator model that keeps every request it is sent and the reply it gave."""

    exchanges: list[SimulatorExchange]

    async def generate(self, input: Any, *args: Any, **kwargs: Any) -> ModelOutput:
        """Generate as the model does; keep the request and its reply."""
        output = await super().generate(input, *args, **kwargs)
        sent: list[ChatMessage] = list(input) if not isinstance(input, str) else []
        self.exchanges.append(
            SimulatorExchange(
                messages=[SentMessage(role=m.role, content=m.text) for m in sent]
                or [SentMessage(role="user", content=str(input))],
                reply=output.completion,
            )
        )
        return output


def _recording(model: Model) -> _Recording:
    made = resilient(model)
    made.__class__ = _Recording
    assert isinstance(made, _Recording)
    made.exchanges = []
    return made


async def try_call(
    root: str | Path,
    env_name: str,
    tool: str,
    arguments: str,
    simulator: str | Model,
    config: RunConfig | None = None,
) -> TryResult:
    """Ask the simulator for one call's observation (module doc).

    Args:
        root: The dataset folder.
        env_name: The env (its config's file stem).
        tool: The tool called.
        arguments: Its arguments as JSON text (an object).
        simulator: The simulator model, by name or built.
        config: The run's settings (protocol, state mode, date; default: the defaults).

    Raises:
        DatasetError: the env config cannot be read.
        UsageError: no such tool, or arguments the protocol's rule refuses.

    A simulator that gives no usable observation is the result's ``error`` (its requests
    and replies are kept: they show why).
    """
    settings = config or RunConfig()
    run = ResolvedRun.of(settings)
    env = load_env(root, env_name)
    specs = env.action_set_definitions
    if not any(spec.name == tool for spec in specs):
        known = ", ".join(spec.name for spec in specs)
        raise UsageError(f"env {env_name!r} has no tool {tool!r}; its tools: {known}")
    try:
        parsed, raw = CallRule.of(run.points).admit(specs, 0, tool, arguments)
    except BadToolCall as bad:
        raise UsageError(f"--args: {bad.message}") from None
    built = (
        simulator
        if isinstance(simulator, Model)
        else named_model(simulator, memoize=False, model_args=settings.simulator_args())
    )
    model = _recording(built)
    observed, error = None, None
    try:
        observed = await environment_simulator(run, env, model).observe(tool, parsed, raw)
    except SimulatorError as e:
        error = str(e)
    return TryResult(
        env=env_name,
        tool=tool,
        arguments=parsed,
        protocol=settings.protocol.value,
        simulator=str(model),
        exchanges=model.exchanges,
        observation=observed.value if observed else None,
        shown=observed.text if observed else "",
        error=error,
    )
