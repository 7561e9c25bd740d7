"""Archives from elsewhere, checked before they are used: ``.tar.gz`` unpacking, zip members.

An archive that arrives from outside (the public release from a mirror, a bundle of
someone's results) is held to what it can be (``TarBounds``) before anything is written:
every member header is read (each read, and all of them, bounded) and checked, and the
archive refused when one is not a plain file or folder (no links, devices or FIFOs),
would land outside the folder it is unpacked into, or when the files add up to more, or
the members are more, than the bounds allow; the whole stream is then decompressed
once, without being kept, up to a bound (a tar reader stops quietly at the first bad
block, so a damaged archive would otherwise unpack in part; reading to the end checks
the gzip stream's own CRC). Only then are the members written, by this module rather
than by ``tarfile``'s extraction (whose ``data`` filter some 3.11 releases let a chain
of symbolic links get past), each file created new, never through a link, with exactly
the bytes its checked header declares.

A zip (an Inspect ``.eval`` log inside a bundle) is read member by member within
``ZipBounds`` (``zip_members``) before any other reader opens it: its entry count (from
the end-of-directory record, before ``zipfile`` builds its directory) and its central
directory's size, each member's declared size and their sum, the compression method
(stored, deflate, zstd) and a name that stays inside the archive; then every member is
decompressed from its own bytes with its output bounded at each step, and must give
exactly its declared size and CRC-32. A member that would expand past its declared size
(a zip bomb, which ``zipfile`` would truncate quietly and a whole-member read would
still decompress in one call) is refused.

A refusal is an ``ArchiveRefused`` whose message names the member and the bound, in the
words of what the archive should be (``what``: "a release", "a bundle", "a log").
"""

from __future__ import annotations

import gzip
import io
import os
import struct
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, cast

import zstandard
from pydantic import BaseModel, ConfigDict, Field

CHUNK = 1 << 16
"""Bytes read or written at a time."""

_MAX_READ = 1 << 20
"""Most bytes tarfile may read from the archive at once: a header it reads whole (a pax
header, a long name: a release's are under 1 KiB) or a chunk of a file (``CHUNK``)."""

_MEMBER_ROOM = 8 * 1024
"""Bytes a member may take in the tar stream beside its data: its header block, a pax
header for a long path, the padding of its data to a block."""

_ALLOWED_TYPES = frozenset({tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.CONTTYPE, tarfile.DIRTYPE})
"""Member types an archive may hold: plain files and folders."""

_REFUSED_TYPES = {
    tarfile.SYMTYPE: "a symbolic link",
    tarfile.LNKTYPE: "a hard link",
    tarfile.CHRTYPE: "a character device",
    tarfile.BLKTYPE: "a block device",
    tarfile.FIFOTYPE: "a FIFO",
}
"""How a refusal names a member type an archive never holds."""


class ArchiveRefused(RuntimeError):
    """The archive is not what it may be (a bound passed, a link, a path outside)."""


class UnpackError(RuntimeError):
    """A checked archive could not be written out (the disk: full, read-only)."""


def amount(size: int) -> str:
    """``size`` bytes for a message: whole MiB as such, else the bytes."""
    return f"{size // 2**20} MiB" if size % 2**20 == 0 else f"{size:,} bytes"


class TarBounds(BaseModel):
    """What an archive may unpack to: its files' bytes and its members."""

    model_config = ConfigDict(frozen=True)

    unpacked_bytes: int = Field(gt=0, description="Most bytes the archive's files may add up to.")
    members: int = Field(gt=0, description="Most members (files and folders) it may hold.")

    @property
    def header_bytes(self) -> int:
        """Most bytes of headers the archive may have.

        Room for each member's, and two members' room for the end of the archive.
        """
        return (self.members + 2) * _MEMBER_ROOM

    @property
    def stream_bytes(self) -> int:
        """Most bytes the decompressed tar stream may have: the files and the headers."""
        return self.unpacked_bytes + self.header_bytes


class HeaderReads(io.RawIOBase):
    """The archive's decompressed stream as tarfile reads its headers, within bounds.

    tarfile reads a header whole, in one call, sized by what the header before it
    declares, and parses some (a pax sparse map) into lists before a member is seen:
    each read is refused over ``_MAX_READ`` bytes, and all of them over ``most``. Its
    seeks over the members' data are bounded by the sizes checked before them.
    """

    def __init__(self, stream: gzip.GzipFile, most: int, what: str) -> None:
        super().__init__()
        self._stream = stream
        self._left = most
        self._what = what

    def readable(self) -> bool:
        """Read-only."""
        return True

    def seekable(self) -> bool:
        """Seekable, as the gzip stream is."""
        return True

    def read(self, size: int = -1, /) -> bytes:
        """At most ``size`` bytes, ``size`` up to ``_MAX_READ`` and the bytes left."""
        if size < 0 or size > _MAX_READ:
            raise ArchiveRefused(
                f"refused: the archive holds a header of {size:,} bytes, more than "
                f"{self._what}'s can be ({amount(_MAX_READ)})"
            )
        if size > self._left:
            raise ArchiveRefused(
                f"refused: the archive's headers add up to more than {self._what}'s can be"
            )
        got = self._stream.read(size)
        self._left -= len(got)
        return got

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        """Move in the decompressed stream."""
        return self._stream.seek(offset, whence)

    def tell(self) -> int:
        """Where in the decompressed stream the next read starts."""
        return self._stream.tell()


def read_through(archive: Path, most: int, what: str) -> None:
    """Decompress the whole archive without keeping it, refusing it past ``most`` bytes."""
    seen = 0
    with gzip.open(archive) as stream:
        while chunk := stream.read(CHUNK):
            seen += len(chunk)
            if seen > most:
                raise ArchiveRefused(
                    f"refused: the archive unpacks to more than {amount(most)}, more than "
                    f"{what} can be"
                )


def _refused_kind(member: tarfile.TarInfo) -> str | None:
    """What ``member`` is when an archive may not hold it (a refusal names it); else None."""
    if member.sparse is not None:
        return "a sparse file"
    if member.type in _ALLOWED_TYPES:
        return None
    return _REFUSED_TYPES.get(member.type, f"a member of type {member.type!r}")


def checked_members(
    tar: tarfile.TarFile, into: Path, bounds: TarBounds, what: str
) -> list[tuple[tarfile.TarInfo, Path]]:
    """Every member of ``tar`` with the path it is written to, all checked first.

    A member is refused unless it is a plain file or a folder and its path, resolved
    under ``into``, lies inside it; the archive is refused when it holds more members,
    or its files add up to more bytes, than ``bounds`` allow. Nothing is written here,
    and nothing in ``into`` is a link (none is ever written), so the path as resolved
    from the name alone is where the member lands.
    """
    root = str(into)
    checked: list[tuple[tarfile.TarInfo, Path]] = []
    total = 0
    for count, member in enumerate(tar, start=1):
        if count > bounds.members:
            raise ArchiveRefused(
                f"refused: the archive holds more than {bounds.members:,} files and "
                f"folders, more than {what} can be"
            )
        kind = _refused_kind(member)
        if kind is not None:
            raise ArchiveRefused(
                f"refused: the archive holds {kind}, {member.name!r}; {what} holds "
                "only files and folders"
            )
        path = os.path.normpath(os.path.join(root, member.name))
        if os.path.commonpath([root, path]) != root or (path == root and not member.isdir()):
            raise ArchiveRefused(
                f"refused: the archive's member {member.name!r} lies outside the folder "
                "it is unpacked into"
            )
        if not member.isdir():
            total += member.size
        if total > bounds.unpacked_bytes:
            raise ArchiveRefused(
                f"refused: the archive's files add up to more than "
                f"{amount(bounds.unpacked_bytes)}, more than {what} can be"
            )
        if path != root:
            checked.append((member, Path(path)))
    return checked


def write_members(stream: gzip.GzipFile, members: list[tuple[tarfile.TarInfo, Path]]) -> None:
    """Write checked members from the decompressed ``stream``.

    Folders are made; files are created new (never through a link) with exactly the
    bytes their checked header declares.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    for member, path in members:
        if member.isdir():
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        stream.seek(member.offset_data)
        with os.fdopen(os.open(path, flags, 0o644), "wb") as out:
            left = member.size
            while left:
                chunk = stream.read(min(CHUNK, left))
                if not chunk:
                    raise EOFError(f"{member.name!r} ends before its {member.size} bytes")
                out.write(chunk)
                left -= len(chunk)


def unpack_checked(archive: Path, into: Path, bounds: TarBounds, what: str) -> list[str]:
    """Check a ``.tar.gz`` against ``bounds``, then unpack it into ``into`` (an empty folder).

    The member headers are checked first (a bomb is refused at its header), then the
    whole stream is read through, then the members are written.

    Returns:
        The names of the files written (folders left out), in archive order.

    Raises:
        ArchiveRefused: the archive is not what ``what`` may be.
        UnpackError: a member could not be written (after every check passed).
        tarfile.TarError, EOFError, OSError, zlib.error: the archive is corrupt.
    """
    with gzip.open(archive) as stream:
        headers = HeaderReads(stream, bounds.header_bytes, what)
        with tarfile.open(fileobj=headers, mode="r:") as tar:
            members = checked_members(tar, into, bounds, what)
        read_through(archive, bounds.stream_bytes, what)
        try:
            write_members(stream, members)
        except OSError as e:  # the stream was read through: the disk, full, read-only
            raise UnpackError(str(e)) from None
    return [member.name for member, _ in members if not member.isdir()]


_EOCD = b"PK\x05\x06"
_EOCD64_LOCATOR = b"PK\x06\x07"
_EOCD64 = b"PK\x06\x06"
_LOCAL_HEADER = b"PK\x03\x04"
_TAIL = 22 + 0xFFFF
"""Bytes at the end of a zip that hold its end-of-directory record (and its comment)."""
_DIRECTORY_ENTRY_ROOM = 4 * 1024
"""Bytes of central directory allowed per entry (a fixed 46 and a name, an extra field
and a comment: an Inspect log's are under 100)."""
_ZIP_METHODS = {
    zipfile.ZIP_STORED: "stored",
    zipfile.ZIP_DEFLATED: "deflate",
    93: "zstd",  # Inspect's logs (zipfile-zstd's number, and the zip format's)
}
"""Compression methods a member may use."""


class ZipBounds(BaseModel):
    """What a zip may hold: its members, each member's bytes and all of them."""

    model_config = ConfigDict(frozen=True)

    members: int = Field(gt=0, description="Most members the zip may hold.")
    member_bytes: int = Field(gt=0, description="Most bytes one member may decompress to.")
    total_bytes: int = Field(gt=0, description="Most bytes all members may decompress to.")


def _directory(path: Path, what: str) -> tuple[int, int]:
    """The entry count and central directory size a zip declares, read from its end."""
    size = path.stat().st_size
    with path.open("rb") as f:
        f.seek(max(0, size - _TAIL))
        tail = f.read()
        at = tail.rfind(_EOCD)
        if at < 0 or len(tail) - at < 22:
            raise ArchiveRefused(f"refused: {what} is not a zip (no end-of-directory record)")
        entries, directory = struct.unpack("<xxxxxxxxxxHI", tail[at : at + 16])
        if entries != 0xFFFF and directory != 0xFFFFFFFF:
            return entries, directory
        locator = tail[at - 20 : at]
        if len(locator) != 20 or not locator.startswith(_EOCD64_LOCATOR):
            raise ArchiveRefused(f"refused: {what}'s zip64 end-of-directory record is missing")
        (record_at,) = struct.unpack("<Q", locator[8:16])
        f.seek(record_at)
        record = f.read(56)
        if len(record) != 56 or not record.startswith(_EOCD64):
            raise ArchiveRefused(f"refused: {what}'s zip64 end-of-directory record is missing")
        entries, directory = struct.unpack("<QQ", record[32:48])
        return entries, directory


def _checked_infos(archive: zipfile.ZipFile, bounds: ZipBounds, what: str) -> list[zipfile.ZipInfo]:
    """The members of an open zip, each held to ``bounds`` (their data not read yet)."""
    infos = archive.infolist()
    total = 0
    for info in infos:
        name = info.filename
        parts = name.replace("\\", "/").split("/")
        if name.startswith(("/", "\\")) or ".." in parts or "\0" in name:
            raise ArchiveRefused(f"refused: {what} holds a member named {name!r}, outside it")
        if info.compress_type not in _ZIP_METHODS:
            raise ArchiveRefused(
                f"refused: {what}'s member {name!r} uses compression method "
                f"{info.compress_type}; a log uses stored, deflate or zstd"
            )
        if info.file_size > bounds.member_bytes or info.compress_size > bounds.member_bytes:
            raise ArchiveRefused(
                f"refused: {what}'s member {name!r} declares {info.file_size:,} bytes, more "
                f"than a member may hold ({amount(bounds.member_bytes)})"
            )
        total += info.file_size
        if total > bounds.total_bytes:
            raise ArchiveRefused(
                f"refused: {what}'s members add up to more than {amount(bounds.total_bytes)}"
            )
    return infos


class _Window(io.RawIOBase):
    """``length`` bytes of a file from ``start``: a member's compressed data."""

    def __init__(self, file: io.BufferedReader, start: int, length: int) -> None:
        super().__init__()
        self._file = file
        self._file.seek(start)
        self._left = length

    def readable(self) -> bool:
        """Read-only."""
        return True

    def read(self, size: int = -1, /) -> bytes:
        """At most ``size`` of the bytes left (all of them within ``CHUNK`` when -1)."""
        size = CHUNK if size < 0 else min(size, CHUNK)
        got = self._file.read(min(size, self._left))
        self._left -= len(got)
        return got


def _data_start(file: io.BufferedReader, info: zipfile.ZipInfo, what: str) -> int:
    """Where a member's compressed data begins: after its local header, name and extra."""
    file.seek(info.header_offset)
    header = file.read(30)
    if len(header) != 30 or not header.startswith(_LOCAL_HEADER):
        raise ArchiveRefused(f"refused: {what}'s member {info.filename!r} has no local header")
    name_length, extra_length = struct.unpack("<HH", header[26:30])
    return info.header_offset + 30 + int(name_length) + int(extra_length)


def _inflated(window: _Window, info: zipfile.ZipInfo) -> Iterator[bytes]:
    """A member's decompressed bytes, at most ``CHUNK`` at a time and one more than declared."""
    room = info.file_size + 1
    if info.compress_type == zipfile.ZIP_STORED:
        while room > 0 and (chunk := window.read(min(CHUNK, room))):
            room -= len(chunk)
            yield chunk
        return
    if info.compress_type == zipfile.ZIP_DEFLATED:
        inflate = zlib.decompressobj(-zlib.MAX_WBITS)
        while room > 0 and (piece := window.read(CHUNK)):
            while piece and room > 0:
                chunk = inflate.decompress(piece, min(CHUNK, room))
                piece = inflate.unconsumed_tail
                room -= len(chunk)
                yield chunk
        return
    reader = zstandard.ZstdDecompressor().stream_reader(cast(IO[bytes], window), read_size=CHUNK)
    while room > 0 and (chunk := reader.read(min(CHUNK, room))):
        room -= len(chunk)
        yield chunk


def zip_members(path: Path, bounds: ZipBounds, what: str) -> Iterator[tuple[str, bytes]]:
    """Each member of a zip with its bytes, checked within ``bounds`` (see the module doc).

    A member is yielded only once all of its bytes were decompressed from its own
    data, within its declared size, and matched its CRC-32; memory holds one member.

    Raises:
        ArchiveRefused: the zip or a member passes a bound, or is not what it declares.
    """
    entries, directory = _directory(path, what)
    if entries > bounds.members:
        raise ArchiveRefused(
            f"refused: {what} holds {entries:,} members, more than {bounds.members:,}"
        )
    if directory > max(entries, 1) * _DIRECTORY_ENTRY_ROOM:
        raise ArchiveRefused(f"refused: {what}'s directory is larger than its members need")
    try:
        with zipfile.ZipFile(path) as archive, path.open("rb") as file:
            for info in _checked_infos(archive, bounds, what):
                if info.is_dir():
                    continue
                window = _Window(file, _data_start(file, info, what), info.compress_size)
                data = b"".join(_inflated(window, info))
                if len(data) != info.file_size or zlib.crc32(data) != info.CRC:
                    raise ArchiveRefused(
                        f"refused: {what}'s member {info.filename!r} does not decompress to "
                        f"the {info.file_size:,} bytes and CRC-32 it declares"
                    )
                yield info.filename, data
    except (zipfile.BadZipFile, zlib.error, zstandard.ZstdError, EOFError) as e:
        raise ArchiveRefused(f"refused: {what} is not a readable zip: {e}") from None
