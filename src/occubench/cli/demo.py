"""``occubench demo``: the whole system offline in seconds."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from occubench.analysis import rate_row
from occubench.analysis._stats import robustness
from occubench.cli._common import console, user_errors
from occubench.defaults import DEFAULT_FAULT_COUNT, DEFAULT_FAULT_DURATION, DEFAULT_SEED
from occubench.faults import EnvMode
from occubench.scale import demo_sweep, run_demo


def demo(
    fault_count: int = typer.Option(DEFAULT_FAULT_COUNT, help="Fault events per task."),
    fault_duration: int = typer.Option(DEFAULT_FAULT_DURATION, help="Calls each fault lasts."),
    seed: int = typer.Option(DEFAULT_SEED, help="Seed of the fault plans."),
    log_dir: Path | None = typer.Option(None, help="Keep the logs here (default: a temp folder)."),
) -> None:
    """Run the reference agents on the built-in suite under E0-E3 (no API key, no network).

    careful retries errors and re-reads until data is complete and consistent; no-retry
    gives up at the first error; trusting retries errors but believes degraded data.
    """
    settings: dict[str, Any] = {
        "fault_count": fault_count,
        "fault_duration": fault_duration,
        "seed": seed,
    }
    with user_errors(), tempfile.TemporaryDirectory() as tmp:
        agents = [a.model for a in demo_sweep(log_dir or tmp, **settings).agents]
        rows = run_demo(log_dir or tmp, **settings)
    table = Table(
        title=f"Reference agents on the reference suite (fc={fault_count}, "
        f"fd={fault_duration}, seed={seed}): completion rate %"
    )
    table.add_column("agent")
    for mode in EnvMode:
        table.add_column(mode.value, justify="right")
    table.add_column("R", justify="right")
    for agent in agents:
        rates = {
            m.value: rate_row(
                m.value, [r for r in rows if r.agent_model == agent and r.env_mode == m.value]
            ).rate
            for m in EnvMode
        }
        r = robustness(rates)
        table.add_row(
            agent.split("/")[-1],
            *(f"{100 * rates[m.value]:.0f}" for m in EnvMode),
            "-" if r != r else f"{r:.2f}",
        )
    console.print(table)
    errors = sum(r.error is not None for r in rows)
    console.print(
        f"{len(rows)} samples, {errors} infrastructure errors. "
        "R = min(CR_E1, CR_E2, CR_E3) / CR_E0."
    )
