"""``occubench compare-simulators``: do simulators rank the same agents alike?"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from occubench.cli._common import console, user_errors


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
) -> None:
    """Ranking agreement, Kendall tau, score compression and flips between simulators.

    Runs are grouped by env mode, simulator model and agent model.
    """
    from occubench.fidelity import compare_simulators as compare
    from occubench.fidelity import comparison_tables
    from occubench.results import read_runs

    with user_errors():
        comparison = compare(read_runs(logs))
    for table in comparison_tables(comparison):
        console.print(table)
    console.print(
        "CR = completion rate over scored samples; runs of one mode with other fault "
        "settings are pooled.",
        highlight=False,
    )
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(comparison.model_dump_json(indent=2))
        console.print(f"Comparison: {out}", highlight=False)
