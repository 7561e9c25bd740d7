"""What a served session leaves in the log (Inspect store, ``ServedSession:*``)."""

from __future__ import annotations

from enum import Enum
from typing import Any

from inspect_ai.util import StoreModel
from pydantic import BaseModel, Field

from occubench.errors import ErrorSource, InfrastructureError


class AgentProgramError(InfrastructureError):
    """The agent program crashed, or ran past its time limit, without an answer.

    Counted apart like infrastructure errors (``ErrorSource.AGENT``), not as a failure:
    the program did not finish, so the environment's verdict says nothing about it.
    """

    source = ErrorSource.AGENT


class SessionEndedError(InfrastructureError):
    """A served session ended without an answer, and the run records that as an error."""

    source = ErrorSource.AGENT


class AnswerSource(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """Where the graded answer came from."""

    SUBMITTED = "submitted"
    """The client called the submit tool."""
    STDOUT = "stdout"
    """The agent program's last line of standard output."""
    NONE = "none"
    """No answer: graded on what the agent did."""


class ProgramRun(BaseModel):
    """One run of an agent program."""

    argv: list[str] = Field(
        description="The command as run (placeholders filled, the token redacted)."
    )
    exit_code: int | None = Field(description="Its exit status; None when it was stopped.")
    timed_out: bool = Field(description="Stopped at the time limit.")
    stopped_after_submit: bool = Field(
        default=False, description="Still running after submitting, and stopped."
    )
    seconds: float = Field(description="Wall time it ran.")
    stdout_tail: str = Field(description="The end of its standard output.")
    stderr_tail: str = Field(description="The end of its standard error.")


class ServedSession(StoreModel):
    """How the agent reached the environment, per sample."""

    transport: str | None = Field(default=None, description="stdio or http.")
    endpoint: str | None = Field(default=None, description="The MCP endpoint served.")
    bridged: bool = Field(
        default=False, description="An OpenAI-compatible endpoint through Inspect was offered."
    )
    answer_source: AnswerSource | None = Field(
        default=None, description="Where the answer came from."
    )
    program: dict[str, Any] | None = Field(default=None, description="ProgramRun dump.")
