"""``occubench compare-simulators``: do simulators rank the same agents alike?"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from occubench.cli._common import console, user_errors
from occubench.cli._options import GoldWorld
from occubench.cli._settings import with_settings
from occubench.config import ResolvedRun, RunConfig
from occubench.defaults import DEFAULT_REFERENCE_SIMULATOR


@with_settings(RunConfig, only=("dataset", "protocol", "state_mode", "date"))
def compare_simulators(
    logs: Annotated[
        list[Path],
        typer.Argument(
            help="Log files or folders of runs of the same agents under two or more simulators."
        ),
    ],
    out: Annotated[
        Path | None, typer.Option(help="Write the comparison (JSON) to this file.")
    ] = None,
    gold: GoldWorld = None,
    reference: Annotated[
        str | None,
        typer.Option(
            help="The simulator taken as the real environment: each other simulator's ranking "
            "agreement with it and its verdicts against it (CR under each, agreement, the "
            "sim-to-real gap with a 95% interval, the tasks that flip and the first step that "
            f"differed). Default: {DEFAULT_REFERENCE_SIMULATOR} when the logs hold runs under it."
        ),
    ] = None,
    **chosen: Any,
) -> None:
    """Ranking agreement, Kendall tau, score compression and flips between simulators.

    Runs are grouped by env mode, simulator model and agent model. With a reference
    simulator (the twin by default), the verdicts of each other one are held against it.
    """
    from occubench.fidelity import compare_simulators as compare
    from occubench.fidelity import comparison_tables, gold_audit, machine_models
    from occubench.results import read_runs

    with user_errors():
        rows = read_runs(logs)
        if reference is None and any(
            r.simulator_model == DEFAULT_REFERENCE_SIMULATOR for r in rows
        ):
            reference = DEFAULT_REFERENCE_SIMULATOR
        comparison = compare(rows, reference)
        if gold is not None:
            run = ResolvedRun.of(RunConfig.model_validate(chosen))
            audited = gold_audit(gold, machine_models(comparison.simulators), run)
            comparison.against_gold = {
                g.simulator: g.agreement for g in audited.groups if g.env_name is None
            }
    for table in comparison_tables(comparison):
        console.print(table)
    console.print(
        "CR = completion rate over scored samples; runs of one mode with other fault "
        "settings are pooled.",
        highlight=False,
    )
    if comparison.reference is None:
        console.print(
            f"No run under {DEFAULT_REFERENCE_SIMULATOR}: no verdicts against a reference "
            "(--reference SIM names another simulator of the logs).",
            highlight=False,
        )
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(comparison.model_dump_json(indent=2))
        console.print(f"Comparison: {out}", highlight=False)
