"""Housekeeping of a resumed run's log folders."""

from __future__ import annotations

import json
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


def local_folder(location: str) -> Path | None:
    """The local folder of a log location (a path or a file:// URI); None for remote stores."""
    return _local_path(location)


def unreadable_reason(path: Path) -> str | None:
    """Why an ``.eval`` log cannot be read (None when it can): opened as a zip, its header read.

    Cheap: the zip's central directory and one small member, not the samples.
    """
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            member = next((n for n in ("header.json", "_journal/start.json") if n in names), None)
            if member is None:
                return "no header.json or _journal/start.json in it"
            json.loads(archive.read(member))
    except zipfile.BadZipFile as e:
        return f"not a readable zip: {e}"
    except (ValueError, KeyError, EOFError, OSError) as e:
        return f"{type(e).__name__}: {e}"
    return None


def move_aside_unreadable_logs(folder: Path) -> list[tuple[Path, str]]:
    """Rename every ``.eval`` under ``folder`` that cannot be read to ``NAME.eval.corrupt``.

    Inspect's eval set fails on such a file (``EOCD not found``, without its name) on
    every rerun; once renamed, it is no log to Inspect, so the samples it held run
    again. The folder's ``logs.json`` listing is rewritten when something moved.

    Returns:
        (new path, why it could not be read), for each log moved.
    """
    moved: list[tuple[Path, str]] = []
    for path in sorted(folder.rglob("*.eval")):
        reason = unreadable_reason(path)
        if reason is None:
            continue
        target = path.with_name(f"{path.name}.corrupt")
        path.replace(target)
        moved.append((target, reason))
    for parent in sorted({target.parent for target, _ in moved}):
        if (parent / "logs.json").exists():
            write_log_dir_manifest(str(parent))
    return moved


def _local_path(location: str) -> Path | None:
    """The file of a local log location (a path or a file:// URI); None for remote stores."""
    if location.startswith("file://"):
        return Path(unquote(urlparse(location).path))
    return None if "://" in location else Path(location).resolve()
