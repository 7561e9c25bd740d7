"""``occubench converse``: conversational variants of a dataset's tasks, by the generator."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from occubench.cli._common import console, dataset_dir, err_console, exit_with, user_errors
from occubench.cli._options import GeneratorRetries
from occubench.cli.synth import RichProgress
from occubench.defaults import (
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_SEED,
    DEFAULT_SYNTH_GENERATOR_RETRIES,
)
from occubench.errors import ExitCode


def converse(
    dataset: Annotated[
        str, typer.Option(help="Dataset to convert: a folder, or reference / occubench.")
    ],
    out: Annotated[Path, typer.Option(help="New folder for the conversational dataset.")],
    generator_model: Annotated[str, typer.Option(help="Generator that writes each user brief.")],
    generator_retries: GeneratorRetries = DEFAULT_SYNTH_GENERATOR_RETRIES,
    seed: Annotated[int, typer.Option(help="Seed of the generator.")] = DEFAULT_SEED,
    max_connections: Annotated[int, typer.Option(help="Concurrent requests to the generator.")] = (
        DEFAULT_MAX_CONNECTIONS
    ),
) -> None:
    """Turn a dataset's tasks into conversations: a user brief plus a shorter opening request.

    Each task's request loses the values the user keeps for when they are asked; the
    verification plan stays as it was. Tasks the generator gives no valid conversion
    for are left out and listed in OUT/conversion.json.
    """
    from inspect_ai.model import GenerateConfig
    from inspect_ai.util import display_type

    from occubench.calls import named_model
    from occubench.dataset import dataset_label, load_dataset
    from occubench.synthesis import CONVERSION_FILE, Outcome, convert_dataset

    with user_errors():
        root = dataset_dir(dataset)
        data = load_dataset(root)
        model = named_model(generator_model, GenerateConfig(max_connections=max_connections))
        os.environ.setdefault("INSPECT_DISPLAY", "none")  # our bar, not Inspect's, unless asked
        display_type()
        columns = (TextColumn("{task.description:<13}"), BarColumn(), MofNCompleteColumn())
        with Progress(*columns, console=console) as bars:
            manifest = convert_dataset(
                data,
                model,
                out,
                retries=generator_retries,
                seed=seed,
                source=dataset_label(root),
                progress=RichProgress(bars),
            )
    converted, kept = manifest.count(Outcome.CONVERTED), manifest.count(Outcome.KEPT)
    dropped = [t for t in manifest.tasks if t.outcome == Outcome.DROPPED]
    console.print(
        f"Converted {converted} of {len(manifest.tasks)} task(s) into {out}"
        + (f" ({kept} already had a user, kept)" if kept else "")
        + f"; record: {out / CONVERSION_FILE}",
        highlight=False,
    )
    for task in dropped:
        err_console.print(
            f"Dropped task {task.task_id}: {'; '.join(task.problems)}",
            highlight=False,
            markup=False,
        )
    if converted + kept == 0:
        err_console.print("Nothing converted: no task got a valid conversion.", highlight=False)
        exit_with(ExitCode.NOTHING_MADE)
