"""Holding a log folder for a run: writable, space left, one run at a time, logs readable.

Before any model call, a run takes its log folder (``hold_log_folder``):

1. **Writable.** The folder is created if needed and its lock file opened for writing: a
   read-only folder is one clear line (``LogFolderError``), not a traceback from deep in
   Inspect.
2. **Space.** A disk with less than ``DEFAULT_MIN_FREE_MB`` free (or twice the
   largest log in the folder: Inspect rewrites a log whole) refuses the run in one
   line. Inspect does not fail when a log write does (a disk that fills up during the
   run leaves logs missing or cut short), so the logs an eval set returns are checked
   (``check_logs_written``) and a full or read-only disk is the same kind of line.
3. **One run at a time.** ``LOG_DIR/.occubench.lock`` is locked (``flock``, exclusive,
   not waiting) and holds the owner's pid, host, start time and command. A second start
   fails with who holds it (``LogFolderBusy``); the operating system releases the lock
   of a process that died, so a stale lock file (its pid not running) is taken over,
   and said so. The file is emptied, never removed, at the end (removing a locked file
   would let two runs lock two different files of the same name). The lock is held
   per process and re-entrant: the command and the runner under it take it once.
4. **Readable logs.** A ``.eval`` in the folder (or its shard subfolders) that cannot be
   opened (a truncated zip, no ``header.json``) is renamed ``NAME.eval.corrupt`` and
   named, so the eval set runs its samples again instead of failing on it
   (``move_aside_unreadable_logs``).

Remote log folders (``s3://...``) are not checked: no lock exists there.
"""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from pydantic import BaseModel, Field

from occubench.defaults import DEFAULT_LOCK_FILE, DEFAULT_MIN_FREE_MB
from occubench.scale._log_housekeeping import (
    local_folder,
    move_aside_unreadable_logs,
    unreadable_reason,
)

_REWRITE_MARGIN_MB = 1.0
"""After a failed log write: a disk with less free space than this (or twice the largest
log) is taken to be full."""
_DISK_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM}


class LogFolderError(RuntimeError):
    """The log folder cannot take this run (read-only, disk full, in use): one line."""


class LogFolderBusy(LogFolderError):
    """Another run holds the log folder's lock."""


class LockOwner(BaseModel):
    """Who holds a log folder (the lock file's content)."""

    pid: int = Field(description="Process id of the run holding the folder.")
    host: str = Field(description="Host name of that process.")
    started: str = Field(description="When it took the folder (ISO 8601, UTC).")
    command: str = Field(default="", description="Its command line.")


class HeldFolder(BaseModel):
    """What taking a log folder found and did (lines for the user)."""

    folder: str = Field(description="The log folder.")
    notes: list[str] = Field(
        default_factory=list,
        description="What was done on the way: a stale lock taken over, logs moved aside.",
    )


def _full(folder: str | Path) -> LogFolderError:
    free = _free_mb(Path(folder))
    left = "" if free is None else f" ({free:.1f} MB free)"
    return LogFolderError(
        f"the disk holding the log folder {folder} is full{left}: free some space and run "
        "the same command again (finished samples already written are kept)"
    )


def disk_problem(error: OSError, folder: str | Path) -> LogFolderError | None:
    """The one-line error for a failed write into ``folder``, or None if not a disk problem."""
    if error.errno not in _DISK_ERRNOS:
        return None
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return _full(folder)
    what = "read-only" if error.errno == errno.EROFS else "not writable"
    return LogFolderError(
        f"the log folder {folder} is {what} ({error.strerror}): choose another with "
        "--log-dir or make it writable"
    )


def _free_mb(folder: Path) -> float | None:
    for candidate in (folder, *folder.parents):
        if candidate.exists():
            return shutil.disk_usage(candidate).free / 2**20
    return None


def _needed_mb(folder: Path, floor: float) -> float:
    """Free space a run in ``folder`` needs (MB): the floor, or twice its largest log.

    Inspect rewrites a log whole while the old one is still on disk.
    """
    sizes = [p.stat().st_size for p in folder.rglob("*.eval")] if folder.is_dir() else []
    return max(floor, 2 * max(sizes, default=0) / 2**20)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class _Held:
    def __init__(self, handle: IO[str]) -> None:
        self.handle = handle
        self.count = 0


_held: dict[Path, _Held] = {}
_held_lock = threading.Lock()


_OWNER_WAITS = 40
_OWNER_WAIT_SECONDS = 0.05
"""How long a refused start waits for the holder to write who it is (2 s at most)."""


def _read_owner(handle: IO[str]) -> LockOwner | None:
    handle.seek(0)
    try:
        return LockOwner.model_validate_json(handle.read())
    except ValueError:
        return None


def _lock(folder: Path, notes: list[str]) -> _Held:
    """Open and lock the folder's lock file, or raise ``LogFolderBusy`` naming its owner."""
    path = folder / DEFAULT_LOCK_FILE
    try:
        handle = path.open("a+", encoding="utf-8")
    except OSError as e:
        raise (disk_problem(e, folder) or e) from None
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        owner = _read_owner(handle)
        for _ in range(_OWNER_WAITS):  # the holder locks first, then writes its pid
            if owner is not None:
                break
            time.sleep(_OWNER_WAIT_SECONDS)
            owner = _read_owner(handle)
        handle.close()
        who = (
            f"pid {owner.pid} on {owner.host}, started {owner.started}: {owner.command}"
            if owner
            else "a process that has not written its pid yet"
        )
        raise LogFolderBusy(
            f"the log folder {folder} is in use by another run ({who}); wait for it to "
            "finish or stop it, or choose another --log-dir"
        ) from None
    stale = _read_owner(handle)
    if stale is not None and not (stale.host == socket.gethostname() and _alive(stale.pid)):
        notes.append(
            f"took over the lock of {folder} left by pid {stale.pid} on {stale.host} "
            f"(started {stale.started}), which is not running"
        )
    owner = LockOwner(
        pid=os.getpid(),
        host=socket.gethostname(),
        started=datetime.now(UTC).isoformat(timespec="seconds"),
        command=" ".join(sys.argv),
    )
    try:
        handle.seek(0)
        handle.truncate()
        handle.write(owner.model_dump_json())
        handle.flush()
        os.fsync(handle.fileno())
    except OSError as e:
        handle.close()
        raise (disk_problem(e, folder) or e) from None
    return _Held(handle)


def _release(held: _Held) -> None:
    try:
        held.handle.seek(0)
        held.handle.truncate()
        held.handle.flush()
    except OSError:
        pass  # a full disk cannot stop the release: closing unlocks
    held.handle.close()


@contextmanager
def hold_log_folder(log_dir: str | Path, min_free_mb: float | None = None) -> Iterator[HeldFolder]:
    """Take a log folder for a run (module doc); released when the block ends.

    ``min_free_mb``: free space the disk must have (default ``DEFAULT_MIN_FREE_MB``).

    Raises:
        LogFolderError: the folder cannot be written or its disk is full.
        LogFolderBusy: another run holds it.
    """
    folder = local_folder(str(log_dir))
    held = HeldFolder(folder=str(log_dir))
    if folder is None:  # a remote store: nothing to check or lock
        yield held
        return
    folder = folder.resolve()
    with _held_lock:
        mine = _held.get(folder)
    if mine is None:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise (disk_problem(e, folder) or e) from None
        mine = _lock(folder, held.notes)  # the write test: read-only folders fail here
        free = _free_mb(folder)
        needed = _needed_mb(folder, DEFAULT_MIN_FREE_MB if min_free_mb is None else min_free_mb)
        if free is not None and free < needed:
            _release(mine)
            raise LogFolderError(
                f"the disk holding the log folder {folder} is full ({free:.0f} MB free, "
                f"{needed:.0f} MB needed): free some space or choose another --log-dir"
            )
        with _held_lock:
            _held[folder] = mine
    mine.count += 1
    try:
        for moved, reason in move_aside_unreadable_logs(folder):
            held.notes.append(
                f"a log that cannot be read was moved aside, its samples run again: "
                f"{moved.with_suffix('')} ({reason}) -> {moved.name}"
            )
        yield held
    finally:
        mine.count -= 1
        if mine.count == 0:
            with _held_lock:
                _held.pop(folder, None)
            _release(mine)


def missing_root(log_dir: str | Path) -> Path | None:
    """The outermost folder of a local ``log_dir``'s path that does not exist yet.

    None when the folder exists, or is remote. What a run that never starts should
    remove again (``remove_unstarted``).
    """
    folder = local_folder(str(log_dir))
    if folder is None or folder.exists():
        return None
    folder = folder.absolute()
    while not folder.parent.exists():
        folder = folder.parent
    return folder


def remove_unstarted(root: Path) -> bool:
    """Remove a folder a run made but never used: it holds only lock files and folders.

    Returns:
        Whether it was removed (a folder that holds anything else is kept).
    """
    if not root.is_dir():
        return False
    if any(p.is_file() and p.name != DEFAULT_LOCK_FILE for p in root.rglob("*")):
        return False
    shutil.rmtree(root, ignore_errors=True)
    return True


def log_folder_error(error: BaseException, log_dir: str | Path) -> LogFolderError | None:
    """The one-line error a failure while writing logs stands for, if it is a disk problem.

    Looks through the exception's causes and contexts (Inspect may wrap the OSError).
    """
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError):
            found = disk_problem(current, log_dir)
            if found is not None:
                return found
        current = current.__cause__ or current.__context__
    return None


def check_logs_written(locations: list[str], log_dir: str | Path) -> None:
    """After an eval set: every local log it returned is on disk and readable.

    Inspect does not fail when its log writes do (a full disk ends with logs that are
    missing or cut short, and no error); this says so in one line, naming the cause when
    it is the disk: read-only now, or (nearly) full.

    Raises:
        LogFolderError: a log is missing or unreadable.
    """
    bad = []
    for location in locations:
        path = local_folder(location)
        if path is None:
            continue
        reason = "missing" if not path.is_file() else unreadable_reason(path)
        if reason is not None:
            bad.append(f"{path} ({reason})")
    if not bad:
        return
    folder = local_folder(str(log_dir)) or Path(str(log_dir))
    probe = folder / f".{DEFAULT_LOCK_FILE}.probe"
    try:
        probe.write_bytes(b"x" * 4096)
        probe.unlink()
    except OSError as e:
        probe.unlink(missing_ok=True)
        problem = disk_problem(e, folder)
        if problem is not None:
            raise problem from None
    free = _free_mb(folder)
    if free is not None and free < _needed_mb(folder, _REWRITE_MARGIN_MB):
        raise _full(folder)
    raise LogFolderError(f"the eval set's logs were not written completely: {', '.join(bad)}")
