"""``occubench list``: what a dataset holds."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from occubench.analysis import terminal_text
from occubench.cli._common import console, dataset_dir, user_errors
from occubench.dataset import load_dataset


def list_tasks(
    dataset: Path | None = typer.Option(None, help="Dataset folder (default: $OCCUBENCH_DATASET)."),
    scenarios: bool = typer.Option(
        False, "--scenarios", help="List scenarios, not just industries."
    ),
) -> None:
    """Show the dataset's industries, domains, scenarios and task counts."""
    with user_errors():
        loaded = load_dataset(dataset_dir(dataset))
    counts: dict[tuple[str, str, str], list[int]] = {}
    for task in loaded.tasks:
        key = (loaded.industry(task), loaded.domain(task), task.task_scenario_name)
        counts.setdefault(key, []).append(task.task_id)
    if scenarios:
        table = Table(title=terminal_text(f"Scenarios in {loaded.root}"))
        for name in ("industry", "domain", "scenario", "tasks", "task ids"):
            table.add_column(name)
        for (industry, domain, scenario), ids in sorted(counts.items()):
            table.add_row(
                *map(terminal_text, (industry, domain, scenario)),
                str(len(ids)),
                ",".join(map(str, ids)),
            )
    else:
        table = Table(title=terminal_text(f"Industries in {loaded.root}"))
        for name in ("industry", "domains", "scenarios", "tasks"):
            table.add_column(name)
        by_industry: dict[str, list[tuple[str, str, int]]] = {}
        for (industry, domain, scenario), ids in counts.items():
            by_industry.setdefault(industry, []).append((domain, scenario, len(ids)))
        for industry, items in sorted(by_industry.items()):
            table.add_row(
                terminal_text(industry),
                str(len({d for d, _, _ in items})),
                str(len(items)),
                str(sum(n for _, _, n in items)),
            )
    console.print(table)
    console.print(f"{len(loaded.tasks)} tasks, {len(loaded.scenarios)} scenarios in the pool.")
