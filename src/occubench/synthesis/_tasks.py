"""Stage c: an environment -> one task per difficulty level, with plans and checks."""

from __future__ import annotations

from inspect_ai.model import Model
from pydantic import BaseModel, Field

from occubench.dataset import EnvConfig
from occubench.synthesis._artifacts import StageResult
from occubench.synthesis._catalog import CatalogScenario
from occubench.synthesis._generate import generate_json
from occubench.synthesis._prompts import TASKS, as_json, render_prompt
from occubench.synthesis._records import DIFFICULTY_LEVELS, TaskDraft
from occubench.synthesis._subtopics import Subtopic
from occubench.synthesis._validate import validate_task


class TaskSet(BaseModel):
    """The output of stage c for one environment."""

    tasks: list[TaskDraft] = Field(description="One task per difficulty level.")

    def level(self, difficulty: int) -> TaskDraft | None:
        """The task of one difficulty level (None when there is none)."""
        return next((t for t in self.tasks if t.difficulty_level == difficulty), None)


def check_task_set(tasks: TaskSet, env: EnvConfig) -> list[str]:
    """Problems of a task set: levels missing or repeated, and each task's own problems."""
    levels = [t.difficulty_level for t in tasks.tasks]
    problems = []
    if sorted(levels) != list(DIFFICULTY_LEVELS):
        problems.append(
            f"expected exactly one task per difficulty level {list(DIFFICULTY_LEVELS)}, "
            f"got levels {levels}"
        )
    for task in tasks.tasks:
        problems += validate_task(task, env)
    return problems


async def generate_tasks(
    model: Model,
    scenario: CatalogScenario,
    subtopic: Subtopic,
    env: EnvConfig,
    *,
    retries: int,
    seed: int | None = None,
) -> StageResult[TaskSet]:
    """Ask the generator for one task per difficulty level in ``env``.

    The ``issues`` left after the re-asks may concern only some tasks: the pipeline
    validates each task again and keeps the valid ones.
    """
    prompt = render_prompt(
        TASKS,
        levels=", ".join(map(str, DIFFICULTY_LEVELS)),
        scenario=as_json(scenario),
        subtopic=as_json(subtopic),
        environment=as_json(
            env.model_dump(mode="json", exclude={"environment_name"}, exclude_none=True)
        ),
    )
    return await generate_json(
        model,
        prompt,
        TaskSet,
        retries=retries,
        seed=seed,
        check=lambda tasks: check_task_set(tasks, env),
    )
