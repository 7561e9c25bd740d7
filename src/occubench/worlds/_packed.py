"""A packed world: one zip file that can be copied, checksummed and attached to results.

Members, and nothing else (any other name, a path that would land elsewhere, is refused):

```
world.json           the manifest
contexts.jsonl       the contexts
segments/NAME.jsonl  the entries (``world export`` writes one merged segment)
sha256sums.txt       SHA-256 of each other member ("<hex>  <name>", as sha256sum writes)
```

A packed world is read-only. Opening one reads the archive within bounds before anything
is decompressed: the member count (from the archive's end record, before its listing is
parsed), the names, the sizes the listing declares (``WorldLimits.unpacked_bytes``, all
members together) and each large member's compression ratio (``WorldLimits.pack_ratio``:
a file of newlines packs a thousand to one); each member is then decompressed, no further
than its declared size, into an anonymous temporary file that the world reads (deleted
when closed), and its SHA-256 is compared with ``sha256sums.txt``: a difference is a
problem ``world verify`` reports, not a reason to trust less (every entry's digest is
checked anyway).
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, BinaryIO

from occubench.defaults import DEFAULT_WORLD_PACK_RATIO_FROM
from occubench.errors import UsageError
from occubench.worlds._read import ProblemKind, WorldProblem

MANIFEST_FILE = "world.json"
CONTEXTS_FILE = "contexts.jsonl"
SEGMENTS_DIR = "segments"
CHECKSUMS_FILE = "sha256sums.txt"
SEGMENT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}\.jsonl")
"""The name of a segment file (a writer's: ``<host>-<pid>-<random>.jsonl``)."""

_FIXED_MEMBERS = (MANIFEST_FILE, CONTEXTS_FILE, CHECKSUMS_FILE)
_MAX_SMALL_MEMBER = 1 << 20
"""Bytes of ``world.json`` or ``sha256sums.txt`` (a few hundred in a real world)."""
_CHUNK = 1 << 20
_SUM_LINE = re.compile(r"([0-9a-f]{64})  (\S+)")
_EOCD = b"PK\x05\x06"
_EOCD64_LOCATOR = b"PK\x06\x07"
_EOCD64 = b"PK\x06\x06"
_EOCD_SIZE = 22
_MAX_COMMENT = 0xFFFF
_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
"""Members are dated at the zip epoch, so that one world packs to the same bytes."""


def is_member(name: str) -> bool:
    """Whether a name is one a packed world may hold (module doc)."""
    if name in _FIXED_MEMBERS:
        return True
    folder, _, base = name.partition("/")
    return folder == SEGMENTS_DIR and SEGMENT_NAME.fullmatch(base) is not None


@dataclass
class Unpacked:
    """The members of a packed world, decompressed: read them, then ``close``."""

    manifest: bytes
    contexts: BinaryIO | None
    segments: dict[str, BinaryIO]
    problems: list[WorldProblem] = field(default_factory=list)

    def close(self) -> None:
        """Delete the temporary files."""
        for stream in [self.contexts, *self.segments.values()]:
            if stream is not None:
                stream.close()


def declared_members(path: Path) -> int:
    """How many members a zip file's end record says it holds (read before its listing).

    Raises:
        UsageError: no end record (not a zip file).
    """
    with path.open("rb") as stream:
        size = stream.seek(0, os.SEEK_END)
        length = min(size, _EOCD_SIZE + _MAX_COMMENT + 20)
        stream.seek(size - length)
        tail = stream.read(length)
        at = len(tail) - _EOCD_SIZE if tail[-_EOCD_SIZE:].startswith(_EOCD) else tail.rfind(_EOCD)
        if at < 0 or len(tail) - at < _EOCD_SIZE:
            raise UsageError(f"{path}: not a packed world (not a zip file)")
        total = int.from_bytes(tail[at + 10 : at + 12], "little")
        if total == 0xFFFF and at >= 20 and tail[at - 20 : at - 16] == _EOCD64_LOCATOR:
            stream.seek(int.from_bytes(tail[at - 12 : at - 4], "little"))
            record = stream.read(56)
            if record[:4] == _EOCD64 and len(record) == 56:
                total = int.from_bytes(record[32:40], "little")
    return total


def read_packed(path: Path, *, max_segments: int, max_bytes: int, max_ratio: int) -> Unpacked:
    """Check and decompress a packed world (module doc).

    Raises:
        UsageError: not a zip file, a member a packed world does not hold, more members
            or bytes than the limits, a corrupt member, or no ``world.json``.
    """
    most = max_segments + len(_FIXED_MEMBERS)
    count = declared_members(path)
    if count > most:
        raise UsageError(f"{path}: {count} members, more than a packed world holds ({most})")
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        raise UsageError(f"{path}: not a packed world ({e})") from None
    with archive:
        infos = archive.infolist()
        _check_listing(path, infos, most, max_bytes, max_ratio)
        named = {info.filename: info for info in infos}
        if MANIFEST_FILE not in named:
            raise UsageError(f"{path}: not a packed world (no {MANIFEST_FILE})")
        sums, problems = _checksums(path, archive, named.get(CHECKSUMS_FILE))
        digests: dict[str, str] = {}
        manifest = _small(path, archive, named[MANIFEST_FILE], digests)
        unpacked = Unpacked(manifest=manifest, contexts=None, segments={}, problems=problems)
        try:
            for name, info in named.items():
                if name in (MANIFEST_FILE, CHECKSUMS_FILE):
                    continue
                stream = _spooled(path, archive, info, digests)
                if name == CONTEXTS_FILE:
                    unpacked.contexts = stream
                else:
                    unpacked.segments[name.partition("/")[2]] = stream
        except BaseException:
            unpacked.close()
            raise
    if CHECKSUMS_FILE in named:
        problems += _differences(path, sums, digests)
    return unpacked


def _differences(path: Path, sums: dict[str, str], digests: dict[str, str]) -> list[WorldProblem]:
    """Each member whose SHA-256 is not the one listed, or not listed; each listed one missing."""
    details = []
    for name, digest in digests.items():
        if name not in sums:
            details.append(f"{name} is not listed in {CHECKSUMS_FILE}")
        elif sums[name] != digest:
            details.append(f"{name}: SHA-256 {digest} differs from the listed {sums[name]}")
    details += [
        f"{name} is listed in {CHECKSUMS_FILE} but not in the archive"
        for name in sorted(set(sums) - set(digests))
    ]
    return [WorldProblem(kind=ProblemKind.CHECKSUM, file=str(path), detail=d) for d in details]


def _check_listing(
    path: Path, infos: list[zipfile.ZipInfo], most: int, max_bytes: int, max_ratio: int
) -> None:
    if len(infos) > most:
        raise UsageError(f"{path}: {len(infos)} members, more than a packed world holds ({most})")
    seen: set[str] = set()
    for info in infos:
        name = info.filename
        if not is_member(name):
            raise UsageError(
                f"{path}: member {name!r} is not part of a packed world: refused (it holds "
                f"{MANIFEST_FILE}, {CONTEXTS_FILE}, {CHECKSUMS_FILE} and "
                f"{SEGMENTS_DIR}/NAME.jsonl, nothing else)"
            )
        if name in seen:
            raise UsageError(f"{path}: member {name!r} appears twice: refused")
        if info.flag_bits & 0x1:
            raise UsageError(f"{path}: member {name!r} is encrypted: refused")
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > DEFAULT_WORLD_PACK_RATIO_FROM and ratio > max_ratio:
            raise UsageError(
                f"{path}: member {name!r} declares {info.file_size} bytes from "
                f"{info.compress_size} ({ratio:,.0f} to 1, more than {max_ratio} to 1): "
                "not a world's entries, refused before decompression"
            )
        seen.add(name)
    total = sum(info.file_size for info in infos)
    if total > max_bytes:
        raise UsageError(
            f"{path}: its members decompress to {total} bytes, more than the limit of "
            f"{max_bytes}: refused"
        )


@contextmanager
def _member(path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> Iterator[IO[bytes]]:
    """A member's stream; a corrupt or unsupported member is a ``UsageError``."""
    try:
        with archive.open(info) as stream:
            yield stream
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, OSError) as e:
        raise UsageError(f"{path}: member {info.filename!r} cannot be read ({e})") from None


def _copy(path: Path, source: IO[bytes], info: zipfile.ZipInfo, out: IO[bytes]) -> str:
    """Copy a member's bytes, no more than it declares; their SHA-256."""
    digest, size = hashlib.sha256(), 0
    while chunk := source.read(_CHUNK):
        size += len(chunk)
        if size > info.file_size:
            raise UsageError(
                f"{path}: member {info.filename!r} decompresses past its declared "
                f"{info.file_size} bytes: refused"
            )
        digest.update(chunk)
        out.write(chunk)
    return digest.hexdigest()


def _spooled(
    path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo, digests: dict[str, str]
) -> BinaryIO:
    """A member decompressed into an anonymous temporary file."""
    out: BinaryIO = tempfile.TemporaryFile()  # the world closes it
    try:
        with _member(path, archive, info) as stream:
            digests[info.filename] = _copy(path, stream, info, out)
        out.flush()  # the world reads it through its descriptor
    except BaseException:
        out.close()
        raise
    return out


def _small(
    path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo, digests: dict[str, str]
) -> bytes:
    """A small member's bytes (``world.json``, ``sha256sums.txt``)."""
    if info.file_size > _MAX_SMALL_MEMBER:
        raise UsageError(
            f"{path}: {info.filename} is {info.file_size} bytes, more than "
            f"{_MAX_SMALL_MEMBER}: refused"
        )
    out = tempfile.SpooledTemporaryFile(max_size=_MAX_SMALL_MEMBER)
    with out, _member(path, archive, info) as stream:
        digests[info.filename] = _copy(path, stream, info, out)
        out.seek(0)
        return out.read()


def _checksums(
    path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo | None
) -> tuple[dict[str, str], list[WorldProblem]]:
    """The listed SHA-256 of each member, and problems with the list itself."""
    where = f"{path}:{CHECKSUMS_FILE}"
    if info is None:
        problem = WorldProblem(kind=ProblemKind.CHECKSUM, file=str(path), detail="no checksums")
        return {}, [problem]
    text = _small(path, archive, info, {}).decode("utf-8", errors="replace")
    sums: dict[str, str] = {}
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        found = _SUM_LINE.fullmatch(line)
        if found is None:
            problems.append(
                WorldProblem(
                    kind=ProblemKind.CHECKSUM, file=where, line=number, detail="not a checksum line"
                )
            )
            continue
        sums[found.group(2)] = found.group(1)
    return sums, problems


def write_packed(
    out: Path,
    manifest: bytes,
    contexts: Iterable[bytes],
    segments: Iterable[tuple[str, Iterable[bytes]]],
) -> str:
    """Write a packed world from its parts' lines; the SHA-256 of the file written.

    The file appears whole or not at all (written under a temporary name beside it).

    Raises:
        UsageError: ``out`` exists already.
    """
    if out.exists():
        raise UsageError(f"{out} exists already: choose a new name")
    out.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    os.close(handle)
    try:
        sums: list[str] = []
        with zipfile.ZipFile(temporary, "w", zipfile.ZIP_DEFLATED) as archive:
            sums.append(_write_member(archive, MANIFEST_FILE, [manifest]))
            sums.append(_write_member(archive, CONTEXTS_FILE, contexts))
            for name, lines in segments:
                sums.append(_write_member(archive, f"{SEGMENTS_DIR}/{name}", lines))
            _write_member(archive, CHECKSUMS_FILE, ["".join(sums).encode()])
        with open(temporary, "rb") as done:
            os.fsync(done.fileno())
            digest = hashlib.file_digest(done, "sha256").hexdigest()
        os.replace(temporary, out)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return digest


def _write_member(archive: zipfile.ZipFile, name: str, chunks: Iterable[bytes]) -> str:
    """Write one member from its chunks; its ``sha256sums.txt`` line."""
    info = zipfile.ZipInfo(name, date_time=_ZIP_EPOCH)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    digest = hashlib.sha256()
    with archive.open(info, "w", force_zip64=True) as member:
        for chunk in chunks:
            digest.update(chunk)
            member.write(chunk)
    return f"{digest.hexdigest()}  {name}\n"
