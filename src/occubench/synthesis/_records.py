"""What the generator writes for a task, and how drafts become dataset records."""

from __future__ import annotations

import hashlib
import json

from pydantic import BaseModel, ConfigDict, Field

from occubench.dataset import Check, EnvConfig, PlanStep, TaskRecord

DIFFICULTY_LEVELS = (1, 2, 3)
"""The difficulty levels a sub-topic gets one task each of."""


class TaskDraft(BaseModel):
    """A task as the generator writes it (no id, scenario or env name yet)."""

    model_config = ConfigDict(extra="ignore")

    difficulty_level: int = Field(ge=1, le=3, description="1 (easy) to 3 (hard).")
    agent_instruction: str = Field(min_length=1, description="What the agent is asked.")
    solution_plan: str = Field(
        min_length=1, description="Numbered 'N. Call TOOL with {args}.' lines, then 'Answer:'."
    )
    plan_calls: list[PlanStep] = Field(
        min_length=1, description="The plan's tool calls, structured, in order."
    )
    verification_plan: str = Field(min_length=1, description="The verifier's criteria.")
    checks: list[Check] = Field(
        default_factory=list, description="Deterministic checks the plan passes."
    )

    def to_record(self, task_id: int, scenario: str, env_name: str) -> TaskRecord:
        """The dataset record (extension fields: solution_plan, checks, expected_tool_calls)."""
        return TaskRecord(
            task_id=task_id,
            difficulty_level=self.difficulty_level,
            task_scenario_name=scenario,
            agent_instruction=self.agent_instruction,
            env_name=env_name,
            verification_plan=self.verification_plan,
            solution_plan=self.solution_plan,
            checks=self.checks or None,
            expected_tool_calls=len(self.plan_calls),
        )


def content_name(env: EnvConfig) -> str:
    """``env_<12 hex>``: a hash of the config's content, so equal configs share one file."""
    body = env.model_dump(mode="json", exclude={"environment_name"}, exclude_none=True)
    digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
    return f"env_{digest[:12]}"


def named_by_content(env: EnvConfig) -> EnvConfig:
    """``env`` with its name set to ``content_name(env)``."""
    return env.model_copy(update={"environment_name": content_name(env)})
