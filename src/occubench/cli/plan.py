"""``occubench plan``: how many tasks x epochs a comparison needs, from a pilot run's variance."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from occubench.cli._common import console, user_errors
from occubench.defaults import DEFAULT_MDD_ALPHA, DEFAULT_MDD_POWER, DEFAULT_VARIANCE_RESAMPLES
from occubench.errors import UsageError
from occubench.text import terminal_text


def plan(
    logs: Annotated[list[str], typer.Argument(help="Logs of the pilot run (files or folders).")],
    mdd: Annotated[
        float, typer.Option("--mdd", help="Target difference to detect, in CR points (e.g. 3).")
    ],
    simulators: Annotated[
        int | None,
        typer.Option(help="Simulator replicates per task (default: the pilot's).", min=1),
    ] = None,
    max_epochs: Annotated[int, typer.Option(help="Epochs to consider, 1 to this.", min=1)] = 10,
    power: Annotated[float, typer.Option(help="Power of the test.")] = DEFAULT_MDD_POWER,
    alpha: Annotated[float, typer.Option(help="Two-sided level of the test.")] = DEFAULT_MDD_ALPHA,
) -> None:
    """Plan a comparison of two agents: tasks needed per epoch count for an MDD target.

    The pilot's variance components (verdict scale: task, simulator, agent) are pooled
    over its agents and modes (their mean), and two agents with that variance are assumed.
    """
    from occubench.analysis import plan_designs, variance_report, verdict_parts
    from occubench.results import read_runs

    with user_errors():
        if mdd <= 0:
            raise UsageError(f"--mdd must be positive, got {mdd}")
        rows = read_runs(logs)
        if not any(r.passed is not None for r in rows):
            raise UsageError("the pilot logs hold no scored sample")
        noise = variance_report(
            rows, power=power, alpha=alpha, n_resamples=DEFAULT_VARIANCE_RESAMPLES
        )
    parts = [verdict_parts(r) for r in noise.rows]
    task, sim, agent = (sum(p[i] for p in parts) / len(parts) for i in range(3))
    replicates = simulators or max(r.design.simulators for r in noise.rows)
    designs = plan_designs(
        task,
        sim,
        agent,
        mdd / 100,
        simulators=replicates,
        max_epochs=max_epochs,
        power=power,
        alpha=alpha,
    )
    pilot = Table(title="Pilot variance components (verdict scale) and MDD of its design")
    for name in ("agent", "mode", "tasks", "sims", "epochs", "task", "simulator", "agent+verifier"):
        pilot.add_column(name, justify="left" if name in ("agent", "mode") else "right")
    pilot.add_column("MDD pp", justify="right")
    for row, (t, s, a) in zip(noise.rows, parts, strict=True):
        pilot.add_row(
            terminal_text(row.agent),
            terminal_text(f"{row.env_mode} {row.faults}".strip()),
            str(row.design.tasks),
            str(row.design.simulators),
            str(row.design.epochs),
            f"{t:.4f}",
            f"{s:.4f}",
            f"{a:.4f}",
            f"{100 * row.mdd:.1f}",
        )
    console.print(pilot)
    table = Table(
        title=f"Designs detecting a CR difference of {mdd:g} points ({100 * power:.0f}% power, "
        f"{100 * alpha:g}% two-sided), {replicates} simulator replicate(s) per task"
    )
    for name in ("epochs", "tasks", "samples", "MDD pp"):
        table.add_column(name, justify="right")
    cheapest = min(designs, key=lambda d: (d.samples, d.epochs))
    for d in designs:
        mark = " (fewest samples)" if d is cheapest else ""
        table.add_row(str(d.epochs), str(d.tasks), f"{d.samples}{mark}", f"{100 * d.mdd:.2f}")
    console.print(table)
    console.print(
        f"Pooled components: task {task:.4f}, simulator {sim:.4f}, agent+verifier {agent:.4f}. "
        "Epochs only shrink the agent part; the task part needs more tasks.",
        highlight=False,
    )
