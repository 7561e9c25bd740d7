"""The synthesis manifest: settings, models, the funnel with every drop, tokens and cost."""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, Field
from rich.table import Table

from occubench.costs import PriceTable, role_cost
from occubench.defaults import (
    DEFAULT_SEED,
    DEFAULT_SYNTH_GENERATOR_RETRIES,
    DEFAULT_SYNTH_MAX_REPAIRS,
    DEFAULT_SYNTH_RUN_BATCH,
    DEFAULT_SYNTH_RUNS_WITH_PLAN,
    DEFAULT_SYNTH_RUNS_WITHOUT_PLAN,
    DEFAULT_SYNTH_SUBTOPICS,
    DEFAULT_VERIFIER_VOTES,
)
from occubench.protocols import Protocol
from occubench.results import SampleRow
from occubench.synthesis._artifacts import TokenUsage
from occubench.synthesis._select import Selection

MANIFEST_FILE = "manifest.json"
MANIFEST_VERSION = 1


class SynthesisSettings(BaseModel):
    """What the pipeline was asked to do (besides which models and scenarios)."""

    subtopics: int = Field(default=DEFAULT_SYNTH_SUBTOPICS, ge=1, description="Per scenario.")
    runs_with_plan: int = Field(
        default=DEFAULT_SYNTH_RUNS_WITH_PLAN, ge=1, description="Solvability runs per task."
    )
    runs_without_plan: int = Field(
        default=DEFAULT_SYNTH_RUNS_WITHOUT_PLAN, ge=1, description="Calibration runs per task."
    )
    max_repairs: int = Field(
        default=DEFAULT_SYNTH_MAX_REPAIRS, ge=0, description="Repair attempts per task."
    )
    generator_retries: int = Field(
        default=DEFAULT_SYNTH_GENERATOR_RETRIES, ge=0, description="Re-asks per generation."
    )
    votes: int = Field(default=DEFAULT_VERIFIER_VOTES, ge=1, description="Verifier votes per run.")
    seed: int = Field(default=DEFAULT_SEED, description="Seed of the runs and the generator.")
    protocol: Protocol = Field(
        default=Protocol.OCCUBENCH,
        description="Protocol of the trial runs. occubench by default: an infrastructure "
        "failure is counted apart, not as evidence that a task is unsolvable.",
    )
    run_batch: int = Field(
        default=DEFAULT_SYNTH_RUN_BATCH,
        ge=1,
        description="Tasks per eval of the runs (does not change results).",
    )


class DropStage(str, Enum):  # noqa: UP042 - the str-Enum style of the package
    """The stage at which an item left the funnel."""

    GENERATE = "generate"
    VALIDATE = "validate"
    SOLVABILITY = "solvability"
    CALIBRATION = "calibration"
    SELECTION = "selection"


class Drop(BaseModel):
    """One item that left the funnel, and why."""

    item: str = Field(description="Instance key (scenario/sub-topic/level) or a coarser item.")
    stage: DropStage = Field(description="Where it was dropped.")
    reason: str = Field(description="Why.")


class ScenarioFunnel(BaseModel):
    """Counts of one scenario at each stage (tasks, except the first two columns)."""

    scenario: str
    subtopics: int = Field(description="Sub-topics planned.")
    envs_valid: int = Field(description="Environments generated and valid.")
    generated: int = Field(description="Tasks generated.")
    valid: int = Field(description="Tasks that passed static validation.")
    solvable: int = Field(description="Tasks solved in at least one run with the plan.")
    repaired: int = Field(description="Of the solvable tasks, those solvable after a repair.")
    non_trivial: int = Field(description="Solvable tasks not passed by every run without plan.")
    selected: int = Field(description="Tasks of the selected difficulty level.")
    selection: Selection | None = Field(default=None, description="The level chosen and why.")


class SelectedTask(BaseModel):
    """A task of the dataset and where it came from."""

    task_id: int
    instance: str = Field(description="Instance key: scenario/sub-topic/level.")
    scenario: str
    difficulty: int
    env_name: str
    with_plan: str = Field(description="Runs with the plan passed / scored.")
    without_plan: str = Field(description="Runs without the plan passed / scored.")
    repairs: int = Field(description="Repairs it took to become solvable.")


class Manifest(BaseModel):
    """What a synthesis run did and produced (``manifest.json`` beside the dataset)."""

    version: int = Field(default=MANIFEST_VERSION, description="Manifest format version.")
    models: dict[str, str] = Field(description="Model by role: generator, agent, simulator, ...")
    settings: SynthesisSettings
    scenarios: list[str] = Field(description="Scenarios synthesized, in catalog order.")
    funnel: list[ScenarioFunnel] = Field(description="Counts per stage, per scenario.")
    drops: list[Drop] = Field(description="Every item dropped, with the reason.")
    tasks: list[SelectedTask] = Field(description="The dataset's tasks.")
    tokens: dict[str, TokenUsage] = Field(
        description="Tokens by role over every stored artifact (earlier runs included)."
    )
    cost: dict[str, float | None] | None = Field(
        default=None, description="Dollars by role when a price table was given (None: unpriced)."
    )

    def totals(self) -> dict[str, int]:
        """The funnel summed over scenarios."""
        keys = [
            "subtopics",
            "envs_valid",
            "generated",
            "valid",
            "solvable",
            "repaired",
            "non_trivial",
            "selected",
        ]
        return {k: sum(getattr(f, k) for f in self.funnel) for k in keys}


def role_costs(
    tokens: dict[str, TokenUsage], models: dict[str, str], prices: PriceTable
) -> dict[str, float | None]:
    """Dollars by role at the table's prices (None for a role whose model has no price)."""
    costs: dict[str, float | None] = {}
    for role, usage in tokens.items():
        price = prices.models.get(models.get(role, ""))
        if price is None:
            costs[role] = None
            continue
        # role_cost reads only the token counts of a row: price them with the analysis rule.
        row = SampleRow.model_construct(
            input_tokens={role: usage.input_tokens},
            output_tokens={role: usage.output_tokens},
            input_tokens_cache_read={role: usage.input_tokens_cache_read},
            input_tokens_cache_write={role: usage.input_tokens_cache_write},
        )
        costs[role] = role_cost(row, role, price)
    return costs


FUNNEL_COLUMNS = [
    ("subtopics", "sub-topics"),
    ("envs_valid", "envs valid"),
    ("generated", "generated"),
    ("valid", "valid"),
    ("solvable", "solvable"),
    ("repaired", "(repaired)"),
    ("non_trivial", "non-trivial"),
    ("selected", "selected"),
]


def funnel_tables(manifest: Manifest) -> list[Table]:
    """The funnel per scenario (with the level selected) and the list of drops."""
    funnel = Table(title="Synthesis funnel (tasks)", title_justify="left")
    funnel.add_column("scenario")
    for _, label in FUNNEL_COLUMNS:
        funnel.add_column(label, justify="right")
    funnel.add_column("level", justify="right")
    for row in manifest.funnel:
        level = row.selection.difficulty if row.selection else None
        funnel.add_row(
            row.scenario,
            *[str(getattr(row, key)) for key, _ in FUNNEL_COLUMNS],
            "-" if level is None else str(level),
        )
    totals = manifest.totals()
    funnel.add_row("total", *[str(totals[key]) for key, _ in FUNNEL_COLUMNS], "", style="bold")
    drops = Table(title=f"Dropped ({len(manifest.drops)})", title_justify="left")
    for column in ("item", "stage", "reason"):
        drops.add_column(column, overflow="fold")
    for drop in manifest.drops:
        drops.add_row(drop.item, drop.stage.value, drop.reason)
    tables = [funnel, drops]
    selections = Table(title="Difficulty selected per scenario", title_justify="left")
    selections.add_column("scenario")
    selections.add_column("level", justify="right")
    selections.add_column("reason", overflow="fold")
    for row in manifest.funnel:
        if row.selection is not None:
            level = row.selection.difficulty
            selections.add_row(
                row.scenario, "-" if level is None else str(level), row.selection.reason
            )
    tables.append(selections)
    usage = Table(title="Tokens by role", title_justify="left")
    for column in ("role", "model", "input", "output", "total", "cost ($)"):
        usage.add_column(column, justify="left" if column in ("role", "model") else "right")
    for role, tokens in sorted(manifest.tokens.items()):
        cost = (manifest.cost or {}).get(role)
        usage.add_row(
            role,
            manifest.models.get(role, ""),
            f"{tokens.input_tokens:,}",
            f"{tokens.output_tokens:,}",
            f"{tokens.total_tokens:,}",
            "-" if cost is None else f"{cost:.4f}",
        )
    tables.append(usage)
    return tables
