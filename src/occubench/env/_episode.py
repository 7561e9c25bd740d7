"""One task's environment driven call by call from outside Inspect's tool loop.

``EnvEpisode`` is what the gym API hands out, and what ``occubench serve`` and
``--agent-command`` run behind their MCP tools: ``reset()`` opens the environment
(``open_environment``: the same simulator, fault session and tool layer as the built-in
loop), ``step(call)`` answers one tool call (the argument rule, then faults, logged),
``grade(answer)`` ends the episode and grades it (``grade_trajectory``). It keeps the
conversation in the shape Inspect's loop gives (an assistant message per call, a tool
message per result), so the judge, the checks, the log and the exports read it alike.

One episode is one sample's worth of state: inside an Inspect sample it writes to the
sample's store and messages, elsewhere to its own.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    Model,
    get_model,
)
from inspect_ai.solver import TaskState
from inspect_ai.tool import ToolCall
from inspect_ai.util import Store
from pydantic import BaseModel, Field

from occubench.agent import (
    BadToolCall,
    CallProblem,
    CallRule,
    Episode,
    StopReason,
    ToolLayer,
    agent_input,
    open_environment,
    refusal_error,
    run_system_prompt,
    tool_schema,
)
from occubench.config import ResolvedRun
from occubench.dataset import EnvConfig, TaskRecord
from occubench.faults import InjectedFault
from occubench.grading import Grade, SubmittedGrade, grade_trajectory, judge_model
from occubench.roles import Role
from occubench.text import clean_json, escape_invalid, loads


class ToolSpecView(BaseModel):
    """A tool as an agent is shown it: name, description, argument schema."""

    name: str = Field(description="Tool name.")
    description: str = Field(description="What the tool does.")
    parameters: dict[str, Any] = Field(description="JSON Schema of its arguments.")


class EpisodeStart(BaseModel):
    """What ``reset()`` gives the agent."""

    task_id: int = Field(description="The task's id.")
    system_prompt: str = Field(description="The agent's system prompt (scenario, fixed date).")
    instruction: str = Field(description="The task instruction (with its plan in with-plan mode).")
    tools: list[ToolSpecView] = Field(description="The environment's tools.")

    def prompt(self) -> str:
        """System prompt and instruction as one text (an MCP prompt, a program's input)."""
        return f"{self.system_prompt}\n\n{self.instruction}"


class ToolCallAction(BaseModel):
    """One tool call of the agent."""

    tool: str = Field(description="The tool called.")
    arguments: dict[str, Any] | str | None = Field(
        default=None, description="Its arguments: a JSON object, or its text."
    )


class StepResult(BaseModel):
    """What one tool call gave the agent."""

    call_index: int | None = Field(
        description="0-based index of the call in the tool layer; None when refused."
    )
    observation: str = Field(
        description="The text the agent sees: the observation's JSON, or the refusal."
    )
    refused: CallProblem | None = Field(
        default=None, description="Why the call never reached the environment, if it did not."
    )
    faults: list[InjectedFault] = Field(
        default_factory=list, description="Faults injected on this call."
    )


class EpisodeOver(RuntimeError):
    """A call or a submission after the episode ended."""


def _call_id(index: int) -> str:
    return f"call_{index}"


class EnvEpisode:
    """One task's environment, driven call by call (see the module docstring).

    Args:
        run: The resolved run (faults, state mode, protocol points, votes, ...).
        task: The task record.
        env: Its env config.
        simulator: The simulator role's model.
        judge: The judge model (``choose_judge``), None for a task graded by its checks.
        messages: The conversation to write to (a sample's ``state.messages``);
            a new one by default, started with the instruction.
        store: The store to keep the episode record in (a sample's); a new one by default.
        instruction: The instruction as the agent gets it (default: from the task and
            ``with_plan``).
        epoch: The sample's epoch (1 for the first; the world's variant under
            ``world_variant=epoch``).
    """

    def __init__(
        self,
        run: ResolvedRun,
        task: TaskRecord,
        env: EnvConfig,
        *,
        simulator: Model,
        judge: Model | None,
        messages: list[ChatMessage] | None = None,
        store: Store | None = None,
        instruction: str | None = None,
        epoch: int = 1,
    ) -> None:
        self.run = run
        self.config = run.config
        self.points = run.points
        self.rule = CallRule.of(run.points)
        self.task = task
        self.env = env
        self.simulator = simulator
        self.judge = judge
        self.epoch = epoch
        self.instruction = instruction or agent_input(
            task.agent_instruction,
            task.solution_plan if run.config.with_plan else None,
            self.points.agent_messages,
        )
        self.messages: list[ChatMessage] = (
            messages if messages is not None else [ChatMessageUser(content=self.instruction)]
        )
        self.store = store if store is not None else Store()
        self.record = Episode(store=self.store)
        self.verdict: Grade | None = None
        self.answer: str | None = None
        self._layer: ToolLayer | None = None
        self._calls = 0

    @classmethod
    async def in_sample(cls, state: TaskState, run: ResolvedRun) -> tuple[EnvEpisode, EpisodeStart]:
        """The running sample's episode, opened: its store, its messages, its model roles."""
        task = TaskRecord.model_validate(state.metadata["task"])
        episode = cls(
            run,
            task,
            EnvConfig.model_validate(state.metadata["env"]),
            simulator=get_model(role=Role.SIMULATOR.value, required=True),
            judge=judge_model(bool(task.checks)),
            messages=state.messages,
            store=state.store,
            instruction=state.input_text,
            epoch=state.epoch,
        )
        return episode, await episode.reset()

    @property
    def done(self) -> bool:
        """Whether the episode has ended (graded or closed)."""
        return self.answer is not None

    def tools(self) -> list[ToolSpecView]:
        """The environment's tools as the agent is shown them."""
        return [
            ToolSpecView(
                name=t.name, description=t.description or t.name, parameters=tool_schema(t)
            )
            for t in self.env.action_set_definitions
        ]

    def opening(self) -> EpisodeStart:
        """What ``reset()`` gives the agent, read without opening the environment.

        A trainer's dataset lists each task's prompt and tools before any episode runs.
        """
        return EpisodeStart(
            task_id=self.task.task_id,
            system_prompt=run_system_prompt(self.run, self.task.task_scenario_name),
            instruction=self.instruction,
            tools=self.tools(),
        )

    async def reset(self) -> EpisodeStart:
        """Open the environment; the instruction and the tools.

        Raises:
            RuntimeError: the episode was already opened (one episode is one sample).
        """
        if self._layer is not None:
            raise RuntimeError("an episode is opened once: make a new one to start again")
        self._layer = open_environment(
            self.run, self.task, self.env, self.simulator, self.record, epoch=self.epoch
        )
        start = self.opening()
        self.messages.insert(0, ChatMessageSystem(content=start.system_prompt))
        self.record.stop_reason = StopReason.NOT_SUBMITTED
        return start

    def at_call_limit(self) -> bool:
        """Whether the episode has made the tool calls its protocol allows (0: no cap)."""
        return self.rule.budget.spent(self.record.tool_calls)

    def _layer_or_raise(self) -> ToolLayer:
        if self._layer is None:
            raise RuntimeError("call reset() first")
        if self.done:
            raise EpisodeOver("the episode has ended: no more calls")
        return self._layer

    async def step(self, action: ToolCallAction) -> StepResult:
        """Answer one tool call: refused by the argument rule, or through the tool layer.

        Raises:
            EpisodeOver: the episode has ended.
            InfrastructureError: the simulator (or a provider) failed; the episode
                cannot go on (an error, not the agent's failure).
        """
        layer = self._layer_or_raise()
        call_id = _call_id(self._calls)
        self._calls += 1
        try:
            arguments, raw = self.rule.admit(
                self.env.action_set_definitions,
                self.record.tool_calls,
                action.tool,
                action.arguments,
            )
        except BadToolCall as bad:
            if bad.problem is CallProblem.TOOL_CALL_LIMIT:
                self.record.stop_reason = StopReason.TOOL_CALL_LIMIT
            self._append_call(
                call_id,
                action.tool,
                _shown_arguments(action.arguments),
                bad.message if bad.problem is CallProblem.NOT_JSON else None,
            )
            self.messages.append(
                ChatMessageTool(
                    content=bad.message,
                    tool_call_id=call_id,
                    function=action.tool,
                    error=refusal_error(bad),
                )
            )
            return StepResult(call_index=None, observation=bad.message, refused=bad.problem)
        self._append_call(call_id, action.tool, arguments)
        index, before = self.record.tool_calls, len(self.record.fault_log)
        text = await layer.call(action.tool, arguments, raw)
        self.messages.append(
            ChatMessageTool(content=text, tool_call_id=call_id, function=action.tool)
        )
        return StepResult(call_index=index, observation=text, faults=self.record.fault_log[before:])

    def _append_call(
        self, call_id: str, tool: str, arguments: dict[str, Any], parse_error: str | None = None
    ) -> None:
        call = ToolCall(id=call_id, function=tool, arguments=arguments, parse_error=parse_error)
        self.messages.append(ChatMessageAssistant(content="", tool_calls=[call]))

    def close(self, answer: str = "", stop_reason: StopReason = StopReason.NOT_SUBMITTED) -> None:
        """End the episode without grading it (the final answer, if any, is kept)."""
        if self.done:
            return
        self.answer = answer
        self.record.stop_reason = stop_reason
        if answer:
            self.messages.append(ChatMessageAssistant(content=answer))

    async def grade(self, answer: str) -> Grade:
        """Submit the final answer: the episode ends and is graded (checks, then k votes).

        The grade is kept in the store (``SubmittedGrade``), so a sample's scorer reports
        this verdict.

        Raises:
            EpisodeOver: the episode has already ended.
            VerifierError: no vote could be read, or no judge for a task without checks.
        """
        self._layer_or_raise()
        self.close(answer, StopReason.ANSWERED)
        return await self.grade_as_is()

    async def grade_as_is(self) -> Grade:
        """Grade the episode on what it did (its answer so far; "" if none) and keep it."""
        if self._layer is None:
            raise RuntimeError("call reset() first")
        if not self.done:
            self.close()
        grade = await grade_trajectory(
            self.task,
            self.env,
            self.messages,
            self.answer or "",
            self.record,
            judge=self.judge,
            votes=self.config.votes,
            cache=self.config.cache,
            style=self.points.verifier_messages,
            max_tokens=self.points.verifier_max_tokens or None,
            template=self.run.release.verifier if self.run.release is not None else None,
            guard=self.config.exploit_guard,
        )
        self.verdict = grade
        given = SubmittedGrade(store=self.store)
        given.grade = grade.model_dump(mode="json")
        given.answer = self.answer or ""
        return grade


def _shown_arguments(arguments: Mapping[str, Any] | str | None) -> dict[str, Any]:
    """Arguments of a refused call as the log shows them (text that is not JSON kept raw)."""
    if isinstance(arguments, Mapping):
        return dict(clean_json(dict(arguments)))
    if isinstance(arguments, str):
        arguments = escape_invalid(arguments)
        try:
            parsed = loads(arguments)
        except (json.JSONDecodeError, RecursionError, ValueError):
            return {"raw": arguments}
        return parsed if isinstance(parsed, dict) else {"raw": arguments}
    return {}
