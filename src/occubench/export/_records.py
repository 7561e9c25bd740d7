"""Trajectories as training data: one record per logged sample, every fault annotated.

The record is the common source of every export format. Messages keep what the agent
saw (the degraded copy of an observation, the error it was answered with), and each
tool result that was not the environment's clean answer carries ``faults``: the injected
fault's kind, whether it was an explicit error, and what changed, or a refusal of a
malformed call; so recovery behaviour can be trained on and studied.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, Field

from occubench.faults import FaultFamily


class Verdict(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """Which samples an export keeps, by their verdict."""

    PASSED = "passed"
    FAILED = "failed"
    ALL = "all"
    """Every graded sample (errored ones never: they have no verdict)."""


class FaultNote(BaseModel):
    """Why a tool result is not the environment's clean answer."""

    kind: str = Field(
        description="The fault kind (http_500, truncated_list, ...), a family name, or "
        "'refused' for a call refused before the environment."
    )
    family: FaultFamily | None = Field(default=None, description="Fault family; None for E1-E3.")
    explicit: bool = Field(description="An error answer (True) or a changed observation.")
    changes: list[str] = Field(description="What the agent's copy differs in, or the refusal.")


class ExportedCall(BaseModel):
    """One tool call of an assistant message."""

    id: str = Field(description="The call's id (the tool message answering it names it).")
    name: str = Field(description="The tool called.")
    arguments: str = Field(description="Its arguments, as JSON text.")


class ExportedMessage(BaseModel):
    """One message of a trajectory."""

    role: str = Field(description="system, user, assistant or tool.")
    content: str = Field(description="The message text.")
    tool_calls: list[ExportedCall] = Field(
        default_factory=list, description="An assistant message's tool calls."
    )
    tool_call_id: str | None = Field(default=None, description="A tool message's call id.")
    name: str | None = Field(default=None, description="A tool message's tool.")
    faults: list[FaultNote] = Field(
        default_factory=list, description="A tool message's faults (empty: a clean answer)."
    )


class ExportedTrajectory(BaseModel):
    """One sample as training data."""

    id: str = Field(description="run id, task id and epoch, unique across logs.")
    task_id: int | str = Field(description="The task.")
    epoch: int = Field(description="The epoch of the sample.")
    agent_model: str = Field(description="What played the agent (the report's label).")
    simulator_model: str | None = Field(description="The simulator role's model.")
    env_mode: str = Field(description="E0-E3.")
    industry: str = Field(description="The task's industry.")
    domain: str = Field(description="The task's domain.")
    scenario: str = Field(description="The task's scenario.")
    difficulty: int = Field(description="The task's difficulty level.")
    passed: bool = Field(description="The verdict.")
    tools: list[dict[str, Any]] = Field(
        description="The tools offered, as OpenAI function tools ({type, function})."
    )
    messages: list[ExportedMessage] = Field(description="The conversation, in order.")

    @property
    def faulted_messages(self) -> int:
        """Tool results that carry a fault note."""
        return sum(bool(m.faults) for m in self.messages)
