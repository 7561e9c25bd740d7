"""``occubench bundle`` and ``occubench verify``: results that travel, and their check."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from occubench.cli._common import (
    console,
    err_console,
    exit_with,
    user_errors,
)
from occubench.cli._options import (
    BootstrapResamples,
    BootstrapSeed,
    LogFiles,
    Prices,
    TwinFidelityFiles,
)
from occubench.defaults import DEFAULT_BOOTSTRAP_RESAMPLES, DEFAULT_BOOTSTRAP_SEED
from occubench.errors import ExitCode
from occubench.text import terminal_plain, terminal_text

if TYPE_CHECKING:
    from occubench.bundle import Manifest, Verification


def _say(line: str) -> None:
    console.print(terminal_plain(line), markup=False, highlight=False, soft_wrap=True)


def bundle(
    logs: LogFiles,
    out: Annotated[Path, typer.Option(help="The bundle file to write (.tar.gz).")],
    prices: Prices = None,
    twin_fidelity: TwinFidelityFiles = None,
    resamples: BootstrapResamples = DEFAULT_BOOTSTRAP_RESAMPLES,
    seed: BootstrapSeed = DEFAULT_BOOTSTRAP_SEED,
) -> None:
    """Bundle runs into one archive someone else can check with occubench verify.

    The archive holds the logs, a manifest (each run's resolved configuration and protocol
    points, its simulator and verifier models, the dataset's digest, the world used, the
    occubench and Inspect versions, the SHA-256 of every file) and the summary the report
    computes (CR per mode and industry, R, intervals, MDDs, costs). Every member of every
    log is scanned for secrets first: a hit refuses the bundle, naming the member.
    """
    from occubench.bundle import BundleRefused, make_bundle
    from occubench.costs import load_prices
    from occubench.twins import read_fidelity

    with user_errors():
        table = load_prices(prices) if prices is not None else None
        twin = [record for path in twin_fidelity or [] for record in read_fidelity(path)]
        try:
            manifest = make_bundle(
                logs, out, prices=table, twin=twin, resamples=resamples, seed=seed
            )
        except BundleRefused as e:
            err_console.print(
                f"[bold red]Error[/]: bundle refused ({len(e.problems)} problem(s)):",
                highlight=False,
            )
            for problem in e.problems:
                err_console.print(
                    f"  - {terminal_text(problem.member)}: {terminal_text(problem.message)}",
                    highlight=False,
                )
            exit_with(ExitCode.BAD_INPUT)
    _say(f"Wrote {out}: {len(manifest.runs)} log(s), {len(manifest.files) + 1} files")
    _say(f"  manifest digest {manifest.digest}")
    console.print(runs_table(manifest))
    _say(f"Check it (anyone who receives it can): occubench verify {out}")


def runs_table(manifest: Manifest) -> Table:
    """The bundle's runs: agent, mode, models (the user's where a run bound one), task set."""
    table = Table(title="Runs in the bundle")
    users = any(run.user for run in manifest.runs)
    columns = ("agent", "mode", "simulator", "verifier", *(["user"] if users else []))
    for column in (*columns, "tasks x epochs", "protocol"):
        table.add_column(column)
    for run in manifest.runs:
        table.add_row(
            *(
                terminal_text(v)
                for v in (
                    run.agent,
                    run.env_mode,
                    run.simulator or "-",
                    run.verifier or "(simulator)",
                    *([run.user or "-"] if users else []),
                    f"{len(run.sample_ids)} x {run.epochs}",
                    str(run.config.get("protocol")),
                )
            )
        )
    for release in manifest.release_runs:  # the release's harness: its protocol is the paper's
        table.add_row(
            *(
                terminal_text(v)
                for v in (
                    release.agent,
                    release.env_mode,
                    release.simulator,
                    release.verifier or "(simulator)",
                    *(["-"] if users else []),
                    f"{release.tasks} x 1",
                    "release harness",
                )
            )
        )
    return table


def log_number(member: str) -> str:
    """The number of a log in its bundle (``logs/007-NAME.eval`` -> ``007``)."""
    return Path(member).name.split("-", 1)[0]


def show_verification(result: Verification) -> None:
    """Print a verification: outcome and class, what was checked, why, and each run.

    Then, per group, the figures beside each line as recomputed from the logs (flips,
    samples flagged by the checks, unanimous votes).
    """
    from occubench.bundle import Outcome
    from occubench.report import believe_table, rich_table

    if result.outcome is Outcome.FAILED:
        _say(f"Bundle {result.bundle}: FAILED ({len(result.problems)} problem(s))")
        for problem in result.problems:
            _say(f"  {problem.member}: {problem.message}")
        return
    kind = result.bundle_class.value if result.bundle_class else "-"
    _say(f"Bundle {result.bundle}: {result.outcome.value}, {kind}")
    _say(f"  SHA-256 {result.sha256}")
    for line in result.checked:
        _say(f"  checked {line}")
    for line in result.notes:
        _say(f"  note: {line}")
    if result.departures:
        _say(f"Custom, because it departs from the benchmark in {len(result.departures)} way(s):")
        for line in result.departures:
            _say(f"  - {line}")
    else:
        _say("Standard: the paper protocol on the public release, default settings, all tasks.")
    table = Table(title="Runs (# = logs/NNN-...): declared task set against the samples held")
    for column in ("#", "agent", "mode", "tasks x epochs", "samples", "missing", "errors"):
        table.add_column(column, justify="right" if column in ("samples", "errors") else "left")
    for run in result.runs:
        missing = ", ".join(run.missing[:3]) + (" ..." if len(run.missing) > 3 else "")
        table.add_row(
            *(
                terminal_text(v)
                for v in (
                    log_number(run.log),
                    run.agent,
                    run.env_mode,
                    f"{run.tasks} x {run.epochs}",
                    str(run.samples),
                    missing or "-",
                    str(run.errors),
                )
            )
        )
    console.print(table)
    for group in result.summary.groups if result.summary else []:
        figures = believe_table(group.report)
        figures.title = f"Recomputed from the logs, {group.label}: {figures.title}"
        console.print(rich_table(figures))


def verify(
    bundle_file: Annotated[Path, typer.Argument(metavar="BUNDLE", help="The bundle file.")],
    dataset: Annotated[
        Path | None,
        typer.Option(
            help="A dataset folder (release layout) to compare every logged task record "
            "with: a task it lacks or whose record differs fails the check (exit 2), named "
            "with its fields."
        ),
    ] = None,
    record: Annotated[
        Path | None,
        typer.Option(help="Write the verification record (JSON) here."),
    ] = None,
) -> None:
    """Check a bundle: sums, bounds, secrets; recompute its numbers; standard or custom.

    Exit codes: 0 verified, 1 verified but a run lacks declared tasks or epochs, 2 failed
    (a changed log, summary or manifest, a stated number the logs do not give, a logged
    task record the --dataset folder does not hold, a bundle refused by its bounds), 3
    verified but some samples ended in infrastructure errors.
    """
    from occubench.bundle import verify_bundle

    with user_errors():
        result = verify_bundle(bundle_file, dataset=dataset)
        if record is not None:
            record.parent.mkdir(parents=True, exist_ok=True)
            record.write_text(result.model_dump_json(indent=1) + "\n", encoding="utf-8")
    show_verification(result)
    if result.exit_code is not ExitCode.OK:
        exit_with(result.exit_code)
