"""occubench's tasks as a ``verifiers`` environment (needs the ``verifiers`` extra).

``load_environment(...)`` is verifiers' entry point: ``vf-eval occubench.training -a
'{"simulator": "occubench/canned", "env_mode": "E2"}'`` loads it, and so does a verifiers
trainer. One dataset row per selected task: its system prompt and instruction as the
prompt, its tools in the row's ``info`` (tasks differ in their tools). The tasks are
split, seeded, between the training set (``env.get_dataset()``, what a trainer reads) and
the evaluation set (``env.get_eval_dataset()``, what ``vf-eval`` reads): ``split_tasks``.
Each rollout
opens its own episode (``occubench.env``); every tool call of the model is one
``episode.step`` (the argument rule, faults, the simulator's observation), and the
model's answer without a tool call ends the rollout. The episode is then graded once,
by the run's checks and k-vote verifier (``episode.grade``), and the rubric reads that
grade: the reward is 1.0 for a passed task and 0.0 otherwise; the checks passed, tool
calls and faults are metrics (weight 0). The whole grade is kept in the rollout's state
as ``occubench_grade`` (``vf-eval -C occubench_grade`` saves it with each result).

A rollout that failed before it ended (the model's endpoint, the simulator) is not
graded: it keeps verifiers' error, and its reward is 0.0.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any, cast

import verifiers as vf
from datasets import Dataset
from openai.types.chat import ChatCompletionFunctionToolParam

from occubench.agent import StopReason
from occubench.calls import failure_text
from occubench.defaults import (
    DEFAULT_EVAL_FRACTION,
    DEFAULT_SPLIT_SEED,
    DEFAULT_TRAINING_MAX_TURNS,
)
from occubench.env import EnvEpisode, EpisodeStart, ToolCallAction
from occubench.grading import Grade
from occubench.training._source import EpisodeSource
from occubench.training._split import split_tasks

EPISODE_KEY = "occubench_episode"
"""State key of the rollout's episode (not saved: it is the live environment)."""
GRADE_KEY = "occubench_grade"
"""State key of the rollout's grade, as JSON (``vf-eval -C occubench_grade`` saves it)."""


def oai_tools(start: EpisodeStart) -> list[ChatCompletionFunctionToolParam]:
    """The episode's tools as OpenAI's chat API declares them."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
            },
        }
        for tool in start.tools
    ]


def task_row(start: EpisodeStart) -> dict[str, Any]:
    """One dataset row: the prompt, and the task id and tools as ``info`` (JSON text)."""
    info = {"task_id": start.task_id, "oai_tools": oai_tools(start)}
    return {
        "prompt": [
            {"role": "system", "content": start.system_prompt},
            {"role": "user", "content": start.instruction},
        ],
        "answer": "",
        "info": json.dumps(info),
    }


def _grade(state: vf.State) -> Grade | None:
    value = state.get(GRADE_KEY)
    return None if value is None else Grade.model_validate(value)


async def passed(state: vf.State) -> float:
    """The reward: 1.0 when occubench's verdict is a pass, else 0.0."""
    grade = _grade(state)
    return float(grade is not None and grade.passed)


async def checks_passed(state: vf.State) -> float:
    """Share of the task's deterministic checks passed (1.0 for a task without checks)."""
    grade = _grade(state)
    if grade is None or grade.checks is None:
        return float(grade is not None)
    return sum(c.passed for c in grade.checks) / max(len(grade.checks), 1)


async def tool_calls(state: vf.State) -> float:
    """Tool calls that reached the environment's tool layer."""
    grade = _grade(state)
    return float(0 if grade is None else grade.tool_calls)


async def faults_injected(state: vf.State) -> float:
    """Faults the episode injected (E1-E3)."""
    episode = state.get(EPISODE_KEY)
    return float(0 if episode is None else len(cast(EnvEpisode, episode).record.fault_log))


def verdict_rubric() -> vf.Rubric:
    """The rubric: the verdict as the reward, the grade's counts as metrics."""
    return vf.Rubric(
        funcs=[passed, checks_passed, tool_calls, faults_injected], weights=[1.0, 0.0, 0.0, 0.0]
    )


@contextlib.contextmanager
def environment_failures() -> Iterator[None]:
    """Any failure inside as verifiers' ``InfraError``: the rollout ends, with no grade.

    A failure there is the environment's (the simulator, the verifier, their providers),
    never the agent's: the episode answers the agent's bad calls with a message.
    """
    try:
        yield
    except Exception as error:
        raise vf.InfraError(failure_text(error)) from None  # the provider's request left out


def message_text(content: Any) -> str:
    """The text of a message's content: a string, or its text parts joined."""
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))


def _unanswered(state: vf.State, episode: EnvEpisode) -> StopReason:
    """Why a rollout that ended without an answer ended, as occubench names it."""
    if episode.at_call_limit():
        return StopReason.TOOL_CALL_LIMIT
    if state.get("stop_condition") == "max_turns_reached":
        return StopReason.TURN_LIMIT
    return StopReason.SAMPLE_LIMIT  # the prompt outgrew the model's context


class OccuBenchVerifiersEnv(vf.MultiTurnEnv):
    """occubench's tasks as a verifiers multi-turn tool environment (see the module doc).

    Args:
        source: The settings and models each rollout's episode is made with.
        train_rows: One row per training task (``task_row``); none: no training set.
        eval_rows: One row per evaluation task.
        max_turns: Most model turns of a rollout (-1: no cap but the episode's
            tool-call limit, which refuses calls past it).
    """

    def __init__(
        self,
        source: EpisodeSource,
        train_rows: list[dict[str, Any]],
        eval_rows: list[dict[str, Any]],
        max_turns: int,
    ) -> None:
        super().__init__(
            dataset=Dataset.from_list(train_rows) if train_rows else None,
            eval_dataset=Dataset.from_list(eval_rows),
            rubric=verdict_rubric(),
            max_turns=max_turns,
        )
        self.source = source

    async def setup_state(self, state: vf.State) -> vf.State:
        """Open the rollout's episode for the row's task."""
        with environment_failures():
            episode = self.source.episode(int(state["info"]["task_id"]))
            state[EPISODE_KEY] = episode
            await episode.reset()
        return state

    async def env_response(
        self, messages: vf.Messages, state: vf.State, **kwargs: Any
    ) -> vf.Messages:
        """Each tool call of the model's last message, answered by ``episode.step``."""
        episode = cast(EnvEpisode, state[EPISODE_KEY])
        last = cast(dict[str, Any], messages[-1])
        replies: list[vf.Message] = []
        for call in last.get("tool_calls") or []:
            function = call.get("function", {})
            action = ToolCallAction(
                tool=function.get("name", ""), arguments=function.get("arguments")
            )
            with environment_failures():
                result = await episode.step(action)
            reply = {
                "role": "tool",
                "content": result.observation,
                "tool_call_id": call.get("id", ""),
            }
            replies.append(cast(vf.Message, reply))
        return replies

    @vf.stop
    async def answered(self, state: vf.State) -> bool:
        """The model answered without a tool call: the rollout ends."""
        trajectory = state["trajectory"]
        if not trajectory:
            return False
        last = trajectory[-1]["completion"][-1]
        return bool(last["role"] == "assistant" and not last.get("tool_calls"))

    @vf.cleanup
    async def grade_episode(self, state: vf.State) -> None:
        """Grade the ended rollout once: its answer, or what it did when it gave none."""
        episode = cast(EnvEpisode | None, state.get(EPISODE_KEY))
        if episode is None or state.get("error") is not None or GRADE_KEY in state:
            return
        try:
            with environment_failures():
                grade = await _graded(state, episode)
        except vf.InfraError as error:
            state["error"] = error
            return
        state[GRADE_KEY] = grade.model_dump(mode="json")


async def _graded(state: vf.State, episode: EnvEpisode) -> Grade:
    """The episode's grade: its answer, or what it did when it gave none."""
    if state.get("stop_condition") == "answered":
        last = state["trajectory"][-1]["completion"][-1]
        return await episode.grade(message_text(last.get("content")))
    episode.close(stop_reason=_unanswered(state, episode))
    return await episode.grade_as_is()


def load_environment(
    dataset: str = "reference",
    simulator: str = "occubench/canned",
    verifier: str | None = None,
    max_turns: int = DEFAULT_TRAINING_MAX_TURNS,
    eval_fraction: float = DEFAULT_EVAL_FRACTION,
    split_seed: int = DEFAULT_SPLIT_SEED,
    **settings: Any,
) -> vf.Environment:
    """The verifiers environment of occubench's tasks: verifiers' entry point.

    Args:
        dataset: Dataset folder, or ``reference`` (the built-in suite).
        simulator: The simulator model (an Inspect model name).
        verifier: The judge; default the run's combination rule (the tasks' checks, or
            the simulator for a task without them).
        max_turns: Most model turns of a rollout.
        eval_fraction: Share of the selected tasks held out for evaluation (the nearest
            whole number, at least one); 1.0: every task, and no training set.
        split_seed: Seed of the split (``split_tasks``): the same seed, the same split.
        **settings: ``RunConfig`` fields: ``task_ids``, ``env_mode`` (E0-E3),
            ``fault_count``, ``fault_duration``, ``faults``, ``seed``, ``with_plan``,
            ``protocol``, ``votes``, ...

    Raises:
        ValidationError: a setting is unknown or invalid.
        DatasetError: the dataset is malformed or has none of the tasks.
        UsageError: the split would leave a side without a task, or the fraction is not
            in (0, 1].
    """
    source = EpisodeSource.of(dataset, simulator, verifier, **settings)
    split = split_tasks(source.task_ids(), eval_fraction, split_seed)

    def rows(task_ids: list[int]) -> list[dict[str, Any]]:
        return [task_row(source.episode(task_id).opening()) for task_id in task_ids]

    return OccuBenchVerifiersEnv(source, rows(split.train), rows(split.eval), max_turns)
