"""Conversational variants of tasks: a user brief plus a shorter opening request.

The generator (stage ``converse``, prompt ``prompts/converse.md``) is shown a task's
request and verification plan and answers with a ``Conversion``: the user's opening
request, which leaves out one or more of the request's values, and the ``UserBrief``
of a user who knows them. ``check_conversion`` states what makes one valid; an invalid
answer is re-asked (``generate_json``), and a task still invalid after the re-asks is
dropped with its problems. The variant (``conversational_task``) keeps everything else
of the task, the verification plan verbatim, and leaves out the solution plan, which
would tell the agent what only the user knows.

``convert_dataset`` converts a dataset's tasks and writes the variants as a dataset in
the release layout, with ``conversion.json`` (``ConversionManifest``) beside the files.
"""

from __future__ import annotations

import asyncio
from enum import Enum
from pathlib import Path

from inspect_ai.model import Model
from pydantic import BaseModel, Field

from occubench.dataset import TASKS_FILE, Dataset, TaskRecord, UserBrief, write_dataset
from occubench.errors import UsageError
from occubench.roles import Role
from occubench.synthesis._artifacts import StageResult, TokenUsage
from occubench.synthesis._generate import generate_json
from occubench.synthesis._pipeline import NoProgress, Progress
from occubench.synthesis._prompts import CONVERSE, as_json, render_prompt

CONVERSION_FILE = "conversion.json"
"""The record of a conversion, written in the converted dataset's folder."""

CONVERSION_VERSION = 1
CONVERT_STAGE = "convert"
"""The conversion's name in progress reports."""


class Conversion(BaseModel):
    """The generator's answer for one task: the opening request and the user's brief."""

    opening: str = Field(min_length=1, description="The user's first message.")
    user: UserBrief = Field(description="The simulated user, who knows what the opening omits.")


class Outcome(str, Enum):  # noqa: UP042 - the str-Enum style of the package
    """What became of a task."""

    CONVERTED = "converted"
    KEPT = "kept"
    """It already had a user brief: written as it was."""
    DROPPED = "dropped"
    """The generator gave no valid conversion within its re-asks: not written."""


class ConvertedTask(BaseModel):
    """The conversion of one task."""

    task_id: int
    outcome: Outcome
    facts: list[str] = Field(default_factory=list, description="Names of the user's facts.")
    problems: list[str] = Field(
        default_factory=list, description="Why it was dropped (the last answer's problems)."
    )


class ConversionManifest(BaseModel):
    """``conversion.json``: where the tasks came from, with which generator, and each outcome."""

    version: int = CONVERSION_VERSION
    source: str = Field(description="The dataset converted (its name or folder).")
    generator: str = Field(description="The generator model.")
    generator_retries: int = Field(ge=0, description="Re-asks per task on an invalid answer.")
    seed: int | None = Field(default=None, description="The generator's sampling seed.")
    tasks: list[ConvertedTask]
    tokens: dict[str, TokenUsage] = Field(
        default_factory=dict, description="Tokens spent, by role."
    )

    def count(self, outcome: Outcome) -> int:
        """How many tasks had ``outcome``."""
        return sum(t.outcome == outcome for t in self.tasks)


def check_conversion(conversion: Conversion, task: TaskRecord) -> list[str]:
    """The problems of a conversion of ``task`` (none: it is valid).

    Valid: at least one fact, fact names unique, every fact's value taken verbatim from
    the task's request, no fact's value in the opening (case ignored), and the opening
    shorter than the request.
    """
    request, opening = task.agent_instruction, conversion.opening
    facts = conversion.user.facts
    problems = []
    if not facts:
        problems.append("user.facts is empty: the opening must leave out a value the user knows")
    names = [fact.name for fact in facts]
    for name in sorted({n for n in names if names.count(n) > 1}):
        problems.append(f"user.facts: the name {name!r} is used more than once")
    for i, fact in enumerate(facts):
        if fact.value not in request:
            problems.append(
                f"user.facts.{i}.value: {fact.value!r} is not in the task's request; a fact "
                "must be copied exactly from it"
            )
        if fact.value.casefold() in opening.casefold():
            problems.append(
                f"opening: it still states {fact.name} ({fact.value!r}), which only the user "
                "should tell"
            )
    if len(opening) >= len(request):
        problems.append(
            f"opening: {len(opening)} characters, not shorter than the request's {len(request)}"
        )
    return problems


def conversational_task(task: TaskRecord, conversion: Conversion) -> TaskRecord:
    """The variant of ``task``: the opening as its request, the brief as its user (module doc)."""
    return task.model_copy(
        update={
            "agent_instruction": conversion.opening,
            "user": conversion.user,
            "solution_plan": None,
        }
    )


async def convert_task(
    model: Model, task: TaskRecord, *, retries: int, seed: int | None = None
) -> StageResult[Conversion]:
    """Ask the generator for a valid conversion of ``task``, re-asking up to ``retries`` times."""
    shown = task.model_dump(
        mode="json", include={"task_scenario_name", "agent_instruction", "verification_plan"}
    )
    return await generate_json(
        model,
        render_prompt(CONVERSE, task=as_json(shown)),
        Conversion,
        retries=retries,
        seed=seed,
        check=lambda conversion: check_conversion(conversion, task),
    )


def convert_dataset(
    data: Dataset,
    model: Model,
    out: Path,
    *,
    retries: int,
    seed: int | None = None,
    source: str | None = None,
    progress: Progress | None = None,
) -> ConversionManifest:
    """Convert every task of ``data`` and write the variants to ``out`` (module doc).

    Tasks that already have a user brief are written as they are; a task the generator
    gives no valid conversion for is left out and listed with its problems.

    Raises:
        UsageError: ``out`` already holds a dataset.
    """
    if (out / TASKS_FILE).exists():
        raise UsageError(f"{out} already holds a dataset ({TASKS_FILE}): choose a new folder")
    progress = progress or NoProgress()
    progress.stage(CONVERT_STAGE, len(data.tasks))

    async def one(task: TaskRecord) -> StageResult[Conversion] | None:
        try:
            if task.user is not None:
                return None
            return await convert_task(model, task, retries=retries, seed=seed)
        finally:
            progress.advance(CONVERT_STAGE)

    async def every() -> list[StageResult[Conversion] | None]:
        return list(await asyncio.gather(*(one(task) for task in data.tasks)))

    results = asyncio.run(every())
    written: list[TaskRecord] = []
    records: list[ConvertedTask] = []
    tokens = TokenUsage()
    for task, result in zip(data.tasks, results, strict=True):
        if result is None:
            written.append(task)
            records.append(ConvertedTask(task_id=task.task_id, outcome=Outcome.KEPT))
            continue
        tokens += result.usage.get(Role.GENERATOR.value, TokenUsage())
        if result.value is None or result.issues:
            problems = result.issues or ["no answer parsed"]
            records.append(
                ConvertedTask(task_id=task.task_id, outcome=Outcome.DROPPED, problems=problems)
            )
            continue
        written.append(conversational_task(task, result.value))
        names = [fact.name for fact in result.value.user.facts]
        records.append(ConvertedTask(task_id=task.task_id, outcome=Outcome.CONVERTED, facts=names))
    envs = {task.env_name for task in written}
    write_dataset(
        out,
        written,
        [env for name, env in data.envs.items() if name in envs],
        data.scenarios.values(),
    )
    manifest = ConversionManifest(
        source=source or str(data.root),
        generator=str(model),
        generator_retries=retries,
        seed=seed,
        tasks=records,
        tokens={Role.GENERATOR.value: tokens},
    )
    (out / CONVERSION_FILE).write_text(manifest.model_dump_json(indent=2) + "\n")
    return manifest
