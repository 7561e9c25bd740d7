"""Housekeeping of a resumed run's log folders."""

from __future__ import annotations

import zipfile
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import unquote, urlparse

from inspect_ai.log import (
    EvalError,
    list_eval_logs,
    read_eval_log,
    write_eval_log,
    write_log_dir_manifest,
)


def mark_unfinished(locations: Sequence[str], reason: str) -> None:
    """Mark logs as not finished (status "error", with ``reason``), so a rerun completes them.

    Inspect's eval set treats a log in status "success" as done even when samples in it
    errored; one in status "error" is resumed: its finished samples are kept and the others
    run. A run that stopped on purpose (its budget was reached) is marked so.
    """
    for location in locations:
        log = read_eval_log(location)
        log.status = "error"
        log.error = EvalError(message=reason, traceback=reason, traceback_ansi=reason)
        write_eval_log(log, location)


def remove_superseded_logs(locations: Sequence[str]) -> list[Path]:
    """Delete the logs a killed attempt left behind, once eval_set has replaced them.

    A run killed outright (SIGKILL, out of memory, power loss) leaves its log in status
    "started". Running the same command again resumes it: eval_set seeds a new log with
    the samples that log holds and runs only the rest, but it keeps the old file, since
    it cannot tell whether another process still writes it (it removes only logs of the
    runs it started itself). A reader of the whole folder (``occubench report DIR``,
    ``inspect view``) would then count those samples twice. Such a log (same task,
    status "started", older than the log eval_set returned) holds nothing the new one
    lacks, and nobody writes it: the same command must not run twice at once. Local
    folders only; the folder's ``logs.json`` listing is rewritten.

    Returns:
        The removed logs.
    """
    kept = {path for path in map(_local_path, locations) if path is not None}
    removed: list[Path] = []
    for folder in sorted({path.parent for path in kept}):
        listed = list_eval_logs(str(folder), recursive=False)
        infos = [(info, _local_path(info.name)) for info in listed]
        newest = {info.task_id: info.mtime or 0.0 for info, path in infos if path in kept}
        for info, path in infos:
            if path is None or path in kept or (info.mtime or 0.0) >= newest.get(info.task_id, 0):
                continue
            try:
                started = read_eval_log(info.name, header_only=True).status == "started"
            except (OSError, ValueError, KeyError, zipfile.BadZipFile):
                continue  # cut short mid-write: left as it is
            if started:
                path.unlink()
                removed.append(path)
        if any(path.parent == folder for path in removed):
            write_log_dir_manifest(str(folder))
    return removed


def _local_path(location: str) -> Path | None:
    """The file of a local log location (a path or a file:// URI); None for remote stores."""
    if location.startswith("file://"):
        return Path(unquote(urlparse(location).path))
    return None if "://" in location else Path(location).resolve()
