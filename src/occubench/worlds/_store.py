"""The world store: a folder of append-only segments that many processes read and write.

```
WORLD/world.json             the manifest (WorldManifest)
WORLD/contexts.jsonl         the contexts, one a line, each written once
WORLD/segments/*.jsonl       the entries, one a line; one file per writer process
WORLD/locks/                 a lock file per key while its answer is being made
```

**Reading.** ``World.open`` reads every segment into an index (key -> where its line
is; never the entries themselves, so memory grows by a few hundred bytes an entry) and
remembers where each file's complete lines end. A miss (``lookup``) first reads the new
bytes of every segment (``refresh``): another process may have recorded the key since.
Each line is checked as ``_read`` says, again whenever it is read back. When a key has
more than one entry (a merge of worlds that both recorded it), the first by ``created``
(then by digest) is the one a lookup gives.

**Writing.** Each writer process appends to a segment of its own,
``<host>-<pid>-<random>.jsonl``, created on its first entry: one ``write`` per line on a
file opened for appending, so a line is whole or, if the process is killed during it,
torn at the end of its own segment, where readers ignore it and no later line can be
glued to it (the next process writes another segment). Segments are fsync'd when closed.

**One request per key.** ``answer(key, make)`` calls ``make`` once for a key that is
missing, however many tasks and processes ask for it at once: in one process the first
task makes it and the others wait on an event; across processes on one machine the
maker holds ``flock`` on ``locks/<key>.lock`` (polled, so the event loop never blocks),
reads the new bytes again, and only then calls ``make``, appends, unlinks the lock file
and releases it. A waiter that gets the lock re-checks that the file it locked is still
the one at that path (else it locks the new one), then finds the entry. If ``make``
raises, nothing is recorded and the next waiter makes its own attempt. Processes on
other machines write their own world folder; ``merge`` joins them.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import io
import logging
import os
import re
import secrets
import socket
import stat
import tempfile
import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, BinaryIO, cast

from pydantic import ValidationError

from occubench.errors import UsageError
from occubench.text import nests_deeper
from occubench.worlds._models import (
    DIGEST,
    WORLD_FORMAT,
    ObservationSource,
    WorldContext,
    WorldEntry,
    WorldLimits,
    WorldManifest,
    canonical_json,
    entry_key,
    strict_json,
)
from occubench.worlds._packed import (
    CONTEXTS_FILE,
    MANIFEST_FILE,
    SEGMENT_NAME,
    SEGMENTS_DIR,
    Unpacked,
    read_packed,
)
from occubench.worlds._read import (
    ProblemKind,
    RawLine,
    WorldProblem,
    read_context,
    read_entry,
    scan_lines,
)

logger = logging.getLogger(__name__)

LOCKS_DIR = "locks"
_CONTEXTS_LOCK = "contexts.lock"
_POLL_FIRST = 0.005
"""Seconds before a process that waits for another's key lock looks again (doubling)."""
_POLL_MOST = 0.25
"""The longest wait between two looks at a key lock."""
_HOST = re.compile(r"[^A-Za-z0-9.-]+")

Location = tuple[int, int, int, int]
"""Where an entry's line is: segment number, offset, length (no newline), line number."""


class EntryTooLarge(ValueError):
    """An entry longer or deeper than the world's limits: it cannot be recorded."""


@dataclass(frozen=True)
class Answer:
    """What ``World.answer`` gives: the entry and where it came from."""

    entry: WorldEntry
    source: ObservationSource
    """``world``: recorded before; ``simulator``: made by this call's ``make``."""
    recorded: bool
    """The entry is in the world (False: ``make``'s entry was beyond the limits)."""


@dataclass(frozen=True)
class Record:
    """One valid entry line of a world: the entry, where it is, its bytes."""

    entry: WorldEntry
    file: str
    line: int
    data: bytes


def _empty_stream() -> BinaryIO:
    return tempfile.TemporaryFile()


class _Positional(io.RawIOBase):
    """A reader of a file descriptor at its own position (``pread``): many at once."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd
        self._position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        base = {os.SEEK_SET: 0, os.SEEK_CUR: self._position}.get(whence)
        if base is None:
            base = os.fstat(self._fd).st_size
        self._position = base + offset
        return self._position

    def readinto(self, buffer: Any) -> int:
        data = os.pread(self._fd, len(buffer), self._position)
        buffer[: len(data)] = data
        self._position += len(data)
        return len(data)


class _File:
    """One file of records (a segment, contexts.jsonl) and how far it has been read."""

    def __init__(
        self, display: str, path: Path | None = None, stream: BinaryIO | None = None
    ) -> None:
        self.display = display
        self.path = path
        self.stream = stream
        self.scanned = 0
        """Offset just after the last complete line read."""
        self.lines = 0
        """Complete lines read."""
        self.seen = 0
        """The file's size when it was last read (a torn last line is not read again)."""

    def size(self) -> int:
        """The file's size now (0 when it does not exist yet)."""
        if self.stream is not None:
            return os.fstat(self.stream.fileno()).st_size
        assert self.path is not None
        try:
            found = os.stat(self.path, follow_symlinks=False)
        except FileNotFoundError:
            return 0
        if stat.S_ISLNK(found.st_mode):
            raise UsageError(f"{self.path}: a symbolic link: refused (a world holds plain files)")
        if not stat.S_ISREG(found.st_mode):
            raise UsageError(f"{self.path}: not a plain file: refused")
        return found.st_size

    def open(self) -> BinaryIO:
        """A stream on the file (a plain file, never through a link)."""
        if self.stream is not None:  # a packed member: each reader at its own position
            return cast(BinaryIO, io.BufferedReader(_Positional(self.stream.fileno())))
        assert self.path is not None
        return open_plain(self.path)


def open_plain(path: Path) -> BinaryIO:
    """A plain file opened for reading; a link, a FIFO or a device is refused.

    Raises:
        UsageError: not a plain file.
        FileNotFoundError: no such file.
    """
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError as e:
        if isinstance(e, FileNotFoundError):
            raise
        if path.is_symlink():
            raise UsageError(
                f"{path}: a symbolic link: refused (a world holds plain files)"
            ) from None
        raise UsageError(f"{path}: cannot be read ({e.strerror or e})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UsageError(f"{path}: not a plain file: refused")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


class _Writer:
    """This process's own segment, created on its first line."""

    def __init__(self, segments: Path) -> None:
        host = _HOST.sub("-", socket.gethostname()).strip(".-")[:64] or "host"
        self.pid = os.getpid()
        self.name = f"{host}-{self.pid}-{secrets.token_hex(4)}.jsonl"
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        self.fd = os.open(segments / self.name, flags, 0o644)
        self.end = 0

    def write(self, data: bytes) -> int:
        """Append one line; the offset it starts at."""
        start, view = self.end, memoryview(data)
        while view:
            view = view[os.write(self.fd, view) :]
        self.end += len(data)
        return start

    def close(self) -> None:
        """Flush the segment to disk and close it."""
        try:
            os.fsync(self.fd)
        finally:
            os.close(self.fd)


class _KeyLock:
    """``flock`` on a key's lock file, taken without blocking the event loop (module doc)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd = -1

    async def __aenter__(self) -> None:
        delay = _POLL_FIRST
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                await asyncio.sleep(delay)
                delay = min(delay * 2, _POLL_MOST)
                continue
            except BaseException:
                os.close(fd)
                raise
            if _same_file(self.path, fd):
                self.fd = fd
                return
            os.close(fd)  # its holder was done and unlinked it: lock the file there now

    async def __aexit__(self, *_: object) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        os.close(self.fd)


def _same_file(path: Path, fd: int) -> bool:
    try:
        at = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (at.st_dev, at.st_ino) == (held.st_dev, held.st_ino)


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """A short exclusive ``flock`` (held for one read and one append)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _has_files(folder: Path) -> bool:
    """Whether a folder holds anything but hidden names (a world being made holds one)."""
    return any(not entry.name.startswith(".") for entry in os.scandir(folder))


def _write_new(path: Path, data: bytes) -> bool:
    """Create ``path`` with ``data`` whole, unless it exists; whether this call made it."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        try:
            os.link(temporary, path)
        except FileExistsError:
            return False
        return True
    finally:
        os.unlink(temporary)


def _append_line(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def read_manifest(data: bytes, where: str, limits: WorldLimits) -> WorldManifest:
    """A world's manifest from its bytes.

    Raises:
        UsageError: not a manifest, or a format this code does not read.
    """
    if len(data) > limits.line_bytes or nests_deeper(data, limits.line_depth):
        raise UsageError(f"{where}: not a world manifest (too large or too deep)")
    try:
        value = strict_json(data.decode("utf-8"))
    except (ValueError, RecursionError):
        raise UsageError(f"{where}: not a world manifest (not JSON)") from None
    if isinstance(value, dict) and value.get("format", WORLD_FORMAT) != WORLD_FORMAT:
        raise UsageError(
            f"{where}: world format {value.get('format')!r}; this occubench reads format "
            f"{WORLD_FORMAT}"
        )
    try:
        return WorldManifest.model_validate(value)
    except ValidationError as e:
        first = e.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise UsageError(f"{where}: not a world manifest: {field}: {first['msg']}") from None


class World:
    """A world opened for reading, or for reading and recording (module doc).

    Open it with ``World.open``; close it (or use it as a context manager) so that its
    segment is flushed to disk. One event loop uses a world at a time; its methods are
    safe to call from several threads.
    """

    def __init__(
        self,
        path: Path,
        manifest: WorldManifest,
        *,
        writable: bool,
        limits: WorldLimits,
        unpacked: Unpacked | None = None,
    ) -> None:
        self.path = path
        """The world folder, or the packed world's file."""
        self.manifest = manifest
        self.writable = writable
        self.limits = limits
        self.problems: list[WorldProblem] = []
        self._unread_bytes = 0
        """Lines not read and why (torn last lines are ``tails()``)."""
        self._unpacked = unpacked
        self._lock = threading.RLock()
        self._segments: list[_File] = []
        self._segment_ids: dict[str, int] = {}
        self._ignored: set[str] = set()
        self._index: dict[str, Location] = {}
        self._conflicts: set[str] = set()
        self._entries_read = 0
        self._contexts: dict[str, WorldContext] = {}
        self._contexts_read = 0
        self._contexts_file = self._context_source()
        self._pending: dict[str, asyncio.Event] = {}
        self._writer: _Writer | None = None

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        writable: bool,
        limits: WorldLimits | None = None,
        description: str = "",
    ) -> World:
        """Open a world folder or a packed world; with ``writable``, create a missing folder.

        Args:
            path: A world folder, or a packed world's file (read-only).
            writable: Record into it (a folder only); a missing or empty folder is made a
                world, described by ``description``.
            limits: The bounds it is read within (default: ``WorldLimits()``).
            description: The new world's description (a world that exists keeps its own).

        Raises:
            UsageError: not a world, a packed world opened ``writable``, a file that is not
                a plain file, or more entries, segments or bytes than ``limits``.
        """
        path = Path(path)
        limits = limits or WorldLimits()
        if path.is_file():
            if writable:
                raise UsageError(
                    f"{path} is a packed world, which is read-only: export it to a folder "
                    f"(occubench world export {path} --out FOLDER) to record into it"
                )
            world = cls._open_packed(path, limits)
        else:
            world = cls._open_folder(path, writable, limits, description)
        if world.problems:
            logger.warning(
                "world %s: %d problem(s) (lines not read), first: %s",
                path,
                len(world.problems),
                world.problems[0],
            )
        return world

    @classmethod
    def _open_folder(
        cls, path: Path, writable: bool, limits: WorldLimits, description: str
    ) -> World:
        manifest_path = path / MANIFEST_FILE
        if writable:
            try:
                path.mkdir(parents=True, exist_ok=True)
                if not manifest_path.exists() and not _has_files(path):
                    manifest = WorldManifest(created=datetime.now(UTC), description=description)
                    _write_new(manifest_path, manifest.model_dump_json(indent=2).encode() + b"\n")
            except OSError as e:
                raise UsageError(
                    f"{path}: a world cannot be made here ({e.strerror or e})"
                ) from None
        elif not path.is_dir():
            raise UsageError(f"no world at {path}")
        try:
            with open_plain(manifest_path) as stream:  # read as large as it is, within bounds
                size = os.fstat(stream.fileno()).st_size
                data = stream.read(min(size, limits.line_bytes) + 1)
        except FileNotFoundError:
            raise UsageError(f"{path} is not a world (it has no {MANIFEST_FILE})") from None
        manifest = read_manifest(data, str(manifest_path), limits)
        if writable:
            try:
                for folder in (path / SEGMENTS_DIR, path / LOCKS_DIR):
                    folder.mkdir(exist_ok=True)
                    _probe_writable(folder)  # a read-only folder: said now, not per sample
            except OSError as e:
                raise UsageError(
                    f"{path}: the world cannot be written ({e.strerror or e})"
                ) from None
        for folder in (path / SEGMENTS_DIR, path / LOCKS_DIR):
            if folder.is_symlink():
                raise UsageError(f"{folder}: a symbolic link: refused (a world holds folders)")
        world = cls(path, manifest, writable=writable, limits=limits)
        world.refresh()
        return world

    @classmethod
    def _open_packed(cls, path: Path, limits: WorldLimits) -> World:
        unpacked = read_packed(
            path,
            max_segments=limits.segments,
            max_bytes=limits.unpacked_bytes,
            max_ratio=limits.pack_ratio,
        )
        try:
            manifest = read_manifest(unpacked.manifest, f"{path}:{MANIFEST_FILE}", limits)
            world = cls(path, manifest, writable=False, limits=limits, unpacked=unpacked)
            world.problems += unpacked.problems
            with world._lock:
                world._scan_contexts()
                for name in sorted(unpacked.segments):
                    display = f"{path}:{SEGMENTS_DIR}/{name}"
                    world._add_segment(name, _File(display, stream=unpacked.segments[name]))
                for number in range(len(world._segments)):
                    world._scan_segment(number)
        except BaseException:
            unpacked.close()
            raise
        return world

    @property
    def segment_count(self) -> int:
        """Segment files read."""
        with self._lock:
            return len(self._segments)

    @property
    def packed(self) -> bool:
        """Whether this is a packed world (one read-only file)."""
        return self._unpacked is not None

    def __enter__(self) -> World:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Flush this process's segment to disk; let go of the files."""
        with self._lock:
            if self._writer is not None:
                writer, self._writer = self._writer, None
                if writer.pid == os.getpid():
                    writer.close()
            if self._unpacked is not None:
                self._unpacked.close()

    # reading

    def _context_source(self) -> _File:
        if self._unpacked is not None:
            if self._unpacked.contexts is None:
                return _File(f"{self.path}:{CONTEXTS_FILE}", stream=_empty_stream())
            return _File(f"{self.path}:{CONTEXTS_FILE}", stream=self._unpacked.contexts)
        return _File(str(self.path / CONTEXTS_FILE), path=self.path / CONTEXTS_FILE)

    def _problem(self, problem: WorldProblem, raw: RawLine | None = None) -> None:
        """Keep a problem; past the limits of unreadable lines or bytes, refuse the world.

        Each problem is a record held in memory: their count bounds the memory they take.
        The bytes are those of lines read and found unreadable: a line too long to read is
        skipped unread (``scan_lines``), so it counts as a line, not as bytes.
        """
        self.problems.append(problem)
        self._unread_bytes += 0 if raw is None else len(raw.data)  # a line too long: not read
        lines, most = len(self.problems), self.limits.unread_lines
        if lines > most or self._unread_bytes > self.limits.unread_bytes:
            limit = (
                f"more than {most} lines"
                if lines > most
                else f"more than {self.limits.unread_bytes} bytes of lines"
            )
            raise UsageError(f"{problem.file}: {limit} that cannot be read: not a world")

    def _scan(self, file: _File, take: Callable[[RawLine], None]) -> int:
        """Read a file's new complete lines; how many."""
        size = file.size()
        if size <= file.scanned or size == file.seen:
            return 0
        file.seen = size
        lines = 0
        with file.open() as stream:
            for raw in scan_lines(
                stream, offset=file.scanned, number=file.lines + 1, max_bytes=self.limits.line_bytes
            ):
                file.scanned, file.lines = raw.end, raw.number
                lines += 1
                take(raw)
        return lines

    def _scan_contexts(self) -> int:
        file = self._contexts_file

        def take(raw: RawLine) -> None:
            found = read_context(raw, file.display, self.limits)
            if isinstance(found, WorldProblem):
                self._problem(found, raw)
                return
            self._contexts_read += 1
            if self._contexts_read > self.limits.entries:
                raise UsageError(
                    f"{file.display}:{raw.number}: more than {self.limits.entries} contexts, "
                    "the limit"
                )
            self._contexts.setdefault(found.digest(), found)

        return self._scan(file, take)

    def _add_segment(self, name: str, file: _File) -> int:
        if len(self._segments) >= self.limits.segments:
            raise UsageError(
                f"{self.path}: more than {self.limits.segments} segments, the limit: not read"
            )
        self._segment_ids[name] = len(self._segments)
        self._segments.append(file)
        return self._segment_ids[name]

    def _scan_segment(self, number: int) -> int:
        file = self._segments[number]

        def take(raw: RawLine) -> None:
            found = read_entry(raw, file.display, self.limits)
            if isinstance(found, WorldProblem):
                self._problem(found, raw)
                return
            self._count_entry(file.display, raw.number)
            self._place(found, (number, raw.offset, len(raw.data), raw.number))

        return self._scan(file, take)

    def _count_entry(self, where: str, line: int) -> None:
        self._entries_read += 1
        if self._entries_read > self.limits.entries:
            raise UsageError(
                f"{where}:{line}: the world holds more than {self.limits.entries} entries, "
                "the limit"
            )

    def _place(self, entry: WorldEntry, location: Location) -> None:
        """Index an entry, unless its key has an earlier one (by ``created``, then digest)."""
        known = self._index.get(entry.key)
        if known is not None:
            held = self._read_at(known)
            if held is not None and held.answer_digest() != entry.answer_digest():
                self._conflicts.add(entry.key)
            if held is not None and (held.created, held.digest) <= (entry.created, entry.digest):
                return
        self._index[entry.key] = location

    def _read_at(self, location: Location) -> WorldEntry | None:
        number, offset, length, line = location
        file = self._segments[number]
        with file.open() as stream:
            stream.seek(offset)
            data = stream.read(length + 1)
        raw = RawLine(line, offset, offset + len(data), data[:-1])
        found = None
        if len(data) == length + 1 and data.endswith(b"\n"):
            found = read_entry(raw, file.display, self.limits)
        if isinstance(found, WorldEntry):
            return found
        self._problem(
            found
            if isinstance(found, WorldProblem)
            else WorldProblem(
                kind=ProblemKind.UNREADABLE,
                file=file.display,
                line=line,
                detail="changed since it was read: ignored",
            )
        )
        return None

    def refresh(self) -> int:
        """Read what other writers appended since: new contexts and entries; how many lines."""
        with self._lock:
            if self._unpacked is not None:
                return 0
            lines = self._scan_contexts()
            for name in self._segment_names():
                number = self._segment_ids.get(name)
                if number is None:
                    path = self.path / SEGMENTS_DIR / name
                    number = self._add_segment(name, _File(str(path), path=path))
                lines += self._scan_segment(number)
            return lines

    def _segment_names(self) -> list[str]:
        folder = self.path / SEGMENTS_DIR
        try:
            names = sorted(entry.name for entry in os.scandir(folder))
        except FileNotFoundError:
            return []
        found = []
        for name in names:
            if SEGMENT_NAME.fullmatch(name):
                found.append(name)
            elif name not in self._ignored and not name.startswith("."):
                self._ignored.add(name)
                self._problem(
                    WorldProblem(
                        kind=ProblemKind.FILE,
                        file=str(folder / name),
                        detail="not a segment's name (NAME.jsonl): not read",
                    )
                )
        return found

    def _get(self, key: str) -> WorldEntry | None:
        with self._lock:
            location = self._index.get(key)
            if location is None:
                return None
            found = self._read_at(location)
            if found is None or found.key != key:
                del self._index[key]
                return None
            return found

    def lookup(self, key: str) -> WorldEntry | None:
        """The entry recorded for a key (reading new entries first on a miss), else None."""
        found = self._get(key)
        if found is None and self.refresh():
            found = self._get(key)
        return found

    def contexts(self) -> dict[str, WorldContext]:
        """The world's contexts by digest."""
        with self._lock:
            return dict(self._contexts)

    def records(self) -> Iterator[Record]:
        """Every valid entry line read so far, in file order, with where it is.

        Duplicates and conflicting entries of a key included (``lookup`` gives one).
        """
        with self._lock:
            files = [(file, file.scanned) for file in self._segments]
        for file, end in files:
            with file.open() as stream:
                for raw in scan_lines(stream, offset=0, number=1, max_bytes=self.limits.line_bytes):
                    if raw.offset >= end:
                        break
                    found = read_entry(raw, file.display, self.limits)
                    if isinstance(found, WorldEntry):
                        yield Record(found, file.display, raw.number, raw.data)

    def entries(self) -> Iterator[WorldEntry]:
        """Every valid entry read so far, in file order (see ``records``)."""
        return (record.entry for record in self.records())

    def keys(self) -> list[str]:
        """The keys the world answers."""
        with self._lock:
            return list(self._index)

    def conflicts(self) -> list[str]:
        """The keys the world holds different answers for (the earliest by time is used)."""
        with self._lock:
            return sorted(self._conflicts)

    def tails(self) -> list[WorldProblem]:
        """A torn last line of each file that has one (no newline: ignored on read).

        A writer still at work may be writing one: verify a world no one writes to.
        """
        with self._lock:
            files = [self._contexts_file, *self._segments]
            return [
                WorldProblem(
                    kind=ProblemKind.TORN,
                    file=file.display,
                    line=file.lines + 1,
                    detail=f"the last line has no newline ({file.size() - file.scanned} bytes, "
                    "a writer stopped mid-line): ignored",
                )
                for file in files
                if file.size() > file.scanned
            ]

    def digest(self) -> str:
        """The world's digest: SHA-256 of the sorted digests of the entries it answers with.

        One entry per key (the one ``lookup`` gives), joined by newlines: equal for a world
        folder and its packed export, whatever the segments.
        """
        with self._lock:
            found = [self._read_at(location) for location in self._index.values()]
        digests = sorted(entry.digest for entry in found if entry is not None)
        return hashlib.sha256("\n".join(digests).encode()).hexdigest()

    # writing

    def _writable(self) -> None:
        if not self.writable:
            raise ValueError(f"the world {self.path} is open read-only")

    def add_context(self, context: WorldContext) -> str:
        """Write a context into the world unless it holds it; its digest (for entries)."""
        digest = context.digest()
        with self._lock:
            if digest in self._contexts:
                return digest
            self._writable()
            with _file_lock(self.path / LOCKS_DIR / _CONTEXTS_LOCK):
                self._scan_contexts()
                if digest not in self._contexts:
                    line = canonical_json(context.model_dump(mode="json", exclude_none=True))
                    _append_line(self.path / CONTEXTS_FILE, line.encode() + b"\n")
                    self._scan_contexts()
        return digest

    def append(self, entry: WorldEntry) -> WorldEntry:
        """Record an entry in this process's segment; the entry as written (its digest set).

        Raises:
            ValueError: a read-only world, an entry whose key is not its path's, or whose
                context was not added (``add_context``).
            EntryTooLarge: an entry longer or deeper than the world's limits.
            UsageError: the world holds as many entries as its limits allow.
        """
        self._writable()
        if entry.key != entry_key(entry.context_digest, entry.path, entry.call):
            raise ValueError(f"entry {entry.key[:16]}...: the key is not its path's key")
        sealed = entry.sealed()
        line = sealed.line()
        if len(line) - 1 > self.limits.line_bytes or nests_deeper(line, self.limits.line_depth):
            raise EntryTooLarge(
                f"entry {entry.key[:16]}... is longer than {self.limits.line_bytes} bytes or "
                f"nests deeper than {self.limits.line_depth} levels: not recorded"
            )
        with self._lock:
            if sealed.context_digest not in self._contexts:
                self._scan_contexts()
            if sealed.context_digest not in self._contexts:
                raise ValueError(f"context {sealed.context_digest[:16]}... was not added")
            if self._entries_read >= self.limits.entries:
                raise UsageError(
                    f"{self.path}: the world holds {self.limits.entries} entries, the limit: "
                    "not recorded"
                )
            writer = self._own_writer()
            number = self._segment_ids[writer.name]
            file = self._segments[number]
            try:
                offset = writer.write(line)
            except OSError:
                self._writer = None  # a torn line may end it: later lines go to a new segment
                with contextlib.suppress(OSError):
                    writer.close()
                raise
            file.scanned, file.lines = writer.end, file.lines + 1
            file.seen = writer.end
            self._entries_read += 1
            self._place(sealed, (number, offset, len(line) - 1, file.lines))
        return sealed

    def _own_writer(self) -> _Writer:
        writer = self._writer
        if writer is None or writer.pid != os.getpid():  # a forked child writes its own
            writer = self._writer = _Writer(self.path / SEGMENTS_DIR)
            path = self.path / SEGMENTS_DIR / writer.name
            self._add_segment(writer.name, _File(str(path), path=path))
        return writer

    async def answer(self, key: str, make: Callable[[], Awaitable[WorldEntry]]) -> Answer:
        """The entry recorded for a key, or the one ``make()`` makes, recorded.

        ``make`` is called once for a missing key across every task and process that asks
        for it at once (module doc); the others wait and get the recorded entry. When
        ``make`` raises, nothing is recorded, the exception propagates to its caller and
        the next waiter calls its own ``make``.

        Raises:
            ValueError: a read-only world, a key that is not a SHA-256, or ``make``'s entry
                has another key.
        """
        if not DIGEST.fullmatch(key):
            raise ValueError(f"not a world key: {key[:80]!r}")
        self._writable()
        while True:
            found = self.lookup(key)
            if found is not None:
                return Answer(found, ObservationSource.WORLD, recorded=True)
            pending = self._pending.get(key)
            if pending is not None:
                await pending.wait()
                continue
            done = self._pending[key] = asyncio.Event()
            try:
                return await self._make(key, make)
            finally:
                del self._pending[key]
                done.set()

    async def _make(self, key: str, make: Callable[[], Awaitable[WorldEntry]]) -> Answer:
        async with _KeyLock(self.path / LOCKS_DIR / f"{key}.lock"):
            found = self.lookup(key)
            if found is not None:
                return Answer(found, ObservationSource.WORLD, recorded=True)
            entry = await make()
            if entry.key != key:
                raise ValueError(f"make() gave an entry for key {entry.key[:16]}..., not {key}")
            try:
                return Answer(self.append(entry), ObservationSource.SIMULATOR, recorded=True)
            except EntryTooLarge as e:
                logger.warning("world %s: %s", self.path, e)
                return Answer(entry.sealed(), ObservationSource.SIMULATOR, recorded=False)


def _probe_writable(folder: Path) -> None:
    """Create and remove a file in ``folder``: a folder that cannot take one raises now.

    Raises:
        OSError: the folder cannot be written (read-only, full, not ours).
    """
    probe = folder / f".probe-{os.getpid()}-{secrets.token_hex(4)}"
    descriptor = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    os.close(descriptor)
    probe.unlink()
