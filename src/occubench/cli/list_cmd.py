"""``occubench list``: what a dataset holds."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from occubench.cli._common import console, dataset_dir, user_errors
from occubench.cli._settings import with_settings
from occubench.config import RunConfig
from occubench.dataset import first_few, load_dataset
from occubench.text import terminal_text


@with_settings(RunConfig, only=("dataset",))
def list_tasks(
    scenarios: Annotated[
        bool, typer.Option("--scenarios", help="List scenarios, not just industries.")
    ] = False,
    **settings: Any,
) -> None:
    """Show the dataset's industries, domains, scenarios and task counts."""
    with user_errors():
        loaded = load_dataset(dataset_dir(settings["dataset"]))
    counts: dict[tuple[str, str, str], list[int]] = {}
    for task in loaded.tasks:
        key = (loaded.industry(task), loaded.domain(task), task.task_scenario_name)
        counts.setdefault(key, []).append(task.task_id)
    if scenarios:
        table = Table(title=terminal_text(f"Scenarios in {loaded.root}"), show_footer=True)
        footers = {
            "industry": "total",
            "scenario": str(len(counts)),
            "tasks": str(len(loaded.tasks)),
        }
        for name in ("industry", "domain", "scenario", "tasks", "task ids"):
            table.add_column(name, footers.get(name, ""), overflow="fold")
        for (industry, domain, scenario), ids in sorted(counts.items()):
            table.add_row(
                *map(terminal_text, (industry, domain, scenario)),
                str(len(ids)),
                ",".join(map(str, ids)),
            )
    else:
        table = Table(title=terminal_text(f"Industries in {loaded.root}"), show_footer=True)
        totals = {
            "industry": "total",
            "domains": str(len({domain for _, domain, _ in counts})),
            "scenarios": str(len(counts)),
            "tasks": str(len(loaded.tasks)),
        }
        for name in ("industry", "domains", "scenarios", "tasks"):
            table.add_column(name, totals[name], justify="left" if name == "industry" else "right")
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
    used = {scenario for _, _, scenario in counts}
    idle = sorted(name for name in loaded.scenarios if name not in used)
    console.print(
        f"{len(loaded.tasks)} tasks in {len(used)} scenarios; the pool lists "
        f"{len(loaded.scenarios)} scenarios"
        + (
            f", {len(idle)} of them without a task: {first_few([terminal_text(n) for n in idle])}."
            if idle
            else "."
        ),
        highlight=False,
        markup=False,
    )
