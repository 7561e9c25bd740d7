"""Stage a: a scenario -> non-overlapping sub-topics and a reference document."""

from __future__ import annotations

from inspect_ai.model import Model
from pydantic import BaseModel, Field

from occubench.synthesis._artifacts import StageResult
from occubench.synthesis._catalog import CatalogScenario
from occubench.synthesis._generate import generate_json
from occubench.synthesis._prompts import SUBTOPICS, as_json, render_prompt


class Subtopic(BaseModel):
    """One slice of a scenario's work; it becomes one environment."""

    title: str = Field(min_length=1, description="Short name of the slice.")
    summary: str = Field(min_length=1, description="Records involved, decisions, pitfalls.")


class Term(BaseModel):
    """A term of the trade."""

    term: str = Field(min_length=1)
    definition: str = Field(min_length=1)


class StateVariable(BaseModel):
    """Something a system supporting the work keeps track of."""

    name: str = Field(min_length=1)
    description: str = Field(min_length=1)


class ReferenceDocument(BaseModel):
    """How the scenario's work is done; every later stage is given it."""

    terminology: list[Term] = Field(description="Terms with definitions.")
    workflow: list[str] = Field(description="The usual steps, in order.")
    state_variables: list[StateVariable] = Field(description="What the systems track.")
    edge_cases: list[str] = Field(description="Situations that need care.")
    constraints: list[str] = Field(description="Rules, thresholds, deadlines, approvals.")


class ScenarioPlan(BaseModel):
    """The output of stage a for one scenario."""

    subtopics: list[Subtopic] = Field(description="Non-overlapping sub-topics, in order.")
    reference: ReferenceDocument = Field(description="The scenario's reference document.")


def check_plan(plan: ScenarioPlan, count: int) -> list[str]:
    """Problems of a plan: wrong number of sub-topics, repeated titles."""
    problems = []
    if len(plan.subtopics) != count:
        problems.append(f"expected exactly {count} sub-topics, got {len(plan.subtopics)}")
    titles = [s.title.strip().casefold() for s in plan.subtopics]
    repeated = sorted({t for t in titles if titles.count(t) > 1})
    if repeated:
        problems.append(f"sub-topic titles must be unique; repeated: {repeated}")
    return problems


async def plan_scenario(
    model: Model, scenario: CatalogScenario, count: int, *, retries: int, seed: int | None = None
) -> StageResult[ScenarioPlan]:
    """Ask the generator for ``count`` sub-topics of ``scenario`` and its reference document."""
    prompt = render_prompt(SUBTOPICS, scenario=as_json(scenario), count=count)
    return await generate_json(
        model,
        prompt,
        ScenarioPlan,
        retries=retries,
        seed=seed,
        check=lambda plan: check_plan(plan, count),
    )
