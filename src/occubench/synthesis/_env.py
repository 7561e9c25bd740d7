"""Stage b: a sub-topic -> an environment config (validated, re-asked when invalid)."""

from __future__ import annotations

from inspect_ai.model import Model

from occubench.dataset import EnvConfig
from occubench.synthesis._artifacts import StageResult
from occubench.synthesis._catalog import CatalogScenario
from occubench.synthesis._generate import generate_json
from occubench.synthesis._prompts import ENVIRONMENT, as_json, render_prompt
from occubench.synthesis._records import named_by_content
from occubench.synthesis._subtopics import ReferenceDocument, Subtopic
from occubench.synthesis._validate import MAX_TOOLS, MIN_TOOLS, validate_env


async def generate_env(
    model: Model,
    scenario: CatalogScenario,
    reference: ReferenceDocument,
    subtopic: Subtopic,
    *,
    retries: int,
    seed: int | None = None,
) -> StageResult[EnvConfig]:
    """Ask the generator for the environment of ``subtopic``.

    The config's system prompt is the simulator's role and rules only:
    ``render_system_prompt`` appends the initial state, state description and tools to
    a prompt that does not embed them. The returned config is named by its content
    (``env_<hash>``); its ``issues`` are the validation problems left after the re-asks.
    """
    prompt = render_prompt(
        ENVIRONMENT,
        scenario=as_json(scenario),
        reference=as_json(reference),
        subtopic=as_json(subtopic),
        min_tools=MIN_TOOLS,
        max_tools=MAX_TOOLS,
    )
    result = await generate_json(
        model, prompt, EnvConfig, retries=retries, seed=seed, check=validate_env
    )
    if result.value is not None:
        result.value = named_by_content(result.value)
    return result
