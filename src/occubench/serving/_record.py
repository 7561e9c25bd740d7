"""What a served session leaves in the log (Inspect store, ``ServedSession:*``)."""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Any

from inspect_ai.util import StoreModel
from pydantic import BaseModel, Field, ValidationError

from occubench.errors import ErrorSource, InfrastructureError
from occubench.providers import Wire
from occubench.text import validation_line


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


class BridgedCall(BaseModel):
    """One generation an agent program asked of the bridge, as its wire answered it.

    The same generation is an Inspect model call of the agent model (its event, usage and
    cost in the sample's log); this says which wire asked for it and what that wire's
    answer reported (Messages: its input tokens plus those read from and written to the
    prompt cache).
    """

    wire: Wire = Field(description="The API the program spoke.")
    streamed: bool = Field(description="Whether the answer was sent as an event stream.")
    input_tokens: int = Field(description="Input tokens, as the answer reported them.")
    output_tokens: int = Field(description="Output tokens, as the answer reported them.")
    restored_reasoning: int = Field(
        default=0,
        description="Assistant turns of the request that came without the reasoning of the "
        "bridge's answer, and were given it back.",
    )


class ServedSession(StoreModel):
    """How the agent reached the environment, per sample."""

    transport: str | None = Field(default=None, description="stdio or http.")
    endpoint: str | None = Field(default=None, description="The MCP endpoint served.")
    bridged: bool = Field(
        default=False, description="A model endpoint through Inspect (the bridge) was offered."
    )
    answer_source: AnswerSource | None = Field(
        default=None, description="Where the answer came from."
    )
    program: dict[str, Any] | None = Field(default=None, description="ProgramRun dump.")
    calls: list[BridgedCall] = Field(
        default_factory=list, description="The program's generations through the bridge."
    )


CALLS_KEY = f"{ServedSession.__name__}:calls"
"""Where a logged store holds ``ServedSession.calls``."""


def served_calls(store: Mapping[str, Any]) -> tuple[list[BridgedCall], list[str]]:
    """An agent program's generations through the bridge, from a logged store (``sample.store``).

    Each record is read on its own: one that cannot be read is left out and named
    (``calls[2]: wire: Input should be ...``), the others kept. No record: an empty list.
    """
    calls, unread = [], []
    recorded = store.get(CALLS_KEY) or []
    for index, record in enumerate(recorded if isinstance(recorded, list) else [recorded]):
        try:
            calls.append(BridgedCall.model_validate(record))
        except ValidationError as e:
            unread.append(f"calls[{index}]: {validation_line(e)}")
    return calls, unread
