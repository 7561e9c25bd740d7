"""``occubench synth``: synthesize a dataset from catalog scenarios, then print the funnel."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

from occubench.cli._common import console, err_console, exit_with, split_names, user_errors
from occubench.cli._options import GeneratorRetries, Prices
from occubench.defaults import (
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_SEED,
    DEFAULT_SYNTH_GENERATOR_RETRIES,
    DEFAULT_SYNTH_MAX_REPAIRS,
    DEFAULT_SYNTH_RUN_BATCH,
    DEFAULT_SYNTH_RUNS_WITH_PLAN,
    DEFAULT_SYNTH_RUNS_WITHOUT_PLAN,
    DEFAULT_SYNTH_SUBTOPICS,
    DEFAULT_VERIFIER_VOTES,
)
from occubench.errors import ExitCode

if TYPE_CHECKING:
    from occubench.costs import PriceTable
    from occubench.synthesis import CatalogScenario, Manifest, SynthesisModels, SynthesisSettings


class RichProgress:
    """Shows the pipeline's progress, one bar per stage."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.bars: dict[str, TaskID] = {}

    def stage(self, name: str, total: int) -> None:
        """Add the stage's bar, or update its total."""
        if name in self.bars:
            self.progress.update(self.bars[name], total=total)
        else:
            self.bars[name] = self.progress.add_task(name, total=total)

    def advance(self, name: str, amount: int = 1) -> None:
        """Advance the stage's bar."""
        self.progress.advance(self.bars[name], amount)


def synth(
    out: Annotated[
        Path, typer.Option(help="Output folder: work/ (resumable), runs/ (logs), dataset/.")
    ],
    generator_model: Annotated[
        str, typer.Option(help="Generator of sub-topics, envs, tasks, repairs.")
    ],
    simulator_model: Annotated[str, typer.Option(help="Simulator (LES) of the agent runs.")],
    agent_model: Annotated[
        str, typer.Option(help="Agent of the solvability and calibration runs.")
    ],
    verifier_model: Annotated[
        str | None, typer.Option(help="Verifier of the runs (default: the simulator).")
    ] = None,
    catalog: Annotated[
        Path | None,
        typer.Option(help="Scenario catalog YAML (default: the built-in 100 scenarios)."),
    ] = None,
    scenarios: Annotated[
        str | None,
        typer.Option(help="Only these scenarios, by name, comma-separated (default: all)."),
    ] = None,
    subtopics: Annotated[int, typer.Option(help="Sub-topics (envs) per scenario.")] = (
        DEFAULT_SYNTH_SUBTOPICS
    ),
    runs_with_plan: Annotated[
        int, typer.Option(help="Runs with the plan per task (solvability).")
    ] = (DEFAULT_SYNTH_RUNS_WITH_PLAN),
    runs_without_plan: Annotated[
        int, typer.Option(help="Runs without the plan per task (calibration).")
    ] = DEFAULT_SYNTH_RUNS_WITHOUT_PLAN,
    max_repairs: Annotated[
        int, typer.Option(help="Repairs of a task no run with the plan solved.")
    ] = (DEFAULT_SYNTH_MAX_REPAIRS),
    generator_retries: GeneratorRetries = DEFAULT_SYNTH_GENERATOR_RETRIES,
    votes: Annotated[int, typer.Option(help="Verifier votes per run.")] = DEFAULT_VERIFIER_VOTES,
    seed: Annotated[
        int, typer.Option(help="Seed of the runs and of the generator.")
    ] = DEFAULT_SEED,
    prices: Prices = None,
    max_connections: Annotated[int, typer.Option(help="Concurrent requests per model.")] = (
        DEFAULT_MAX_CONNECTIONS
    ),
    run_batch: Annotated[
        int, typer.Option(help="Tasks per eval of the runs (stored after each).")
    ] = (DEFAULT_SYNTH_RUN_BATCH),
) -> None:
    """Synthesize a benchmark from catalog scenarios: generate, validate, run, repair, select.

    Running the same command again resumes: finished steps are read from OUT/work.
    """
    from occubench.costs import load_prices
    from occubench.synthesis import SynthesisSettings, catalog_scenarios, synthesis_models

    with user_errors():
        chosen = catalog_scenarios(catalog, split_names(scenarios))
        settings = SynthesisSettings(
            subtopics=subtopics,
            runs_with_plan=runs_with_plan,
            runs_without_plan=runs_without_plan,
            max_repairs=max_repairs,
            generator_retries=generator_retries,
            votes=votes,
            seed=seed,
            run_batch=run_batch,
        )
        table = load_prices(prices) if prices else None
        models = synthesis_models(
            generator_model, agent_model, simulator_model, verifier_model, max_connections
        )
    manifest = _with_bars(chosen, models, out, settings, table)
    _print_funnel(manifest, out, judged_by_simulator=verifier_model is None)


def _with_bars(
    chosen: list[CatalogScenario],
    models: SynthesisModels,
    out: Path,
    settings: SynthesisSettings,
    table: PriceTable | None,
) -> Manifest:
    """Run the synthesis with one bar per stage (Inspect's display off unless asked)."""
    from inspect_ai.util import display_type

    from occubench.synthesis import run_synthesis

    os.environ.setdefault("INSPECT_DISPLAY", "none")  # our bars, not Inspect's, unless asked
    display_type()
    console.print(
        f"Synthesizing {len(chosen)} scenario(s) into {out} (run the same command again to resume)",
        highlight=False,
    )
    columns = (TextColumn("{task.description:<13}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=console) as bars:
        return run_synthesis(
            chosen, models, out, settings, prices=table, progress=RichProgress(bars)
        )


def _print_funnel(manifest: Manifest, out: Path, *, judged_by_simulator: bool) -> None:
    """The funnel's tables and where the dataset is; exit 5 when no task passed."""
    from occubench.synthesis import DATASET_DIR, MANIFEST_FILE, funnel_tables

    for rendered in funnel_tables(manifest):
        console.print(rendered)
    root = out / DATASET_DIR
    console.print(
        f"Dataset: {root} ({len(manifest.tasks)} tasks); manifest: {root / MANIFEST_FILE}",
        highlight=False,
    )
    if not manifest.tasks:
        judge = (
            "; without --verifier-model the simulator judged the runs"
            if judged_by_simulator
            else ""
        )
        err_console.print(
            f"Nothing synthesized: no task passed the funnel (the drops above say why each went"
            f"{judge}).",
            highlight=False,
        )
        exit_with(ExitCode.NOTHING_MADE)
