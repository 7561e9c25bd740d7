"""Lines of a world read within bounds, each checked before it is believed.

A world may come from someone else, so every line is held to ``WorldLimits`` before it
is parsed: a line longer than ``line_bytes`` is skipped unread (measured to its newline a
chunk at a time, never held: ``scan_lines``) and reported; one nesting deeper than
``line_depth`` (measured on its bytes) is not parsed; one that is not UTF-8, not JSON (NaN
and the infinities included) or not a record is reported. An entry's digest and key are
recomputed from the line and must equal the ones written.

A last line without its newline is left for later: its writer may still be writing it,
or was killed mid-line (a torn line, which ``world verify`` reports). Every problem names
its file and line (``WorldProblem``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from typing import Any, BinaryIO

from pydantic import BaseModel, Field, ValidationError

from occubench.text import nests_deeper
from occubench.worlds._models import (
    WorldContext,
    WorldEntry,
    WorldLimits,
    canonical_json,
    entry_key,
    strict_json,
    text_digest,
)

_CHUNK = 1 << 20
"""Most bytes of a line read at once: a longer line is measured chunk by chunk first."""
_SHOWN_CHARS = 200
"""Characters of a validation message kept in a problem."""


class ProblemKind(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """What is wrong with a world (``world verify``)."""

    TORN = "torn"
    """A last line without its newline: a writer killed mid-line (ignored on read)."""
    UNREADABLE = "unreadable"
    """A line that is too long, too deep, not UTF-8, not JSON or not a record (ignored)."""
    DIGEST = "digest"
    """An entry whose digest is missing or does not match its line (ignored)."""
    KEY = "key"
    """An entry whose key is not the key of its context and path (ignored)."""
    CONFLICT = "conflict"
    """One key with two different answers (the first by ``created`` is the one used)."""
    MISSING_CONTEXT = "missing_context"
    """Entries reference a context the world does not hold."""
    CHECKSUM = "checksum"
    """A member of a packed world does not match its SHA-256 in ``sha256sums.txt``."""
    FILE = "file"
    """A file of the world that is not read (a name that is not a segment's)."""
    PROVENANCE = "provenance"
    """An entry whose run log holds another answer for its key (``world verify --logs``)."""


class WorldProblem(BaseModel):
    """One problem found in a world, where it is."""

    kind: ProblemKind = Field(description="What is wrong.")
    file: str = Field(description="The file (for a packed world: FILE:member).")
    line: int | None = Field(default=None, description="The line (1-based), when one.")
    detail: str = Field(description="What is wrong, in words.")

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: {self.detail}"


@dataclass(frozen=True)
class RawLine:
    """One complete line of a file: its number, where it starts and ends, its bytes."""

    number: int
    offset: int
    end: int
    """Offset just after its newline."""
    data: bytes
    """The line without its newline (empty when it was too long to read)."""
    too_long: bool = False


def scan_lines(stream: BinaryIO, *, offset: int, number: int, max_bytes: int) -> Iterator[RawLine]:
    """The complete lines of a stream from ``offset`` (the first numbered ``number``).

    Stops before a last line without a newline. A line is read a chunk at a time: one
    that ends within its first chunk is yielded as read; a longer one is measured to its
    newline (each chunk discarded once counted), then read back whole if it is at most
    ``max_bytes``, else yielded with ``too_long`` and nothing read. However long a line,
    memory holds at most one chunk of it beyond the line bound.
    """
    step = min(_CHUNK, max_bytes + 1)
    stream.seek(offset)
    while True:
        chunk = stream.readline(step)
        if chunk.endswith(b"\n"):
            yield RawLine(number, offset, offset + len(chunk), chunk[:-1])
            offset, number = offset + len(chunk), number + 1
            continue
        if len(chunk) < step:
            return  # the end of the file, or a line still being written
        length = len(chunk)
        del chunk
        while not (part := stream.readline(_CHUNK)).endswith(b"\n"):
            if not part:
                return  # a last line without its newline, however long: left for later
            length += len(part)
        length += len(part)
        del part
        if length - 1 > max_bytes:
            yield RawLine(number, offset, offset + length, b"", too_long=True)
        else:
            stream.seek(offset)
            data = stream.read(length)
            if len(data) != length or not data.endswith(b"\n"):
                return  # changed under the reader: an append-only file never is
            yield RawLine(number, offset, offset + length, data[:-1])
            del data
        offset, number = offset + length, number + 1
        stream.seek(offset)


def parse_line(raw: RawLine, limits: WorldLimits) -> dict[str, Any] | str:
    """A line's JSON object, or what keeps it from being one."""
    if raw.too_long:
        return f"line longer than {limits.line_bytes} bytes: not read"
    if nests_deeper(raw.data, limits.line_depth):
        return f"nested deeper than {limits.line_depth} levels: not parsed"
    try:
        text = raw.data.decode("utf-8")
    except UnicodeDecodeError:
        return "not UTF-8 text"
    try:
        value = strict_json(text)
    except RecursionError:
        return f"nested deeper than {limits.line_depth} levels: not parsed"
    except ValueError as e:
        return f"not JSON: {str(e).split(':')[0]}"
    if not isinstance(value, dict):
        return "not a JSON object"
    return value


def _invalid(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    message = f"{where}: {first['msg']}" if where else first["msg"]
    more = error.error_count() - 1
    return message[:_SHOWN_CHARS] + (f" (and {more} more)" if more else "")


def read_entry(raw: RawLine, file: str, limits: WorldLimits) -> WorldEntry | WorldProblem:
    """The entry a line holds, its digest and key recomputed; else the problem."""

    def problem(kind: ProblemKind, detail: str) -> WorldProblem:
        return WorldProblem(kind=kind, file=file, line=raw.number, detail=detail)

    value = parse_line(raw, limits)
    if isinstance(value, str):
        return problem(ProblemKind.UNREADABLE, value)
    written = value.pop("digest", None)
    if not isinstance(written, str):
        return problem(ProblemKind.DIGEST, "an entry without its digest")
    computed = text_digest(canonical_json(value))
    if written != computed:
        return problem(
            ProblemKind.DIGEST,
            f"digest {written[:16]!r} does not match the entry (computed {computed[:16]}...)",
        )
    try:
        entry = WorldEntry.model_validate({**value, "digest": computed})
    except ValidationError as e:
        return problem(ProblemKind.UNREADABLE, f"not an entry: {_invalid(e)}")
    if entry.call.failed is not None:
        return problem(ProblemKind.UNREADABLE, "not an entry: call.failed: an answered call")
    if entry_key(entry.context_digest, entry.path, entry.call) != entry.key:
        return problem(ProblemKind.KEY, f"key {entry.key[:16]}... is not its path's key")
    return entry


def read_context(raw: RawLine, file: str, limits: WorldLimits) -> WorldContext | WorldProblem:
    """The context a line of ``contexts.jsonl`` holds; else the problem."""
    value = parse_line(raw, limits)
    if isinstance(value, str):
        detail = value
    else:
        try:
            return WorldContext.model_validate(value)
        except ValidationError as e:
            detail = f"not a context: {_invalid(e)}"
    return WorldProblem(kind=ProblemKind.UNREADABLE, file=file, line=raw.number, detail=detail)
