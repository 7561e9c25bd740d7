"""``occubench export``: logged trajectories as training data, faults annotated."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from occubench.cli._common import console, split_names, user_errors
from occubench.cli._options import LogFiles
from occubench.export import ExportFormat, Verdict


def export(
    logs: LogFiles,
    formats: Annotated[
        list[ExportFormat] | None,
        typer.Option(
            "--format",
            "-f",
            help="openai, sharegpt or parquet (training data; default: all three), or "
            "release (the public release's results/<run>/args.json and results.jsonl, in "
            "OUT/results); repeatable.",
        ),
    ] = None,
    out: Annotated[Path, typer.Option(help="Folder for the files.")] = Path("exports"),
    verdict: Annotated[
        Verdict, typer.Option(help="Keep passed, failed or all graded samples.")
    ] = Verdict.ALL,
    env_mode: Annotated[str | None, typer.Option(help="Only these env modes, e.g. E1,E2.")] = None,
    industry: Annotated[
        str | None, typer.Option(help="Only these industries (comma-separated).")
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="Only these agents (as the report names them).")
    ] = None,
) -> None:
    """Export trajectories for training: OpenAI chat JSONL, ShareGPT JSON, Parquet.

    Every tool result that was degraded, answered with an injected error, or refused is
    annotated with the fault's kind and what changed. Errored samples are left out.
    """
    from occubench.export import (
        TRAINING_FORMATS,
        ExportFilter,
        read_exports,
        write_export,
        write_release,
    )

    with user_errors():
        keep = ExportFilter(
            verdict=verdict,
            env_modes=split_names(env_mode),
            industries=split_names(industry),
            models=split_names(model),
        )
        chosen = formats or list(TRAINING_FORMATS)
        training = [f for f in chosen if f is not ExportFormat.RELEASE]
        trajectories = read_exports(logs, keep) if training else []
        written = [(f, write_export(trajectories, out, f)) for f in training]
        release = (
            write_release(logs, out / "results", keep) if ExportFormat.RELEASE in chosen else None
        )
    table = Table(title=f"{len(trajectories)} trajectories exported to {out}")
    for column in ("format", "file", "records"):
        table.add_column(column)
    for fmt, paths in written:
        for path in paths:
            table.add_row(fmt.value, str(path), str(_records(path)))
    if training:
        console.print(table)
        faulted = sum(t.faulted_messages for t in trajectories)
        console.print(f"{faulted} tool results carry a fault note.")
    if release is not None:
        console.print(
            f"{release.samples} samples of {len(release.folders)} run(s) in the release's "
            f"format under {out / 'results'} ({release.left_out} errored sample(s) left out: "
            "the release's harness writes none)",
            markup=False,
            highlight=False,
        )
        for folder in release.folders:
            console.print(f"  {folder}", markup=False, highlight=False)


def _records(path: Path) -> int:
    """Records in an export file: lines, list items, or Parquet rows."""
    if path.suffix == ".jsonl":
        return sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    if path.suffix == ".json":
        import json

        return len(json.loads(path.read_text(encoding="utf-8")))
    import pyarrow.parquet as pq

    return int(pq.ParquetFile(path).metadata.num_rows)
