"""The offline demo: the reference agents on the reference suite under E0-E3."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from inspect_ai import eval as inspect_eval

from occubench.analysis import SampleRow, read_runs
from occubench.dataset import reference_suite_dir
from occubench.defaults import DEFAULT_FAULT_COUNT, DEFAULT_FAULT_DURATION, DEFAULT_SEED
from occubench.faults import EnvMode
from occubench.scripted._agents import REFERENCE_AGENTS
from occubench.task import occubench

DEMO_AGENTS = tuple(f"occubench/{name}" for name in REFERENCE_AGENTS)
DEMO_SIMULATOR = "occubench/canned"


def run_demo(
    log_dir: str | Path,
    *,
    agents: Sequence[str] = DEMO_AGENTS,
    modes: Sequence[EnvMode | str] = tuple(EnvMode),
    fault_count: int = DEFAULT_FAULT_COUNT,
    fault_duration: int = DEFAULT_FAULT_DURATION,
    seed: int = DEFAULT_SEED,
    display: str = "none",
) -> list[SampleRow]:
    """Run every agent on the reference suite in every mode; rows of all samples.

    The agents follow the plan (with-plan mode), the ``canned`` simulator answers, and
    the tasks' deterministic checks grade (no judge model is needed).
    """
    tasks = [
        occubench(
            dataset=str(reference_suite_dir()),
            env_mode=EnvMode(mode).value,
            fault_count=fault_count,
            fault_duration=fault_duration,
            seed=seed,
            with_plan=True,
        )
        for mode in modes
    ]
    logs = inspect_eval(
        tasks,
        model=list(agents),
        model_roles={"simulator": DEMO_SIMULATOR},
        log_dir=str(log_dir),
        max_tasks=len(tasks) * len(agents),
        display=display,  # type: ignore[arg-type]
    )
    return read_runs([log.location for log in logs])
