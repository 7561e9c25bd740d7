"""``occubench data fetch``: the public OccuBench release, downloaded and checked."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from occubench.cli._common import console, err_console, exit_with
from occubench.dataset import (
    RELEASE_LIMITS,
    FetchError,
    fetch_release,
    release_dir,
    release_source,
    stderr_progress,
)
from occubench.errors import ExitCode

app = typer.Typer(
    name="data",
    help="Get benchmark data: the public OccuBench release.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


@app.command(name="fetch", epilog=RELEASE_LIMITS.describe())
def fetch(
    to: Annotated[
        Path | None,
        typer.Option(help="Folder to unpack the release into (default: the cache, see --dataset)."),
    ] = None,
    url: Annotated[
        str | None,
        typer.Option(
            help="Download from here instead (a mirror, or your own .tar.gz of the repository)."
        ),
    ] = None,
    sha256: Annotated[
        str | None,
        typer.Option(
            help="SHA-256 of the archive at --url (checked before it is unpacked, instead of "
            "the pinned data digest)."
        ),
    ] = None,
) -> None:
    """Download the public OccuBench release (pinned revision), check it, unpack it.

    Without --to it goes to the cache, where --dataset occubench finds it (a run with
    --dataset occubench fetches it by itself on first use). The pinned release's data
    files must hash to the pinned digest; with --url and --sha256, the archive must hash
    to --sha256. Nothing half-written is left behind on any failure.
    """
    source = release_source(url, sha256)
    target = to or release_dir(source)
    console.print(
        f"Fetching the OccuBench release, revision {source.revision}, from {source.url}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    try:
        folder = fetch_release(target, source=source, progress=stderr_progress())
    except FetchError as e:
        err_console.print(f"Fetch failed: {e}", markup=False, highlight=False, soft_wrap=True)
        exit_with(ExitCode.INCOMPLETE)
    console.print(f"Release layout in {folder}", markup=False, highlight=False, soft_wrap=True)
    console.print(
        f"Use it with --dataset {folder}"
        + ("" if to else " (or --dataset occubench)")
        + f"; occubench list --dataset {folder} shows what it holds.",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
