"""Sweep-shaped offline logs: the reference agents under a grid of runs, one log per run.

Like the shipped paper sweeps in small: E0-E3; E3 at several fault counts and
durations; one agent at several reasoning efforts; the agents under a second
(flawed) simulator. The scripted agents ignore the reasoning effort, so its line is
flat; every other figure shows real differences between the agents.
"""

from __future__ import annotations

from pathlib import Path

from inspect_ai import eval as inspect_eval
from inspect_ai.model import GenerateConfig, get_model

from occubench.task import occubench

AGENTS = ("occubench/careful", "occubench/no-retry", "occubench/trusting")
SIMULATOR = "occubench/canned"
OTHER_SIMULATOR = "occubench/inconsistent"
RELEASE_DATES = {
    "occubench/no-retry": "2024-03-01",
    "occubench/trusting": "2024-11-15",
    "occubench/careful": "2025-06-01",
}


def _task(task_ids: str | None, mode: str, fc: int = 2, fd: int = 2):
    return occubench(
        dataset="reference",
        env_mode=mode,
        fault_count=fc,
        fault_duration=fd,
        with_plan=True,
        task_ids=task_ids,
        protocol="occubench",  # faults placed by code: the scripted simulators follow no rules
    )


def make_sweep_logs(
    log_dir: Path,
    task_ids: str | None = None,
    counts: tuple[int, ...] = (1, 2, 3),
    durations: tuple[int, ...] = (1, 2, 3),
    efforts: tuple[str, ...] = ("low", "medium", "high"),
    modes: tuple[str, ...] = ("E0", "E1", "E2"),
    other_modes: tuple[str, ...] = ("E0", "E2"),
) -> Path:
    """Write the grid's logs under ``log_dir`` (the reference suite, or ``task_ids`` of it).

    ``modes`` run at fc=2, fd=2; E3 at each fault count (fd=2) and duration (fc=2); the
    other simulator in ``other_modes``.
    """
    grid = [(mode, 2, 2) for mode in modes]
    grid += [("E3", fc, 2) for fc in counts]
    grid += [("E3", 2, fd) for fd in durations if fd != 2]
    runs = [([_task(task_ids, *point) for point in grid], list(AGENTS), SIMULATOR)]
    efforts_of_one = [
        get_model(AGENTS[0], config=GenerateConfig(reasoning_effort=e), memoize=False)  # type: ignore[arg-type]
        for e in efforts
    ]
    runs.append(([_task(task_ids, "E0")], efforts_of_one, SIMULATOR))
    runs.append(([_task(task_ids, m) for m in other_modes], list(AGENTS), OTHER_SIMULATOR))
    for tasks, models, simulator in runs:
        inspect_eval(
            tasks,
            model=models,
            model_roles={"simulator": simulator},
            log_dir=str(log_dir),
            max_tasks=len(tasks) * len(models),
            display="none",
        )
    return log_dir


def write_price_file(path: Path) -> Path:
    """A price file for the reference agents and simulators, with release dates."""
    lines = ["models:"]
    for name in (*AGENTS, SIMULATOR, OTHER_SIMULATOR):
        date = RELEASE_DATES.get(name)
        extra = f", release_date: {date}" if date else ""
        lines.append(f"  {name}: {{input_per_mtok: 1.0, output_per_mtok: 4.0{extra}}}")
    path.write_text("\n".join(lines) + "\n")
    return path
