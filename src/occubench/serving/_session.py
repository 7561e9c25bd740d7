"""A served episode: what an MCP client (or agent program) can do with one environment.

``ServedEpisode`` wraps an ``EnvEpisode`` for outside callers, independent of MCP's
types: the env's tools plus the submit tool, calls serialized one at a time (the
environment is a sequence of calls), bad input answered with an error and never raised,
the submission graded and its verdict returned, and the end of the episode signalled.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import anyio
from pydantic import BaseModel, Field

from occubench.env import EnvEpisode, EpisodeOver, EpisodeStart, ToolCallAction, ToolSpecView
from occubench.errors import InfrastructureError, UsageError
from occubench.grading import Grade

SUBMIT_DESCRIPTION = (
    "Submit your final answer and end the task. State the outcome and every figure, "
    "identifier or decision the task asks for. No tool can be called afterwards; the "
    "reply is the verdict."
)


class ToolReply(BaseModel):
    """What a served tool call returns to the client."""

    text: str = Field(description="The reply's text: an observation, a refusal, a verdict.")
    is_error: bool = Field(default=False, description="An error the client should see as such.")


def verdict_text(grade: Grade) -> str:
    """The verdict as the client is told it (JSON)."""
    return json.dumps(
        {
            "verdict": "passed" if grade.passed else "failed",
            "explanation": grade.explanation(),
            "checks": None
            if grade.checks is None
            else [c.model_dump(mode="json") for c in grade.checks],
            "votes": None
            if grade.votes is None
            else [{"is_correct": v.is_correct, "feedback": v.feedback} for v in grade.votes],
        },
        ensure_ascii=False,
    )


class ServedEpisode:
    """One opened episode as served to a client.

    Args:
        episode: The episode, already reset.
        start: What its reset gave (instruction, tools).
        submit_tool: Name of the tool that submits the final answer.
    """

    def __init__(self, episode: EnvEpisode, start: EpisodeStart, submit_tool: str) -> None:
        if submit_tool in {t.name for t in start.tools}:
            raise UsageError(f"submit tool {submit_tool!r} has the name of one of the env's tools")
        self.episode = episode
        self.start = start
        self.submit_tool = submit_tool
        self.ended = anyio.Event()
        self.failure: InfrastructureError | None = None
        self._lock = anyio.Lock()

    @property
    def submitted(self) -> bool:
        """Whether the client submitted an answer (and it was graded)."""
        return self.episode.verdict is not None

    def tools(self) -> list[ToolSpecView]:
        """The env's tools and the submit tool."""
        submit = ToolSpecView(
            name=self.submit_tool,
            description=SUBMIT_DESCRIPTION,
            parameters={
                "type": "object",
                "properties": {"answer": {"type": "string", "description": "The final answer."}},
                "required": ["answer"],
                "additionalProperties": False,
            },
        )
        return [*self.start.tools, submit]

    async def call(self, name: str, arguments: Mapping[str, Any] | str | None) -> ToolReply:
        """Answer one call of the client; never raises for anything the client sent."""
        async with self._lock:
            if self.failure is not None:
                return ToolReply(text=f"the environment failed: {self.failure}", is_error=True)
            try:
                if name == self.submit_tool:
                    return await self._submit(arguments)
                given = dict(arguments) if isinstance(arguments, Mapping) else arguments
                step = await self.episode.step(ToolCallAction(tool=name, arguments=given))
            except EpisodeOver as over:
                return ToolReply(text=str(over), is_error=True)
            except InfrastructureError as failed:
                self.failure = failed
                self.ended.set()
                return ToolReply(
                    text=f"the environment failed ({failed.source.value} error): {failed}; "
                    "the episode ends and is recorded as an error",
                    is_error=True,
                )
            return ToolReply(text=step.observation, is_error=step.refused is not None)

    async def _submit(self, arguments: Mapping[str, Any] | str | None) -> ToolReply:
        answer = arguments.get("answer") if isinstance(arguments, Mapping) else None
        if not isinstance(answer, str):
            return ToolReply(
                text=f"{self.submit_tool} takes one argument, answer: a string", is_error=True
            )
        try:
            grade = await self.episode.grade(answer)
        finally:
            self.ended.set()
        return ToolReply(text=verdict_text(grade))
