"""occubench's tasks as an OpenEnv environment, and its client (needs the ``openenv`` extra).

OpenEnv's contract (``openenv-core``): an ``Environment`` with ``reset``, ``step`` and
``state``, its actions and observations pydantic models; a server makes one environment
per session (a WebSocket at ``/ws``, which ``EnvClient`` speaks). Here one session runs
one task per episode: ``reset(task_id=..., seed=...)`` opens a new ``EnvEpisode`` (the
task named, else the session's next task in turn; ``seed`` sets the fault plan's seed),
``step`` takes a tool call or the final answer. The observation after ``reset`` holds
the task (system prompt, instruction, tools); after a tool call, the tool's answer as the
agent sees it (faults applied) with the faults and refusal; after the answer, the grade
(checks and votes), with ``done`` and the reward: 1.0 for a passed task, else 0.0.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

from openenv.core import Action, EnvClient, Environment, Observation, State
from openenv.core.client_types import StepResult
from pydantic import Field, model_validator

from occubench.calls import failure_text
from occubench.env import EnvEpisode, EpisodeOver, EpisodeStart, ToolCallAction, ToolSpecView
from occubench.env import StepResult as EpisodeStep
from occubench.faults import InjectedFault
from occubench.grading import Grade
from occubench.training._source import EpisodeSource


class OccuBenchAction(Action):
    """One action: a tool call (``tool``, ``arguments``) or the final answer (``answer``)."""

    tool: str | None = Field(default=None, description="The tool called.")
    arguments: dict[str, Any] | str | None = Field(
        default=None, description="Its arguments: a JSON object, or its text."
    )
    answer: str | None = Field(default=None, description="The final answer: ends the episode.")

    @model_validator(mode="after")
    def _one_kind(self) -> OccuBenchAction:
        if (self.tool is None) == (self.answer is None):
            raise ValueError("an action is a tool call ('tool') or the final answer ('answer')")
        return self


class OccuBenchObservation(Observation):
    """What the agent sees after ``reset`` (the task), a tool call, or the answer (the grade)."""

    task_id: int = Field(description="The episode's task.")
    system_prompt: str | None = Field(default=None, description="After reset: the system prompt.")
    instruction: str | None = Field(default=None, description="After reset: the instruction.")
    tools: list[ToolSpecView] = Field(
        default_factory=list, description="After reset: the environment's tools."
    )
    result: str | None = Field(
        default=None, description="After a tool call: its answer as the agent sees it."
    )
    call_index: int | None = Field(
        default=None, description="After a tool call: its index; None when it was refused."
    )
    refused: str | None = Field(
        default=None, description="After a refused call: why it never reached the environment."
    )
    faults: list[InjectedFault] = Field(
        default_factory=list, description="After a tool call: the faults injected on it."
    )
    grade: Grade | None = Field(default=None, description="After the answer: the grade.")


class OccuBenchState(State):
    """The session's episode: its task, calls and outcome (``episode_id``, ``step_count``)."""

    task_id: int | None = Field(default=None, description="The task (None before reset).")
    tool_calls: int = Field(default=0, description="Tool calls that reached the tool layer.")
    faults: int = Field(default=0, description="Faults injected so far.")
    done: bool = Field(default=False, description="Whether the episode was graded.")
    passed: bool | None = Field(default=None, description="The verdict (None: not graded).")


class EnvironmentFailure(RuntimeError):
    """The simulator, the verifier or their providers failed: the episode cannot go on."""


@contextlib.contextmanager
def environment_failures() -> Iterator[None]:
    """A failure inside as ``EnvironmentFailure``, in a few words (never the agent's).

    The episode answers the agent's bad calls with a message; it raises only when it has
    ended (``EpisodeOver``, kept) or when a part of the environment failed.
    """
    try:
        yield
    except EpisodeOver:
        raise
    except Exception as error:
        raise EnvironmentFailure(f"the environment failed: {failure_text(error)}") from None


class OccuBenchEnvironment(Environment[OccuBenchAction, OccuBenchObservation, OccuBenchState]):
    """One session's environment: one task per episode (see the module docstring).

    Args:
        source: The settings and models each episode is made with.
        task_ids: The tasks served, in the order sessions take them.
    """

    SUPPORTS_CONCURRENT_SESSIONS = True
    """Each session has its own episode; episodes share nothing."""

    def __init__(self, source: EpisodeSource, task_ids: list[int]) -> None:
        super().__init__()
        self.source = source
        self.task_ids = task_ids
        self.episode: EnvEpisode | None = None
        self._episodes = 0
        self._state = OccuBenchState()
        self._runner: asyncio.Runner | None = None

    def _run(self, awaitable: Any) -> Any:
        """Run on the environment's own event loop (the sync API's)."""
        if self._runner is None:
            self._runner = asyncio.Runner()
        return self._runner.run(awaitable)

    async def reset_async(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        task_id: int | None = None,
        **kwargs: Any,
    ) -> OccuBenchObservation:
        """Start a new episode: ``task_id``'s, else the session's next task in turn.

        Raises:
            ValueError: ``task_id`` is not one of the served tasks.
            EnvironmentFailure: the simulator or its provider failed.
        """
        if task_id is None:
            task_id = self.task_ids[self._episodes % len(self.task_ids)]
        elif task_id not in self.task_ids:
            served = ", ".join(map(str, self.task_ids))
            raise ValueError(f"task {task_id} is not served here; served: {served}")
        if self.episode is not None:
            self.episode.close()  # the session's previous episode, ungraded if it was not
        self._episodes += 1
        with environment_failures():
            self.episode = self.source.episode(task_id, seed)
            start: EpisodeStart = await self.episode.reset()
        self._state = OccuBenchState(episode_id=episode_id, task_id=task_id)
        return OccuBenchObservation(
            task_id=task_id,
            system_prompt=start.system_prompt,
            instruction=start.instruction,
            tools=start.tools,
        )

    async def step_async(
        self, action: OccuBenchAction, timeout_s: float | None = None, **kwargs: Any
    ) -> OccuBenchObservation:
        """Answer a tool call through the episode, or grade the final answer.

        Raises:
            RuntimeError: no episode was started (``reset`` first).
            EpisodeOver: the episode has ended.
            EnvironmentFailure: the simulator, the verifier or a provider failed.
        """
        if self.episode is None:
            raise RuntimeError("call reset() first")
        episode = self.episode
        self._state.step_count += 1
        if action.answer is not None:
            with environment_failures():
                grade = await episode.grade(action.answer)
            self._state.done, self._state.passed = True, grade.passed
            self._state.tool_calls = grade.tool_calls
            return OccuBenchObservation(
                task_id=episode.task.task_id, grade=grade, done=True, reward=float(grade.passed)
            )
        assert action.tool is not None  # an action is one of the two
        with environment_failures():
            result: EpisodeStep = await episode.step(
                ToolCallAction(tool=action.tool, arguments=action.arguments)
            )
        self._state.tool_calls = episode.record.tool_calls
        self._state.faults = len(episode.record.fault_log)
        return OccuBenchObservation(
            task_id=episode.task.task_id,
            result=result.observation,
            call_index=result.call_index,
            refused=None if result.refused is None else result.refused.value,
            faults=result.faults,
            reward=0.0,
        )

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> OccuBenchObservation:
        """``reset_async`` for code without a running event loop."""
        observation: OccuBenchObservation = self._run(self.reset_async(seed, episode_id, **kwargs))
        return observation

    def step(
        self, action: OccuBenchAction, timeout_s: float | None = None, **kwargs: Any
    ) -> OccuBenchObservation:
        """``step_async`` for code without a running event loop."""
        observation: OccuBenchObservation = self._run(self.step_async(action, timeout_s))
        return observation

    @property
    def state(self) -> OccuBenchState:
        """The session's episode so far."""
        return self._state

    def close(self) -> None:
        """End the current episode, ungraded if it was not graded; close the sync API's loop."""
        if self.episode is not None:
            self.episode.close()
        if self._runner is not None:
            self._runner.close()
            self._runner = None


class OccuBenchClient(EnvClient[OccuBenchAction, OccuBenchObservation, OccuBenchState]):
    """OpenEnv's client for this environment: ``OccuBenchClient(base_url=openenv_url(...))``.

    The server's credential travels in the URL (``http://occubench:<token>@127.0.0.1:PORT``):
    the WebSocket client sends it as HTTP Basic authorization.
    """

    def _step_payload(self, action: OccuBenchAction) -> dict[str, Any]:
        payload: dict[str, Any] = action.model_dump(
            mode="json", exclude={"metadata"}, exclude_none=True
        )
        return payload

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[OccuBenchObservation]:
        observation = OccuBenchObservation.model_validate(
            {
                **payload.get("observation", {}),
                "done": payload.get("done", False),
                "reward": payload.get("reward"),
            }
        )
        return StepResult(observation, observation.reward, observation.done)

    def _parse_state(self, payload: dict[str, Any]) -> OccuBenchState:
        state: OccuBenchState = OccuBenchState.model_validate(payload)
        return state
