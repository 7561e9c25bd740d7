"""Call journals: the calls an unfinished sample paid for, kept on disk for a resume.

A run that stops (Ctrl-C, SIGTERM, ``kill -9``, a killed shard, a reboot) loses the
answers its unfinished samples had paid for; the same command again runs those samples
from their start. Each sample's answered calls are therefore journaled as they complete,
one file per sample and epoch in the run's log folder::

    LOG_DIR/.journal/CONFIG/SAMPLE-EPOCH.jsonl

``CONFIG`` is a digest of the run's configuration (``config_digest``: task, arguments,
models, their endpoints and generate settings). The first line is a ``JournalHeader``
(format, occubench version, configuration, sample, epoch); each further line is a
``JournalEntry``: the call's request digest (``occubench.calls._replay.request_key``),
the provider's answer as Inspect's ``ModelOutput`` JSON (reasoning blocks and their
signatures byte for byte) and a SHA-256 over both. A line is appended, flushed and
fsync'd as its call completes, so a killed process loses at most the call in flight.

On resume, the sample's attempt chain is seeded from its journal (``read_journal``): a
call whose request equals a journaled one is answered from it, and from the first call
that matches none the journal is closed and the provider is asked
(``occubench.calls._replay``). A journal that is torn, edited (a checksum that does
not match), of another configuration, version, sample or epoch, a link or larger than
``DEFAULT_MAX_JOURNAL_BYTES`` is ignored with a warning naming it: never a wrong
replay. Files are created with mode 0600, never through a link; an answer that holds a
secret (``occubench.redaction``) is not journaled. Journals of samples that are in the
log are removed when the run ends (``remove_journals``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import stat
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Literal

from inspect_ai.model import ModelOutput
from pydantic import BaseModel, Field, ValidationError

from occubench.defaults import DEFAULT_MAX_JOURNAL_BYTES
from occubench.files import write_fresh
from occubench.redaction import holds_secret
from occubench.text import clean_output

logger = logging.getLogger(__name__)

JOURNAL_FOLDER = ".journal"
"""The folder of a log folder that holds its call journals."""
JournalFormat = Literal["occubench-journal/1"]
"""The format a journal's header names."""
JOURNAL_FORMAT: JournalFormat = "occubench-journal/1"
_SAFE_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def occubench_version() -> str:
    """The installed occubench's version (a journal is replayed by the same version only)."""
    try:
        return version("occubench")
    except PackageNotFoundError:  # pragma: no cover - a source tree that is not installed
        return "unknown"


class JournalHeader(BaseModel):
    """The first line of a journal: whose calls it holds."""

    format: JournalFormat = Field(description="The journal format.")
    version: str = Field(description="The occubench version that wrote it.")
    config: str = Field(description="The run configuration's digest (``config_digest``).")
    sample: str = Field(description="The sample's id, as text.")
    epoch: int = Field(description="The sample's epoch.")


class JournalEntry(BaseModel):
    """One answered call: its request digest, the answer and their checksum."""

    key: str = Field(description="The request's digest (``request_key``).")
    output: str = Field(description="The answer: Inspect's ModelOutput as JSON.")
    check: str = Field(description="SHA-256 of the key, a newline and the output.")

    @staticmethod
    def checksum(key: str, output: str) -> str:
        """The checksum of a key and an output."""
        return hashlib.sha256(f"{key}\n{output}".encode("utf-8", "surrogatepass")).hexdigest()

    @classmethod
    def of(cls, key: str, output: ModelOutput) -> JournalEntry:
        """The entry of an answered call.

        Lone surrogates (half an emoji) are escaped as every reader of an answer escapes
        them (``occubench.text.clean_output``): no UTF-8 file holds them, and the answer a
        replay gives is the one the run went on with.
        """
        text = clean_output(output.model_copy(deep=True)).model_dump_json()
        return cls(key=key, output=text, check=cls.checksum(key, text))


class JournalProblem(ValueError):
    """A journal that must not be replayed (torn, edited, foreign); the message says why."""


def config_digest(parts: Mapping[str, Any]) -> str:
    """A short digest of a run's configuration (JSON values; keys in any order)."""
    text = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def sample_file_name(sample: str | int, epoch: int) -> str:
    """The journal's file name of a sample and epoch (an id that is no safe name: digested)."""
    text = str(sample)
    if not _SAFE_ID.fullmatch(text) or text.startswith("."):
        text = "id-" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return f"{text}-{epoch}.jsonl"


@dataclass(frozen=True)
class JournalPlace:
    """Where the journals of one run's samples go: a log folder and a configuration."""

    log_dir: Path
    config: str
    max_bytes: int = DEFAULT_MAX_JOURNAL_BYTES

    @property
    def folder(self) -> Path:
        """The folder of this configuration's journals."""
        return self.log_dir / JOURNAL_FOLDER / self.config

    def path(self, sample: str | int, epoch: int) -> Path:
        """The journal of a sample and epoch."""
        return self.folder / sample_file_name(sample, epoch)

    def header(self, sample: str | int, epoch: int) -> JournalHeader:
        """The header a journal of this place must have."""
        return JournalHeader(
            format=JOURNAL_FORMAT,
            version=occubench_version(),
            config=self.config,
            sample=str(sample),
            epoch=epoch,
        )


def _plain_folder(folder: Path) -> None:
    """Make ``folder`` (mode 0700) and refuse one that is a link.

    Raises:
        OSError: it is a link or not a folder, or cannot be made.
    """
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if not stat.S_ISDIR(os.lstat(folder).st_mode):
        raise OSError(f"{folder} is a link or not a folder")


def read_journal(place: JournalPlace, sample: str | int, epoch: int) -> list[JournalEntry]:
    """The entries of a sample's journal, in order (none when there is no journal).

    Raises:
        JournalProblem: the journal must not be replayed (the message names the file and
            the line): a link or not a plain file, larger than the bound, a line cut
            short, not a header or entry, a checksum that does not match, another
            format, version, configuration, sample or epoch.
    """
    path = place.path(sample, epoch)
    try:
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
        descriptor = os.open(path, flags)
    except FileNotFoundError:
        return []
    except OSError as e:
        raise JournalProblem(f"{path}: cannot be opened as a plain file ({e.strerror})") from e
    with os.fdopen(descriptor, "rb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            raise JournalProblem(f"{path}: not a plain file")
        data = file.read(place.max_bytes + 1)
    if len(data) > place.max_bytes:
        raise JournalProblem(f"{path}: larger than {place.max_bytes} bytes")
    if not data:
        return []
    if not data.endswith(b"\n"):
        raise JournalProblem(f"{path}: its last line is cut short (torn)")
    lines = data.decode("utf-8", "surrogateescape").splitlines()
    try:
        header = JournalHeader.model_validate_json(lines[0])
    except ValidationError as e:
        raise JournalProblem(f"{path} line 1: not a journal header ({_first(e)})") from e
    expected = place.header(sample, epoch)
    for field in ("version", "config", "sample", "epoch"):
        if getattr(header, field) != getattr(expected, field):
            raise JournalProblem(
                f"{path} line 1: {field} is {getattr(header, field)!r}, "
                f"not this run's {getattr(expected, field)!r}"
            )
    entries = []
    for number, line in enumerate(lines[1:], start=2):
        try:
            entry = JournalEntry.model_validate_json(line)
        except ValidationError as e:
            raise JournalProblem(f"{path} line {number}: not a journal entry ({_first(e)})") from e
        if entry.check != JournalEntry.checksum(entry.key, entry.output):
            raise JournalProblem(f"{path} line {number}: its checksum does not match")
        entries.append(entry)
    return entries


def _first(error: ValidationError) -> str:
    """The first problem of a validation error, in a few words."""
    first = error.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "line"
    return f"{where}: {first['msg']}"


class Journal:
    """One sample's journal: answers to replay on resume, and the writer of new ones.

    ``take`` answers a request from the journal while it is open; ``close_reading``
    ends that (the first call that matched none), rewriting the file to the entries
    used so far when others remain, so that it holds only what this chain asked.
    ``append`` adds a paid call. Writing stops, with a warning, when the file would
    pass the bound or cannot be written; replaying never depends on it.
    """

    def __init__(self, place: JournalPlace, sample: str | int, epoch: int) -> None:
        self.place = place
        self.path = place.path(sample, epoch)
        self.header = place.header(sample, epoch)
        self.pending: dict[str, deque[JournalEntry]] = {}
        self.used: list[JournalEntry] = []
        self.reading = False
        self.writing = True
        self.size = 0
        self._on_disk = False
        self._file: int | None = None

    def seed(self) -> int:
        """Read the sample's journal from disk to replay it; the number of entries.

        A journal that must not be replayed is ignored with a warning naming it (and
        replaced once the sample pays for its first call).
        """
        try:
            entries = read_journal(self.place, self.header.sample, self.header.epoch)
        except JournalProblem as problem:
            logger.warning("call journal ignored (its calls are asked again): %s", problem)
            _ignored.append(str(problem))
            entries = []
        for entry in entries:
            self.pending.setdefault(entry.key, deque()).append(entry)
        self.reading = self._on_disk = bool(entries)
        if entries:  # kept as it is until it is appended to or rewritten
            self.size = self.path.stat().st_size
        return len(entries)

    def take(self, key: str) -> ModelOutput | None:
        """The next journaled answer to this request (None: none, or the journal is closed)."""
        if not self.reading:
            return None
        waiting = self.pending.get(key)
        if not waiting:
            return None
        entry = waiting.popleft()
        try:
            output = ModelOutput.model_validate_json(entry.output)
        except ValidationError as e:
            logger.warning("call journal %s: an answer cannot be read (%s)", self.path, _first(e))
            waiting.appendleft(entry)
            return None
        self.used.append(entry)
        return output

    def close_reading(self) -> None:
        """Replay ends here: later calls are paid (the file keeps only what was used)."""
        if not self.reading:
            return
        self.reading = False
        if any(self.pending.values()):
            self._rewrite(self.used)
        self.pending.clear()

    def restart(self) -> None:
        """Forget every answer (the sample asks its models again): an empty journal."""
        self.reading = False
        self.pending.clear()
        self.used = []
        self._rewrite([])

    def append(self, key: str, output: ModelOutput) -> None:
        """Journal one paid call (appended, flushed and fsync'd)."""
        if not self.writing:
            return
        entry = JournalEntry.of(key, output)
        if holds_secret(entry.output):
            return  # a resume pays for this call again rather than keep a secret
        line = (entry.model_dump_json() + "\n").encode("utf-8", "surrogatepass")
        if self.size + len(line) > self.place.max_bytes:
            self._stop(f"it reached {self.place.max_bytes} bytes")
            return
        try:
            if self._file is None:
                self._open()
            if self._file is None:
                return  # stopped while opening
            _write_all(self._file, line)
            os.fsync(self._file)
        except OSError as e:
            self._stop(str(e))
            return
        self.size += len(line)

    def close(self) -> None:
        """Close the file (the journal stays on disk)."""
        if self._file is not None:
            os.close(self._file)
            self._file = None

    def _open(self) -> None:
        """Open the journal to append: the one read (if valid), else a fresh one."""
        if not self._on_disk:
            self._rewrite([])  # replaces a journal that was ignored
            return
        _plain_folder(self.place.folder)
        flags = os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
        self._file = os.open(self.path, flags)
        if not stat.S_ISREG(os.fstat(self._file).st_mode):
            self.close()
            raise OSError(f"{self.path} is not a plain file")

    def _rewrite(self, entries: Iterable[JournalEntry]) -> None:
        """Replace the file whole by the header and ``entries``; appends go on after them."""
        self.close()
        lines = [self.header.model_dump_json(), *(e.model_dump_json() for e in entries)]
        text = "".join(f"{line}\n" for line in lines)
        if not self.writing:
            return
        try:
            _plain_folder(self.place.folder)
            write_fresh(self.path, text, mode=0o600)
            self._on_disk = True
            self._file = os.open(
                self.path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
            )
        except OSError as e:
            self._stop(str(e))
            return
        self.size = len(text.encode("utf-8", "surrogatepass"))

    def _stop(self, why: str) -> None:
        """Journal no more calls of this sample (a resume pays for them again)."""
        if self.writing:
            logger.warning("call journal %s: no more calls journaled (%s)", self.path, why)
        self.writing = False
        self.close()


def _write_all(descriptor: int, data: bytes) -> None:
    """Write every byte (``os.write`` may write part)."""
    view = memoryview(data)
    while view:
        written = os.write(descriptor, view)
        view = view[written:]


_place: JournalPlace | None = None
_resumed = 0
_ignored: list[str] = []


@contextmanager
def journaled_calls(place: JournalPlace | None) -> Iterator[None]:
    """The samples that run inside the block journal their calls at ``place`` (None: not)."""
    global _place, _resumed
    outer, _place = _place, place
    _resumed = 0
    _ignored.clear()
    try:
        yield
    finally:
        _place = outer


def journal_place() -> JournalPlace | None:
    """Where the running eval's samples journal their calls (None: nowhere)."""
    return _place


def count_resumed() -> None:
    """One call was answered from a journal."""
    global _resumed
    _resumed += 1


def resumed_calls() -> int:
    """Calls answered from journals since the last ``journaled_calls`` block began."""
    return _resumed


def ignored_journals() -> list[str]:
    """Why each journal ignored since the last ``journaled_calls`` block began was (file, line)."""
    return list(_ignored)


def remove_journals(place: JournalPlace, samples: Iterable[tuple[str | int, int]]) -> int:
    """Remove the journals of these samples (id, epoch); the number removed.

    The configuration's folder goes too once it is empty, and the journal folder after it.
    """
    removed = 0
    for sample, epoch in samples:
        path = place.path(sample, epoch)
        try:
            path.unlink()
            removed += 1
        except FileNotFoundError:
            pass
    for folder in (place.folder, place.folder.parent):
        try:
            folder.rmdir()
        except OSError:
            break  # not empty, or not there
    return removed


def remove_all_journals(place: JournalPlace) -> None:
    """Remove this configuration's journals (the run completed: none is needed again)."""
    folder = place.folder
    if folder.is_dir() and not folder.is_symlink():
        shutil.rmtree(folder, ignore_errors=True)
    try:
        folder.parent.rmdir()
    except OSError:
        pass
