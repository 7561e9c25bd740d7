"""``occubench demo``: the whole system offline in seconds."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from occubench.cli._common import (
    check_models,
    console,
    interrupted,
    invoked_command,
    user_errors,
)
from occubench.cli._settings import with_settings
from occubench.config import RunConfig
from occubench.defaults import DEFAULT_DEMO_LOG_DIR
from occubench.faults import EnvMode
from occubench.roles import Role

if TYPE_CHECKING:
    from occubench.results import SampleRow


@with_settings(RunConfig, only=("fault_count", "fault_duration", "seed"))
def demo(
    ctx: typer.Context,
    log_dir: Annotated[
        Path,
        typer.Option(
            help="Folder of the demo's logs (kept: occubench report and inspect view read them; "
            "the same command again reuses them)."
        ),
    ] = DEFAULT_DEMO_LOG_DIR,
    **settings: Any,
) -> None:
    """Run the reference agents on the built-in suite under E0-E3 (no API key, no network).

    careful retries errors and re-reads until data is complete and consistent; no-retry
    gives up at the first error; trusting retries errors but believes degraded data.
    """
    from occubench.scale import RunSpec, ShardResult, demo_sweep, run_demo, stop_signals

    command = invoked_command(ctx, {"log_dir": log_dir, **settings})
    start = time.monotonic()

    def progress(i: int, count: int, run: RunSpec, result: ShardResult) -> None:
        agent = run.agent.split("/")[-1]
        passed = sum(bool(r.passed) for r in result.rows)
        console.print(
            f"[{i:>2}/{count}] {agent:<8} {run.config.env_mode.value} on "
            f"{run.roles[Role.SIMULATOR].split('/')[-1]}: {passed}/{len(result.rows)} passed "
            f"({time.monotonic() - start:.0f} s)",
            markup=False,
            highlight=False,
        )

    console.print(
        "Running 3 reference agents x E0-E3 on the reference suite (12 runs of 10 tasks, "
        "offline)...",
        highlight=False,
    )
    with user_errors(), stop_signals() as stop:
        sweep = demo_sweep(log_dir, **settings)
        agents = [a.model for a in sweep.agents]
        check_models(  # offline models: cheap, and it keeps Inspect's banner off the output
            {Role.AGENT: agents[0], Role.SIMULATOR: sweep.simulators[0].model}
        )
        try:
            rows = run_demo(log_dir, on_run=progress, **settings)
        except KeyboardInterrupt:
            rows = []
    if stop.signal is not None or len(rows) < 120:
        kept = sum(r.error is None for r in rows)
        interrupted(stop, kept, 120, str(log_dir), command)
    console.print(_rates_table(rows, agents, settings))
    errors = sum(r.error is not None for r in rows)
    console.print(
        f"{len(rows)} samples, {errors} infrastructure errors. "
        "R = min(CR_E1, CR_E2, CR_E3) / CR_E0."
    )
    console.print(
        f"Logs: {log_dir}\n"
        f"  occubench report {log_dir}     the report's tables (--format html for a page)\n"
        f"  inspect view --log-dir {log_dir}   every trajectory in Inspect's viewer",
        markup=False,
        highlight=False,
    )


def _rates_table(rows: list[SampleRow], agents: list[str], settings: dict[str, Any]) -> Table:
    """Each reference agent's completion rate per mode, and its robustness R."""
    from occubench.analysis import rate_row, robustness

    table = Table(
        title=f"Reference agents on the reference suite (fc={settings['fault_count']}, "
        f"fd={settings['fault_duration']}, seed={settings['seed']}): completion rate %"
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
    return table
