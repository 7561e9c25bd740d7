"""Stage g: diagnose a task no run with the plan solved, and patch its config or task."""

from __future__ import annotations

from enum import Enum

from inspect_ai.model import Model
from pydantic import BaseModel, Field

from occubench.dataset import EnvConfig
from occubench.synthesis._artifacts import StageResult
from occubench.synthesis._catalog import CatalogScenario
from occubench.synthesis._generate import generate_json
from occubench.synthesis._prompts import REPAIR, as_json, render_prompt
from occubench.synthesis._records import TaskDraft, named_by_content
from occubench.synthesis._subtopics import Subtopic
from occubench.synthesis._validate import validate_instance


class Diagnosis(str, Enum):  # noqa: UP042 - the str-Enum style of the package
    """Why a task could not be solved with its plan."""

    SCHEMA_MISMATCH = "schema_mismatch"
    """The plan's calls do not fit the tool schemas, or the tools do not return what is needed."""
    IMPOSSIBLE_STATE = "impossible_state"
    """The initial state lacks or contradicts what the task depends on."""
    AMBIGUOUS_INSTRUCTION = "ambiguous_instruction"
    """Instruction, plan and verification plan are unclear or disagree."""
    OTHER = "other"


class RepairPatch(BaseModel):
    """The generator's diagnosis and the full corrected config and/or task."""

    diagnosis: Diagnosis = Field(description="The cause found.")
    explanation: str = Field(description="What was wrong and what changed.")
    config: EnvConfig | None = Field(default=None, description="Corrected config, or None.")
    task: TaskDraft | None = Field(default=None, description="Corrected task, or None.")


class Repair(BaseModel):
    """A repaired instance: the diagnosis and the environment and task to run next."""

    diagnosis: Diagnosis
    explanation: str
    changed: list[str] = Field(description="What the patch replaced: 'config', 'task'.")
    env: EnvConfig = Field(description="The environment after the patch (named by content).")
    task: TaskDraft = Field(description="The task after the patch.")


def apply_patch(patch: RepairPatch, env: EnvConfig, task: TaskDraft) -> Repair:
    """The instance after ``patch``."""
    return Repair(
        diagnosis=patch.diagnosis,
        explanation=patch.explanation,
        changed=[name for name, part in (("config", patch.config), ("task", patch.task)) if part],
        env=named_by_content(patch.config) if patch.config else env,
        task=patch.task or task,
    )


def check_patch(patch: RepairPatch, env: EnvConfig, task: TaskDraft) -> list[str]:
    """Problems of a patch: nothing changed, the level changed, or the result is invalid."""
    if patch.config is None and patch.task is None:
        return ["both config and task are null: return the corrected config or task"]
    if patch.task is not None and patch.task.difficulty_level != task.difficulty_level:
        return [f"task.difficulty_level must stay {task.difficulty_level}"]
    repaired = apply_patch(patch, env, task)
    return validate_instance(repaired.env, repaired.task)


async def repair_instance(
    model: Model,
    scenario: CatalogScenario,
    subtopic: Subtopic,
    env: EnvConfig,
    task: TaskDraft,
    evidence: str,
    *,
    retries: int,
    seed: int | None = None,
) -> StageResult[Repair]:
    """Ask the generator to diagnose why ``task`` failed and to patch config or task.

    Args:
        model: The generator.
        scenario: The scenario.
        subtopic: The instance's sub-topic.
        env: The environment the task failed in.
        task: The task.
        evidence: What happened: failed runs (verifier feedback, checks, trajectories)
            or the validation problems of a previous patch.
        retries: Re-asks of an unusable or invalid patch.
        seed: Sampling seed.

    Returns:
        The repaired instance; its ``issues`` are the problems the patch still has.
    """
    prompt = render_prompt(
        REPAIR,
        scenario=as_json(scenario),
        subtopic=as_json(subtopic),
        environment=as_json(env),
        task=as_json(task),
        evidence=evidence,
    )
    result = await generate_json(
        model,
        prompt,
        RepairPatch,
        retries=retries,
        seed=seed,
        check=lambda patch: check_patch(patch, env, task),
    )
    value = apply_patch(result.value, env, task) if result.value is not None else None
    return StageResult[Repair](value=value, issues=result.issues, usage=result.usage)
