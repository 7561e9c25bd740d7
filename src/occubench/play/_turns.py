"""What a person playing the agent is shown and what they do: typed records both interfaces share.

A ``Turn`` is everything the agent model would be given at one generate call, read from
the same messages and tools (the system prompt, the instruction, the calls made so far
and their observations, the tools); a ``Move`` is what the person does with it: call a
tool, or answer. ``PlayInfo`` is the session's header (what a model is never told:
the task's place in the benchmark and the fault settings it runs under), and
``PlayResult`` the verdict read back from the session's log.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, Field, model_validator

from occubench.faults import InjectedFault


class FieldKind(str, Enum):
    """How a form asks for one argument."""

    TEXT = "text"
    """A string, as typed."""
    INTEGER = "integer"
    """A whole number."""
    NUMBER = "number"
    """Any number."""
    BOOLEAN = "boolean"
    """true or false."""
    CHOICE = "choice"
    """One of the schema's ``enum`` values."""
    JSON = "json"
    """Any other value (an array, an object, a union of types), typed as JSON."""


class FormField(BaseModel):
    """One argument of a tool as its form asks for it (from the tool's JSON Schema)."""

    name: str = Field(description="The argument's name.")
    kind: FieldKind = Field(description="How it is typed in.")
    type_text: str = Field(description="Its type as the schema says (string, array of integer).")
    required: bool = Field(description="The schema requires it.")
    description: str = Field(default="", description="The schema's description of it.")
    choices: list[str] = Field(
        default_factory=list, description="For a choice: each allowed value as JSON text."
    )


class ToolView(BaseModel):
    """A tool as the agent is offered it, with the form made from its schema."""

    name: str = Field(description="The tool's name.")
    description: str = Field(description="What it does, as the agent reads it.")
    parameters: dict[str, Any] = Field(description="The JSON Schema of its arguments.")
    fields: list[FormField] = Field(description="One form field per argument.")


class EntryKind(str, Enum):
    """What one line of a session's transcript is."""

    CALL = "call"
    """A tool call the person made."""
    OBSERVATION = "observation"
    """What the environment answered."""
    REFUSED = "refused"
    """A call answered with an error before it reached the environment."""


class Entry(BaseModel):
    """One call, or one observation, of the session so far."""

    kind: EntryKind = Field(description="Call, observation or refusal.")
    tool: str = Field(description="The tool called.")
    text: str = Field(description="The arguments as JSON (a call) or the observation's text.")


class Turn(BaseModel):
    """What the person sees when it is their move (what the model would be given)."""

    number: int = Field(ge=1, description="1 for the first move, then one more per move.")
    system_prompt: str = Field(description="The agent's system prompt.")
    instruction: str = Field(description="The task, as the agent is given it.")
    tools: list[ToolView] = Field(description="The environment's tools.")
    entries: list[Entry] = Field(default_factory=list, description="The calls and observations.")

    @property
    def calls(self) -> int:
        """Tool calls made so far."""
        return sum(e.kind is EntryKind.CALL for e in self.entries)

    def tool(self, name: str) -> ToolView | None:
        """The tool of that name, if the environment has one."""
        return next((t for t in self.tools if t.name == name), None)


class Move(BaseModel):
    """What the person does with a turn: call one tool, or give the final answer."""

    tool: str | None = Field(default=None, description="The tool to call.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Its arguments.")
    answer: str | None = Field(
        default=None, description="The final answer (the empty text: the person gave up)."
    )

    @model_validator(mode="after")
    def _one_move(self) -> Move:
        if (self.tool is None) == (self.answer is None):
            raise ValueError("a move is either a tool call or an answer")
        return self


class PlayInfo(BaseModel):
    """A session's header: who plays which task under which settings."""

    player: str = Field(description="The person's name (the agent is human/<name>).")
    task_id: int = Field(description="The task played.")
    scenario: str = Field(description="Its scenario (professional role).")
    industry: str = Field(description="Its industry.")
    domain: str = Field(description="Its domain.")
    difficulty: int = Field(description="Its difficulty level.")
    env_mode: str = Field(description="E0 clean, E1 explicit, E2 implicit, E3 mixed.")
    fault_count: int = Field(description="Fault events per task (E1-E3).")
    fault_duration: int = Field(description="Calls each fault lasts.")
    families: list[str] = Field(default_factory=list, description="Extra fault families.")
    seed: int = Field(description="Seed of the fault plan.")
    protocol: str = Field(description="The run's protocol.")
    checks_arguments: bool = Field(
        description="The protocol checks tool arguments against the schema (occubench)."
    )
    max_tool_calls: int = Field(description="Tool calls allowed (0: no cap).")
    simulator: str = Field(description="The simulator model.")
    agent: str | None = Field(
        default=None, description="The agent model, when the person plays another seat."
    )

    def faults_text(self) -> str:
        """The fault settings in words (``E0, no faults``; ``E2, 2 faults x 2 calls, seed 0``)."""
        parts = []
        if self.env_mode != "E0" and self.fault_count > 0:
            parts.append(f"{self.fault_count} fault(s) x {self.fault_duration} call(s)")
        if self.families:
            parts.append("families " + ", ".join(self.families))
        if not parts:
            return f"{self.env_mode}, no faults"
        return f"{self.env_mode}, " + ", ".join(parts) + f", seed {self.seed}"


class PlayResult(BaseModel):
    """How the session was graded, read back from its log."""

    log: str = Field(description="The session's .eval log.")
    passed: bool | None = Field(description="The verdict (None: the session errored).")
    error: str | None = Field(default=None, description="The infrastructure error, if any.")
    answer: str = Field(default="", description="The final answer the grader saw.")
    explanation: str = Field(default="", description="The scorer's summary.")
    votes: list[dict[str, Any]] = Field(default_factory=list, description="The judge's votes.")
    checks: list[dict[str, Any]] = Field(default_factory=list, description="Check results.")
    faults: list[InjectedFault] = Field(
        default_factory=list, description="The faults the session met (the log's fault log)."
    )
    tool_calls: int = Field(default=0, description="Tool calls that reached the environment.")
    stop_reason: str | None = Field(default=None, description="Why the session ended.")

    def verdict_text(self) -> str:
        """PASSED, FAILED or ERROR (with the error)."""
        if self.passed is None:
            return f"ERROR: {self.error or 'no verdict'}"
        return "PASSED" if self.passed else "FAILED"
