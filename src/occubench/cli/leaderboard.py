"""``occubench leaderboard``: verified bundles as a static site."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from occubench.cli._common import console, exit_with, user_errors
from occubench.cli._options import BootstrapResamples, BootstrapSeed
from occubench.defaults import DEFAULT_BOOTSTRAP_RESAMPLES, DEFAULT_BOOTSTRAP_SEED
from occubench.errors import ExitCode
from occubench.text import terminal_text


def leaderboard(
    bundles: Annotated[list[Path], typer.Argument(help="Bundle files (occubench bundle).")],
    out: Annotated[Path, typer.Option(help="Folder of the site (index.html, records/).")],
    published: Annotated[
        str | None,
        typer.Option(
            help="Show a publication's stated results apart, never ranked with measured "
            "rows: 'paper' (shipped) or a JSON file in its format."
        ),
    ] = None,
    dataset: Annotated[
        Path | None,
        typer.Option(help="A dataset folder each bundle's logged task records are compared with."),
    ] = None,
    resamples: BootstrapResamples = DEFAULT_BOOTSTRAP_RESAMPLES,
    seed: BootstrapSeed = DEFAULT_BOOTSTRAP_SEED,
    floor: Annotated[
        list[Path] | None,
        typer.Option(
            help="A floor record (occubench floor --out), repeatable: each row shows the "
            "highest null agent's pass rate under its board's simulator, verifier, task set "
            "and protocol, or 'not measured'."
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            help="Replace an index.html or data.json in --out that this command did not write."
        ),
    ] = False,
) -> None:
    """Write a static leaderboard site from bundles, each verified first.

    Standard bundles are ranked apart from custom ones, and rows only with rows of the
    same simulator, verifier, task set and protocol; rows the run's minimum detectable
    difference cannot tell apart share a rank (a tie group). The page filters rows, draws
    the industry profile (radar) of any selection and a cost-vs-CR Pareto chart, shows
    beside each score its verdict flips, the samples the online checks flagged, the
    verifier's vote agreement and, with --floor, the verifier's floor, and links
    every row to its bundle's verification record; it needs no server and loads nothing
    from elsewhere. A bundle that fails verification gets its record and no row (exit 2).
    """
    from occubench.bundle import Outcome
    from occubench.leaderboard import build_site
    from occubench.published import load_published
    from occubench.report import load_floor

    with user_errors():
        table = load_published(published) if published is not None else None
        floors = [load_floor(path) for path in floor or []]
        data = build_site(
            bundles,
            out,
            published=table,
            resamples=resamples,
            seed=seed,
            dataset=dataset,
            force=force,
            floors=floors,
        )
    rows = sum(len(b.entries) for b in data.boards)
    console.print(
        f"Wrote {out / 'index.html'}: {rows} row(s) on {len(data.boards)} board(s)",
        markup=False,
        highlight=False,
    )
    for line in data.bundles:
        kind = line.bundle_class.value if line.bundle_class else "-"
        console.print(
            terminal_text(f"  {line.name}: {line.outcome.value}, {kind} -> {out / line.record}"),
            markup=False,
            highlight=False,
        )
    if any(b.outcome is Outcome.FAILED for b in data.bundles):
        exit_with(ExitCode.BAD_INPUT)
