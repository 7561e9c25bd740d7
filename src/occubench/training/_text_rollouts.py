"""A text model's completion rolled out through an episode into a reward.

A trainer that samples plain text (TRL's ``GRPOTrainer``, any GRPO-style loop) sees a
task as one prompt (``completion_prompt``: the agent's system prompt, the instruction,
the tools and the call format) and hands back completions. ``roll_out_completion`` reads a
completion as the agent's actions (``parse_completion``: each ``<tool_call>`` block a
call, the text around them the final answer; given the task's tool names, a completion
without such a block may write its calls as fenced or bare JSON objects naming one of
them, as small chat models often do), steps the calls in order through a fresh
``EnvEpisode`` (the simulator, the argument rule, faults), grades the answer with the
task's checks and the verifier, and turns the grade into a reward (``RewardRule``).
``rollout_rewards`` wraps that as a reward function of TRL's shape.

One completion is one turn: the calls are made after the model has written its answer,
so it sees no observation before answering (the tool-call checks reward the calls; the
answer's facts can only come from what the model has learnt).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable, Collection, Sequence
from enum import Enum
from typing import Any

from pydantic import BaseModel, Field

from occubench.env import EnvEpisode, EpisodeStart, StepResult, ToolCallAction
from occubench.grading import Grade
from occubench.text import loads


class RewardRule(str, Enum):
    """How a grade becomes a reward in [0, 1]."""

    PASSED = "passed"
    """1.0 for a passed task, 0.0 otherwise: the verdict (the Gymnasium env's reward)."""

    CHECKS = "checks"
    """The share of the task's checks passed (partial credit); the verdict for a task
    without checks."""


def reward_of(grade: Grade, rule: RewardRule = RewardRule.PASSED) -> float:
    """The reward of a grade under ``rule``; 0.0 for a pass the exploit guard zeroed."""
    if grade.exploit_zeroed:  # no partial credit for checks an exploit passed
        return 0.0
    if rule is RewardRule.CHECKS and grade.checks:
        return sum(c.passed for c in grade.checks) / len(grade.checks)
    return 1.0 if grade.passed else 0.0


CALL_FORMAT = (
    'To call a tool, write a block <tool_call>{"name": "<tool>", "arguments": {...}}'
    "</tool_call>, one per call. The calls are made in the order written; the text outside"
    " the blocks is your final answer."
)
"""How a completion writes its calls (the ``<tool_call>`` blocks most chat models use)."""

COMPLETION_PROMPT = "{system}\n\n{instruction}\n\nTools (JSON):\n{tools}\n\n{call_format}\n"
"""The prompt of one task for a text completion: filled by ``completion_prompt``."""

_CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)
_FENCED = re.compile(r"```(?:json|JSON)?[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)
"""A fenced code block; one the token cap cut before its closing fence runs to the end."""


class ParsedCompletion(BaseModel):
    """A completion read as an agent's actions."""

    calls: list[ToolCallAction] = Field(description="The tool calls, in the order written.")
    answer: str = Field(description="The final answer: the text outside the call blocks.")
    unreadable_calls: int = Field(
        default=0,
        description="Call blocks that are not a JSON object with a string `name` (not made).",
    )


def completion_prompt(start: EpisodeStart) -> str:
    """A task's prompt for a text completion (``COMPLETION_PROMPT``).

    ``start``: its episode's opening (``episode.opening()``, or what ``reset()`` gave).
    """
    tools = json.dumps([t.model_dump() for t in start.tools], ensure_ascii=False)
    return COMPLETION_PROMPT.format(
        system=start.system_prompt,
        instruction=start.instruction,
        tools=tools,
        call_format=CALL_FORMAT,
    )


def _call(block: str) -> ToolCallAction | None:
    """One ``<tool_call>`` block as a call; None when it is not a call object."""
    try:
        call = loads(block.strip())
    except (json.JSONDecodeError, RecursionError, ValueError):
        return None
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        return None
    arguments = call.get("arguments")
    return ToolCallAction(
        tool=call["name"], arguments=arguments if isinstance(arguments, dict | str) else None
    )


def parse_completion(text: str, tools: Collection[str] = ()) -> ParsedCompletion:
    """Read a completion: its ``<tool_call>`` blocks in order, the rest as the answer.

    ``tools``: the task's tool names. A completion without a ``<tool_call>`` block then
    reads its fenced code blocks (or, without any, a JSON object its text starts with)
    that are call objects naming one of them as its calls, in order, the rest as the
    answer; any other object stays in the answer (a known tool only: JSON the answer
    shows is not made a call).
    """
    blocks = [(m.start(), m.end(), m.group(1)) for m in _CALL.finditer(text)]
    if not blocks and tools:
        blocks = _object_calls(text, tools)
    calls = [_call(body) for _, _, body in blocks]
    kept, at = [], 0
    for start, end, _ in blocks:
        kept.append(text[at:start])
        at = end
    kept.append(text[at:])
    return ParsedCompletion(
        calls=[c for c in calls if c is not None],
        answer=" ".join(part.strip() for part in kept if part.strip()),
        unreadable_calls=sum(c is None for c in calls),
    )


def _object_calls(text: str, tools: Collection[str]) -> list[tuple[int, int, str]]:
    """Where ``text`` writes calls of known tools as JSON objects (start, end, the JSON).

    Its fenced blocks that are such calls, else its leading object when it is one.
    """
    spans = [(m.start(), m.end(), m.group(1)) for m in _FENCED.finditer(text)]
    if not spans:
        start = len(text) - len(text.lstrip())
        try:
            _, end = json.JSONDecoder().raw_decode(text, start)
        except (json.JSONDecodeError, RecursionError, ValueError):
            return []
        spans = [(start, end, text[start:end])]
    return [s for s in spans if (call := _call(s[2])) is not None and call.tool in tools]


class CompletionRollout(BaseModel):
    """One completion rolled out through its task's episode."""

    task_id: int = Field(description="The task.")
    reward: float = Field(description="The reward, in [0, 1] (``RewardRule``).")
    grade: Grade = Field(description="The episode's grade: the verdict, checks and votes.")
    steps: list[StepResult] = Field(description="What each call gave, in order.")
    unreadable_calls: int = Field(description="Call blocks that could not be read (not made).")


async def roll_out_completion(
    episode: EnvEpisode, completion: str, rule: RewardRule = RewardRule.PASSED
) -> CompletionRollout:
    """Make a completion's calls in an unopened episode, grade its answer, reward the grade.

    Raises:
        InfrastructureError: the simulator failed (not the model's failure: no reward).
        VerifierError: the verifier gave no readable vote.
    """
    await episode.reset()
    parsed = parse_completion(completion)
    steps = [await episode.step(call) for call in parsed.calls]
    grade = await episode.grade(parsed.answer)
    return CompletionRollout(
        task_id=episode.task.task_id,
        reward=reward_of(grade, rule),
        grade=grade,
        steps=steps,
        unreadable_calls=parsed.unreadable_calls,
    )


EpisodeFactory = Callable[[int], EnvEpisode]
"""A fresh, unopened episode of a task id: ``EpisodeSource.episode``, or ``make_episode``
with the run's settings."""

RewardFunction = Callable[..., Awaitable[list[float]]]
"""TRL's reward function shape: ``(prompts=, completions=, task_id=, **columns)``."""


def rollout_rewards(
    episodes: EpisodeFactory, rule: RewardRule = RewardRule.PASSED
) -> RewardFunction:
    """A reward function of TRL's shape that rolls each completion out (``roll_out_completion``).

    The trainer's dataset carries a ``task_id`` column beside its ``prompt`` (the task's
    ``completion_prompt``); TRL passes it per completion. A batch's episodes run at once.

    Args:
        episodes: A fresh episode per task id (``source.episode`` of an
            ``EpisodeSource``).
        rule: How a grade becomes a reward.
    """

    async def occubench(
        prompts: Sequence[Any], completions: Sequence[str], task_id: Sequence[int], **_: Any
    ) -> list[float]:
        """The reward of each completion of the batch."""
        if len(task_id) != len(completions):
            raise ValueError(
                f"{len(completions)} completions but {len(task_id)} task ids: the trainer's "
                "dataset needs a task_id column"
            )
        rollouts = await asyncio.gather(
            *(
                roll_out_completion(episodes(t), c, rule)
                for t, c in zip(task_id, completions, strict=True)
            )
        )
        return [r.reward for r in rollouts]

    return occubench
