"""``occubench world stats|verify|merge|export``: look after recorded worlds."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from occubench.cli._common import console, exit_with, user_errors
from occubench.errors import ExitCode
from occubench.text import terminal_text
from occubench.worlds import (
    WorldStats,
    WorldVerification,
    WrittenWorld,
    export_world,
    merge_worlds,
    verify_world,
    world_stats,
)

app = typer.Typer(
    name="world",
    help="Look after worlds: recorded simulator answers that runs share and replay.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

SHOWN_PROBLEMS = 200
"""Problems ``world verify`` lists one by one (the count says how many more)."""

WorldPath = Annotated[Path, typer.Argument(help="A world folder or a packed world (a file).")]


def _facts(title: str, facts: list[tuple[str, object]]) -> Table:
    table = Table(title=title)
    table.add_column("")
    table.add_column("value")
    for name, value in facts:
        table.add_row(name, terminal_text(value))
    return table


def stats_tables(stats: WorldStats) -> list[Table]:
    """The world, its contexts and its authors as tables."""
    when = f"{stats.first:%Y-%m-%d %H:%M} to {stats.last:%Y-%m-%d %H:%M}" if stats.first else "-"
    world = _facts(
        "World",
        [
            ("path", stats.path),
            ("form", "packed (read-only)" if stats.packed else "folder"),
            ("description", stats.description or "-"),
            ("digest", stats.digest),
            ("entries", stats.entries),
            ("keys", stats.keys),
            ("paths (leaves)", stats.leaves),
            ("first calls (roots)", stats.roots),
            ("longest path (calls)", stats.deepest),
            ("duplicates", stats.duplicates),
            ("conflicts", stats.conflicts),
            ("lines not read", stats.unread),
            ("segments", stats.segments),
            ("bytes", f"{stats.bytes:,}"),
            ("recorded", when),
        ],
    )
    contexts = Table(title="Contexts")
    for name in ("context", "simulator", "layout", "state", "variant"):
        contexts.add_column(name)
    contexts.add_column("keys", justify="right")
    for c in stats.contexts:
        contexts.add_row(
            c.digest[:12],
            terminal_text(c.model),
            c.layout,
            c.state_mode,
            str(c.variant),
            str(c.keys),
        )
    authors = Table(title="Authors")
    for name in ("source", "author"):
        authors.add_column(name)
    authors.add_column("entries", justify="right")
    for a in stats.authors:
        authors.add_row(a.source.value, terminal_text(a.author), str(a.entries))
    return [world, contexts, authors]


def verify_table(verification: WorldVerification) -> Table:
    """The problems a verification found, one a row."""
    table = Table(title=f"Problems ({len(verification.problems)})")
    for name in ("kind", "file", "line", "what"):
        table.add_column(name)
    for problem in verification.problems[:SHOWN_PROBLEMS]:
        table.add_row(
            problem.kind.value,
            terminal_text(problem.file),
            "" if problem.line is None else str(problem.line),
            terminal_text(problem.detail),
        )
    return table


def written_table(title: str, written: WrittenWorld) -> Table:
    """What a merge or an export wrote."""
    facts: list[tuple[str, object]] = [
        ("out", written.out),
        ("form", "packed (read-only)" if written.packed else "folder"),
        ("from", ", ".join(written.sources)),
        ("entries", written.entries),
        ("duplicates left out", written.duplicates),
        ("contexts", written.contexts),
        ("conflicts (kept)", written.conflicts),
        ("lines not read", written.unread),
        ("digest", written.digest),
    ]
    if written.sha256 is not None:
        facts.append(("file SHA-256", written.sha256))
    return _facts(title, facts)


@app.command(name="stats")
def stats(
    path: WorldPath,
    out: Annotated[
        Path | None, typer.Option(help="Also write the statistics (JSON) to this file.")
    ] = None,
) -> None:
    """What a world holds: entries, keys, paths, contexts, who made them, its digest.

    A key is one simulator call in one context after one path; paths (leaves) are the
    recorded paths no recorded call continues.
    """
    with user_errors():
        found = world_stats(path)
    for table in stats_tables(found):
        console.print(table)
    if out is not None:
        out.write_text(found.model_dump_json(indent=2) + "\n")


@app.command(name="verify")
def verify(
    path: WorldPath,
    logs: Annotated[
        list[Path] | None,
        typer.Option(
            help="Run logs (files or folders) to hold each entry against: an entry whose "
            "recording run's log holds another answer was changed after the run."
        ),
    ] = None,
) -> None:
    """Check every line of a world: digest, key, form; torn lines; conflicts; contexts.

    A conflict is one key with two different answers (the first by time is the one
    used); a missing context is one that entries reference and the world does not hold.
    With --logs, each entry that names the run sample that recorded it is compared with
    that sample's answer in the logs (a digest can be sealed again by anyone; the log
    shows what the run was given). Verify a world no run is writing to (a line being
    written looks torn).

    Exit codes: 0 clean, 1 problems found (listed), 2 not a world or unreadable.
    """
    from occubench.results import check_provenance

    with user_errors():
        found = verify_world(path)
        provenance = check_provenance(path, logs) if logs else None
    console.print(
        f"{found.entries} entries, {found.keys} keys, {found.contexts} contexts; "
        f"digest {found.digest}",
        markup=False,
        highlight=False,
    )
    if provenance is not None:
        found.problems += provenance.problems
        console.print(
            f"Provenance, against {provenance.logs} log(s): {provenance.matched} entries as "
            f"their run recorded them, {len(provenance.problems)} changed since, "
            f"{provenance.not_in_logs} from samples not in these logs and "
            f"{provenance.without_provenance} naming no run (not checked).",
            markup=False,
            highlight=False,
        )
    if found.clean:
        console.print("No problems found.", markup=False, highlight=False)
        return
    console.print(verify_table(found))
    hidden = len(found.problems) - SHOWN_PROBLEMS
    if hidden > 0:
        console.print(f"... and {hidden} more problems.", markup=False, highlight=False)
    exit_with(ExitCode.INCOMPLETE)  # exit status 1: problems found


@app.command(name="merge")
def merge(
    sources: Annotated[list[Path], typer.Argument(help="The worlds to merge (folders or packed).")],
    out: Annotated[Path, typer.Option(help="The new world folder (must not exist).")],
    description: Annotated[
        str | None, typer.Option(help="Its description (default: what it was merged from).")
    ] = None,
) -> None:
    """Merge worlds written apart (shards on other machines) into a new world folder.

    Every distinct entry is kept. Two answers to one key are both kept and listed by
    world verify as a conflict; a run is given the first by time.
    """
    with user_errors():
        written = merge_worlds(sources, out, description=description)
    console.print(written_table("Merged", written))


@app.command(name="export")
def export(
    path: WorldPath,
    out: Annotated[
        Path,
        typer.Option(help="The file to write (FILE.world.zip), or for a packed world the folder."),
    ],
) -> None:
    """Pack a world folder into one file, or unpack a packed world into a folder.

    The file holds the manifest, the contexts, every distinct entry and a SHA-256 of each
    part (sha256sums.txt); it can be copied, checksummed, attached to results, and
    replayed (--world FILE, read-only). Its digest is the folder's.
    """
    with user_errors():
        written = export_world(path, out)
    console.print(written_table("Exported", written))
