"""Zip members read within bounds (``archives.zip_members``): each attack refused by name.

The ``.tar.gz`` side of ``archives`` is the public release's fetch, tested against a
hostile mirror in ``tests/dataset/test_fetch.py``, and a bundle's in ``tests/bundle/``.
Bombs are made small and the bounds smaller, never by writing gigabytes: a member that
decompresses to more than it declares is a bomb whatever its size.
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from pathlib import Path

import pytest

from occubench.archives import ArchiveRefused, ZipBounds, zip_members

BOUNDS = ZipBounds(members=10, member_bytes=2**20, total_bytes=2**21)


def write_zip(path: Path, members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", compression=method) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


def lie_about_size(path: Path, name: str, declared: int) -> None:
    """Rewrite the sizes (and CRC) ``name`` declares, in its local and central headers.

    The CRC becomes the one of the first ``declared`` bytes of its real data, as a
    crafted bomb's would: a reader that stops at the declared size sees a sound member.
    """
    with zipfile.ZipFile(path) as z:
        info = z.getinfo(name)
        real = z.read(name)
    data = bytearray(path.read_bytes())
    crc = zlib.crc32(real[:declared])
    local = info.header_offset
    struct.pack_into("<III", data, local + 14, crc, info.compress_size, declared)
    central = bytes(data).find(b"PK\x01\x02")
    while central >= 0:
        length = struct.unpack_from("<H", data, central + 28)[0]
        if bytes(data[central + 46 : central + 46 + length]).decode() == name:
            struct.pack_into("<III", data, central + 16, crc, info.compress_size, declared)
        central = bytes(data).find(b"PK\x01\x02", central + 4)
    path.write_bytes(bytes(data))


def test_a_sound_zip_gives_each_member_whole(tmp_path):
    import zipfile_zstd  # noqa: F401 - Inspect's zstd members, as its logs have them

    members = {"header.json": b'{"a": 1}', "samples/1_epoch_1.json": b"[" * 3 + b"]" * 3}
    for method in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, 93):
        path = write_zip(tmp_path / f"ok-{method}.zip", members, method)
        assert dict(zip_members(path, BOUNDS, "the log")) == members


@pytest.mark.parametrize("method", [zipfile.ZIP_DEFLATED, 93], ids=["deflate", "zstd"])
def test_a_member_that_expands_past_its_declared_size_is_refused(tmp_path, method):
    path = tmp_path / "bomb.zip"
    if method == 93:
        import zipfile_zstd  # noqa: F401 - Inspect's zstd members, as its logs have them
    write_zip(path, {"samples/1_epoch_1.json": b"0" * 4_000_000}, method)
    lie_about_size(path, "samples/1_epoch_1.json", 1000)  # declares 1 KB, holds 4 MB
    with pytest.raises(ArchiveRefused, match="does not decompress to the 1,000 bytes"):
        list(zip_members(path, ZipBounds(members=10, member_bytes=2**22, total_bytes=2**23), "log"))


@pytest.mark.parametrize(
    ("members", "bounds", "message"),
    [
        ({f"m{i}": b"" for i in range(11)}, BOUNDS, "holds 11 members, more than 10"),
        ({"big": b"0" * (2**20 + 1)}, BOUNDS, "declares 1,048,577 bytes, more than a member"),
        (
            {"a": b"0" * 2**20, "b": b"0" * 2**20, "c": b"0"},
            BOUNDS,
            "members add up to more than 2 MiB",
        ),
        ({"../escape.json": b"{}"}, BOUNDS, "named '../escape.json', outside it"),
        ({"/abs.json": b"{}"}, BOUNDS, "named '/abs.json', outside it"),
    ],
)
def test_a_zip_past_its_bounds_is_refused_before_any_member_is_read(
    tmp_path, members, bounds, message
):
    path = write_zip(tmp_path / "bad.zip", members)
    with pytest.raises(ArchiveRefused, match=message.replace("(", r"\(").replace(")", r"\)")):
        list(zip_members(path, bounds, "the log"))


def test_a_changed_byte_is_caught_by_the_crc(tmp_path):
    path = write_zip(tmp_path / "crc.zip", {"a.json": b'{"value": 12345}'}, zipfile.ZIP_STORED)
    data = path.read_bytes().replace(b"12345", b"99999", 1)
    path.write_bytes(data)
    with pytest.raises(ArchiveRefused, match="does not decompress to the 16 bytes and CRC-32"):
        list(zip_members(path, BOUNDS, "the log"))


def test_an_unknown_compression_method_is_refused(tmp_path):
    path = write_zip(tmp_path / "bz.zip", {"a.json": b"{}"}, zipfile.ZIP_BZIP2)
    with pytest.raises(ArchiveRefused, match="uses compression method 12"):
        list(zip_members(path, BOUNDS, "the log"))


def test_not_a_zip_is_one_message(tmp_path):
    path = tmp_path / "text.zip"
    path.write_text("hello")
    with pytest.raises(ArchiveRefused, match="the log is not a zip"):
        list(zip_members(path, BOUNDS, "the log"))


def test_a_directory_declaring_more_entries_than_the_bound_is_refused_unread(tmp_path):
    path = write_zip(tmp_path / "many.zip", {"a": b""})
    data = bytearray(path.read_bytes())
    end = data.rfind(b"PK\x05\x06")
    struct.pack_into("<HH", data, end + 8, 60000, 60000)  # entries on this disk, in all
    path.write_bytes(bytes(data))
    with pytest.raises(ArchiveRefused, match="holds 60,000 members, more than 10"):
        list(zip_members(path, BOUNDS, "the log"))
