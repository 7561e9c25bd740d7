"""``occubench sweep``: a grid of runs from YAML, in shards on an executor, one report."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from occubench.cli._common import (
    check_models,
    console,
    exit_with,
    interrupted,
    invoked_command,
    split_names,
    user_errors,
)
from occubench.cli._options import RayAddress, RunPreflight, ShardExecutor
from occubench.cli._settings import executor_named, with_settings
from occubench.config import RunConfig
from occubench.defaults import DEFAULT_SWEEP_LOG_DIR
from occubench.errors import ExitCode
from occubench.roles import Role

if TYPE_CHECKING:
    from occubench.scale import Executor, ShardResult, ShardSpec, Sweep, SweepRun


def runs_table(runs: Sequence[SweepRun]) -> Table:
    """The expanded runs, one line each (``--dry-run``)."""
    table = Table(title=f"{len(runs)} runs")
    for name in (
        "#",
        "agent",
        "simulator",
        "verifier",
        "mode",
        "fc",
        "fd",
        "seed",
        "shards",
        "log folder",
    ):
        table.add_column(
            name, justify="right" if name in ("#", "fc", "fd", "seed", "shards") else "left"
        )
    for i, (run, shards) in enumerate(runs, 1):
        config = run.config
        table.add_row(
            str(i),
            run.agent_label or run.agent,
            run.roles[Role.SIMULATOR],
            run.roles.get(Role.VERIFIER, "-"),
            config.env_mode.value,
            str(config.fault_count),
            str(config.fault_duration),
            str(config.seed),
            str(shards),
            Path(run.log_dir).name,
        )
    return table


Sweeps = Annotated[
    list[str],
    typer.Argument(
        help="Sweep YAML files or shipped names (paper-main, ...); 'paper-*' takes them all."
    ),
]
Agents = Annotated[
    str | None,
    typer.Option(
        help="Agent models replacing the sweep's (comma-separated); its generate options "
        "(e.g. reasoning efforts) apply to each."
    ),
]
Simulators = Annotated[
    str | None, typer.Option(help="Simulator models replacing the sweep's (comma-separated).")
]
Verifiers = Annotated[
    str | None, typer.Option(help="Verifier models replacing the sweep's (comma-separated).")
]
SweepLogDir = Annotated[
    str | None,
    typer.Option(
        help=f"Folder or URL of the runs (default: the sweep's, else {DEFAULT_SWEEP_LOG_DIR})."
    ),
]
SweepWorkers = Annotated[
    int | None,
    typer.Option(
        min=1, help="Local executor: shard processes at once (default: the machine's cores)."
    ),
]
DryRun = Annotated[
    bool,
    typer.Option(help="Print the runs (and the shards, when the dataset is known); run nothing."),
]
ReportOut = Annotated[
    Path | None,
    typer.Option(help="Also write the report's files (Markdown, CSV, JSON, HTML) to this folder."),
]
LiveView = Annotated[str, typer.Option(help="rich: one live view across shards; none: no view.")]


@with_settings(
    RunConfig,
    only=("dataset",),
    notes={"dataset": "Replaces the sweep files' dataset (default here: theirs)."},
)
def sweep(
    ctx: typer.Context,
    sweeps: Sweeps,
    agents: Agents = None,
    simulators: Simulators = None,
    verifiers: Verifiers = None,
    log_dir: SweepLogDir = None,
    executor: ShardExecutor = "local",
    workers: SweepWorkers = None,
    ray_address: RayAddress = None,
    dry_run: DryRun = False,
    out: ReportOut = None,
    display: LiveView = "rich",
    preflight: RunPreflight = True,
    **settings: Any,
) -> None:
    """Run every combination a sweep file lists, then report on all of it.

    Runs log to LOG_DIR/<run>-<digest>, split into the sweep's shards; running the same
    command again resumes every unfinished shard. Shipped sweeps name the paper's models
    (their comments list the API keys to set); --agents, --simulators, --verifiers
    replace them.
    """
    from occubench.scale import (
        Preflight,
        check_executor,
        load_sweeps,
        override,
        plan_sweep,
        run_calls,
        sweep_runs,
    )

    command = invoked_command(ctx, {**locals(), **settings})
    with user_errors():
        chosen = [
            override(
                s,
                agents=split_names(agents),
                simulators=split_names(simulators),
                verifiers=split_names(verifiers),
                dataset=settings["dataset"],
                log_dir=log_dir,
            )
            for s in load_sweeps(sweeps)
        ]
        runs = sweep_runs(chosen)
        where = check_executor(executor_named(executor))
    if dry_run:
        _dry_run(chosen, runs)
        return
    with user_errors():
        shards = plan_sweep(chosen, runs)
    if preflight:
        check_models(Preflight([call for run, _ in runs for call in run_calls(run)]))
    root = Path(runs[0][0].log_dir).parent
    console.print(
        f"{len(runs)} runs, {len(shards)} shards, logs under {root}  (run the same command "
        "again to resume)",
        highlight=False,
    )
    results = _run_shards(shards, where, workers, ray_address, display, str(root), command)
    _report(results, runs, out)


def _dry_run(chosen: list[Sweep], runs: list[SweepRun]) -> None:
    """``--dry-run``: the runs, and their shards when the dataset is known."""
    from occubench.scale import expand_sweep, sweep_shards

    console.print(runs_table(runs))
    counts = ", ".join(f"{s.name} {len(expand_sweep(s))}" for s in chosen)
    console.print(
        f"{len(runs)} runs ({counts}; a run shared by sweeps counts once)", highlight=False
    )
    if all(run.config.dataset for run, _ in runs):
        with user_errors():
            console.print(f"{len(sweep_shards(runs))} shards", highlight=False)
    else:
        console.print(
            "Shards are dealt once the dataset is known (--dataset or $OCCUBENCH_DATASET)."
        )


def _run_shards(
    shards: list[ShardSpec],
    where: Executor,
    workers: int | None,
    ray_address: str | None,
    display: str,
    root: str,
    command: str,
) -> list[ShardResult]:
    """Run the sweep's shards on the executor; exit 130 when interrupted."""
    from occubench.scale import execute, read_shard_counts, stop_signals

    with stop_signals() as stop:
        try:
            results = execute(
                shards,
                where,
                parallel=workers or os.cpu_count() or 1,
                ray_address=ray_address,
                console=None if display == "none" else console,
            )
        except KeyboardInterrupt:
            results = []
    if stop.signal is not None or not results or any(r.interrupted for r in results):
        found = [read_shard_counts(shard.log_dir) for shard in shards]
        kept = sum(c.done - c.errors for c in found)
        interrupted(stop, kept, sum(s.samples for s in shards), root, command)
    return results


def _report(results: list[ShardResult], runs: list[SweepRun], out: Path | None) -> None:
    """The sweep's report (and its files in ``out``); exit 1, 3 or 4 when it is not OK."""
    from occubench.report import (
        ReportFormat,
        build_report,
        report_tables,
        rich_table,
        write_report,
    )
    from occubench.results import agent_error_lines
    from occubench.scale import labelled, merged_rows

    for failed in (r for r in results if not r.success):
        console.print(f"{failed.run} [{failed.index}/{failed.count}]: {failed.error}", markup=False)
    rows = labelled(merged_rows(results), results, [run for run, _ in runs])
    if rows:
        result = build_report(rows)
        for table in report_tables(result):
            console.print(rich_table(table))
        if out is not None:
            written = write_report(result, rows, list(ReportFormat), out)
            console.print(f"Wrote {len(written)} files to {out}", highlight=False)
    if not all(r.success for r in results):
        console.print("The sweep did not complete; run the same command again to resume.")
        exit_with(ExitCode.INCOMPLETE)
    errors = sum(r.error is not None for r in rows)
    if errors:
        console.print(
            f"{errors} sample(s) ended in an infrastructure error (not scored); run the same "
            "command again to retry them."
        )
        exit_with(ExitCode.SAMPLE_ERRORS)
    graded_errors = agent_error_lines(rows)
    for line in graded_errors:
        console.print(f"Warning: {line}", markup=False, highlight=False)
    if graded_errors:
        exit_with(ExitCode.AGENT_ERRORS)
