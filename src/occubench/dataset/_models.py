"""Pydantic models of the on-disk formats: env configs, tasks, scenarios.

The public OccuBench fields load unchanged; everything occubench adds is an optional
field, so what our pipeline writes stays readable by the official code.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from occubench.records import NullsKept


class _Record(BaseModel):
    """Base for on-disk records: unknown fields are kept, not rejected."""

    model_config = ConfigDict(extra="allow")


class ToolSpec(_Record):
    """One action of an environment, exposed to the agent as a function tool."""

    name: str = Field(min_length=1, description="Function name the agent calls.")
    description: str = Field(description="What the action does, shown to the agent.")
    parameters: dict[str, Any] = Field(
        description="JSON Schema (an object schema) of the action's arguments."
    )
    example_output: Any = Field(
        default=None, description="An example observation; optional in the release."
    )


class CannedObservation(_Record):
    """The observation an exact call (same tool, same arguments) must return."""

    tool: str = Field(description="Tool name.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Exact arguments.")
    observation: dict[str, Any] = Field(description="The observation to return.")


class EnvConfig(_Record):
    """A Language Environment Simulator config: the four-part declarative spec."""

    environment_name: str = Field(description="Id of the env, the config's file stem.")
    world_model_system_prompt: str = Field(description="System prompt of the simulator.")
    action_set_definitions: list[ToolSpec] = Field(description="The env's tools.")
    task_initial_state: dict[str, Any] = Field(description="State before the first call.")
    state_description: dict[str, Any] = Field(
        description="Meaning of each state field (usually strings)."
    )
    fault_hints: dict[str, Any] | None = Field(
        default=None, description="Extension: hints for fault injection (key fields, ...)."
    )
    canned_observations: list[CannedObservation] | None = Field(
        default=None,
        description="Extension: known observations of exact calls, shown to the simulator.",
    )


class PlanStep(_Record):
    """One expected tool call of a structured reference plan."""

    tool: str = Field(description="Tool name.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Arguments.")
    critical: bool = Field(default=False, description="The answer depends on this call.")


class ReferencePlan(_Record):
    """Extension: the ordered calls that solve a task and the facts its answer states."""

    steps: list[PlanStep] = Field(description="Tool calls in order.")
    answer: str = Field(
        description=(
            "Final answer template; {{N.path}} is the value at path in step N's observation."
        )
    )
    answer_facts: list[str] = Field(
        default_factory=list, description="The facts the final answer must state (clean values)."
    )


class ToolCalledCheck(_Record):
    """Passes when the tool was called with arguments that include ``arguments``."""

    kind: Literal["tool_called"] = "tool_called"
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ToolNotCalledCheck(_Record):
    """Passes when the tool was never called."""

    kind: Literal["tool_not_called"] = "tool_not_called"
    tool: str


class OrderCheck(_Record):
    """Passes when these tools were first called in this order."""

    kind: Literal["order"] = "order"
    tools: list[str] = Field(min_length=2)


class AnswerContainsCheck(_Record):
    """Passes when the final answer mentions every value (case-insensitive, whole tokens)."""

    kind: Literal["answer_contains"] = "answer_contains"
    values: list[str] = Field(min_length=1)


class AnswerExcludesCheck(_Record):
    """Passes when the final answer mentions none of the values (case-insensitive, whole tokens)."""

    kind: Literal["answer_excludes"] = "answer_excludes"
    values: list[str] = Field(min_length=1)


class StateEqualsCheck(_Record, NullsKept):
    """Passes when the final state holds ``value`` at ``path`` (explicit state mode only).

    ``value`` may be null: it is written as null where None fields are left out (a task's
    metadata in the log), so the check reads back the same.
    """

    kind: Literal["state_equals"] = "state_equals"
    path: str = Field(description="JSON Pointer into the state, e.g. /orders/0/status.")
    value: Any = Field(description="The expected value.")


Check = Annotated[
    ToolCalledCheck
    | ToolNotCalledCheck
    | OrderCheck
    | AnswerContainsCheck
    | AnswerExcludesCheck
    | StateEqualsCheck,
    Field(discriminator="kind"),
]
"""A deterministic check of a trajectory (extension field of a task)."""


class UserFact(_Record):
    """One thing the simulated user knows and tells only when the agent asks for it."""

    name: str = Field(min_length=1, description="What the fact is about (e.g. invoice_number).")
    value: str = Field(min_length=1, description="The fact as the user would state it.")
    reveal_when: str = Field(
        min_length=1, description="The question that earns it (e.g. 'asked for the invoice')."
    )


class UserBrief(_Record):
    """Extension: a person on the other side of the task (``user``), played by a model.

    The agent's instruction is then the user's opening request; the brief is what only the
    user model sees: who they are, what they want, what they know and reveal only when
    asked, and what ends the conversation.
    """

    persona: str = Field(min_length=1, description="Who the user is, in a sentence or two.")
    goal: str = Field(
        min_length=1, description="What the user wants done (never stated unasked in full)."
    )
    facts: list[UserFact] = Field(
        default_factory=list, description="What the user knows and reveals only when asked."
    )
    ends_when: str = Field(
        min_length=1,
        description="When the user ends the conversation (e.g. 'the agent confirms the "
        "booking with its reference').",
    )
    max_turns: int | None = Field(
        default=None, ge=1, description="The user's turn budget (default: the run's setting)."
    )


class TaskRecord(_Record):
    """One task: an instruction in one environment with its rubric."""

    task_id: int = Field(
        strict=True, description="Unique id of the task in the dataset (a JSON integer)."
    )
    difficulty_level: int = Field(ge=1, description="1 (easy) to 3 (hard) in the release.")
    task_scenario_name: str = Field(description="Scenario (professional role).")
    agent_instruction: str = Field(min_length=1, description="What the agent must do.")
    env_name: str = Field(description="Stem of the env config file in world_model_configs/.")
    verification_plan: str = Field(description="Rubric the verifier judges against.")
    solution_plan: str | None = Field(
        default=None, description="Extension: how to solve it (given in 'with plan' mode)."
    )
    reference_plan: ReferencePlan | None = Field(
        default=None, description="Extension: structured plan with expected observations."
    )
    checks: list[Check] | None = Field(
        default=None, description="Extension: deterministic checks of the trajectory."
    )
    expected_tool_calls: int | None = Field(
        default=None, ge=1, description="Extension: tool calls a solution takes."
    )
    user: UserBrief | None = Field(
        default=None,
        description="Extension: a simulated user the agent talks with (the instruction is "
        "then their opening request); without it the task runs as the release's do.",
    )


class Scenario(_Record):
    """A professional scenario of the pool, with its industry and domain."""

    category: str = Field(description="Industry (one of 10 in the release).")
    domain: str = Field(description="Domain (one of 65 in the release).")
    task_scenario_name: str = Field(description="Scenario name, as tasks refer to it.")
