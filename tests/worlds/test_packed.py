import hashlib
import random
import zipfile

import pytest

from occubench.errors import UsageError
from occubench.worlds import (
    ProblemKind,
    World,
    WorldLimits,
    export_world,
    verify_world,
)
from occubench.worlds._packed import declared_members
from world_fixtures import chain, entry, write_world


@pytest.fixture
def packed(tmp_path):
    """A world folder of five entries and its packed export."""
    folder = write_world(tmp_path / "w", [*chain(4), entry(("list", {}), author="Ada")])
    written = export_world(folder, tmp_path / "w.world.zip")
    return folder, tmp_path / "w.world.zip", written


def test_a_packed_world_answers_as_its_folder_does(packed, tmp_path):
    folder, file, written = packed
    assert written.packed and written.entries == 5 and written.contexts == 1
    assert written.sha256 == hashlib.sha256(file.read_bytes()).hexdigest()
    with World.open(folder, writable=False) as original, World.open(file, writable=False) as copy:
        assert copy.packed and copy.problems == [] and copy.tails() == []
        assert sorted(copy.keys()) == sorted(original.keys())
        for key in original.keys():
            assert copy.lookup(key) == original.lookup(key)
        assert copy.digest() == original.digest() == written.digest
        assert copy.contexts() == original.contexts()
        assert copy.manifest == original.manifest
    assert verify_world(file).clean
    names = zipfile.ZipFile(file).namelist()
    assert names == ["world.json", "contexts.jsonl", "segments/world.jsonl", "sha256sums.txt"]


def test_one_world_packs_to_the_same_bytes(packed, tmp_path):
    folder, file, written = packed
    again = export_world(folder, tmp_path / "again.world.zip")
    assert again.sha256 == written.sha256


def test_a_packed_world_unpacks_into_a_folder_that_records_again(packed, tmp_path):
    folder, file, written = packed
    back = export_world(file, tmp_path / "back")
    assert not back.packed and back.entries == 5 and back.digest == written.digest
    with World.open(tmp_path / "back", writable=True) as world:
        world.append(entry(("other", {})))
        assert len(world.keys()) == 6


def test_a_packed_world_is_read_only_and_never_overwritten(packed, tmp_path):
    folder, file, _ = packed
    with pytest.raises(UsageError, match="is a packed world, which is read-only: export it"):
        World.open(file, writable=True)
    with pytest.raises(UsageError, match="exists already"):
        export_world(folder, file)
    with pytest.raises(UsageError, match="exists already"):
        export_world(file, folder)


def rezip(source, target, change=None, extra=()):
    """A copy of a packed world with members changed ({name: bytes | None}) or added."""
    change = change or {}
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as new:
        for name in old.namelist():
            data = change.get(name, old.read(name))
            if data is not None:
                new.writestr(name, data)
        for name, data in extra:
            new.writestr(name, data)
    return target


@pytest.mark.parametrize(
    "name",
    [
        "../evil.jsonl",
        "/tmp/evil.jsonl",
        "segments/../../evil.jsonl",
        "segments/sub/evil.jsonl",
        "segments\\evil.jsonl",
        "segments/.hidden.jsonl",
        "notes.txt",
        "segments/",
    ],
)
def test_a_member_that_would_land_elsewhere_is_refused(packed, tmp_path, name):
    _, file, _ = packed
    bad = rezip(file, tmp_path / "bad.world.zip", extra=[(name, b"{}\n")])
    with pytest.raises(UsageError, match="is not part of a packed world: refused"):
        World.open(bad, writable=False)
    with pytest.raises(UsageError, match="is not part of a packed world: refused"):
        export_world(bad, tmp_path / "out")
    assert not (tmp_path / "out").exists() and not (tmp_path / "evil.jsonl").exists()


def test_a_member_twice_is_refused(packed, tmp_path):
    _, file, _ = packed
    with pytest.warns(UserWarning, match="Duplicate name"):
        bad = rezip(file, tmp_path / "bad.world.zip", extra=[("segments/world.jsonl", b"")])
    with pytest.raises(UsageError, match="appears twice"):
        World.open(bad, writable=False)


def test_more_members_than_a_world_holds_are_refused_before_the_listing_is_read(packed, tmp_path):
    _, file, _ = packed
    extra = [(f"segments/s{n}.jsonl", b"") for n in range(5)]
    bad = rezip(file, tmp_path / "bad.world.zip", extra=extra)
    with pytest.raises(UsageError, match=r"9 members, more than a packed world holds \(5\)"):
        World.open(bad, writable=False, limits=WorldLimits(segments=2))


def test_members_that_decompress_past_the_limit_are_refused(packed, tmp_path):
    _, file, _ = packed
    bomb = rezip(file, tmp_path / "bomb.world.zip", extra=[("segments/z.jsonl", b"\n" * 10**6)])
    assert bomb.stat().st_size < 20_000
    with pytest.raises(UsageError, match="decompress to .* bytes, more than the limit of 100000"):
        World.open(bomb, writable=False, limits=WorldLimits(unpacked_bytes=100_000))


def test_a_member_larger_than_its_listing_says_is_refused(packed, tmp_path):
    _, file, _ = packed
    lying = rezip(file, tmp_path / "lying.world.zip", extra=[("segments/z.jsonl", b"\n" * 5000)])
    data = bytearray(lying.read_bytes())
    header = data.rfind(b"PK\x01\x02")  # the last member's central directory header
    data[header + 24 : header + 28] = (10).to_bytes(4, "little")  # its uncompressed size
    lying.write_bytes(bytes(data))
    with pytest.raises(UsageError, match="cannot be read|decompresses past"):
        World.open(lying, writable=False)


@pytest.mark.parametrize("content", [b"", b"not a zip at all", b"PK\x03\x04" + b"\0" * 100])
def test_a_file_that_is_not_a_zip_is_refused(tmp_path, content):
    path = tmp_path / "x.world.zip"
    path.write_bytes(content)
    with pytest.raises(UsageError, match="not a packed world"):
        World.open(path, writable=False)


def test_a_packed_world_needs_its_manifest(packed, tmp_path):
    _, file, _ = packed
    bad = rezip(file, tmp_path / "bad.world.zip", change={"world.json": None})
    with pytest.raises(UsageError, match=r"not a packed world \(no world.json\)"):
        World.open(bad, writable=False)


def test_a_member_that_differs_from_its_checksum_is_reported(packed, tmp_path):
    _, file, written = packed
    with zipfile.ZipFile(file) as old:
        sums = old.read("sha256sums.txt").decode()
    wrong = sums.replace(sums.split("  segments/world.jsonl")[0][-64:], "0" * 64)
    bad = rezip(file, tmp_path / "bad.world.zip", change={"sha256sums.txt": wrong.encode()})
    found = verify_world(bad)
    (problem,) = found.problems
    assert problem.kind is ProblemKind.CHECKSUM and "segments/world.jsonl" in problem.detail
    assert found.keys == 5 and found.digest == written.digest  # each entry is still checked

    unlisted = rezip(file, tmp_path / "unlisted.world.zip", change={"sha256sums.txt": None})
    assert [p.detail for p in verify_world(unlisted).problems] == ["no checksums"]


def test_a_tampered_entry_in_a_packed_world_is_not_served(packed, tmp_path):
    _, file, _ = packed
    with zipfile.ZipFile(file) as old:
        lines = old.read("segments/world.jsonl").splitlines(keepends=True)
    lines[0] = lines[0].replace(b'"result":"step-0"', b'"result":"a lie"')
    bad = rezip(file, tmp_path / "bad.world.zip", change={"segments/world.jsonl": b"".join(lines)})
    found = verify_world(bad)
    kinds = sorted(p.kind.value for p in found.problems)
    assert kinds == ["checksum", "digest"] and found.keys == 4


def test_a_zip64_archive_of_many_members_is_refused_from_its_end_record(tmp_path):
    many = tmp_path / "many.world.zip"
    with zipfile.ZipFile(many, "w") as archive:
        for n in range(70_000):  # more than a zip's 16-bit count: the zip64 record holds it
            archive.writestr(f"segments/s{n}.jsonl", b"")
    assert declared_members(many) == 70_000
    with pytest.raises(UsageError, match="70000 members, more than a packed world holds"):
        World.open(many, writable=False)


def test_a_packed_file_of_newlines_is_refused_before_decompression(packed, tmp_path):
    """The attack: a 1 MB .world.zip whose segment is a GB of newlines (1000 to 1)."""
    _, file, _ = packed
    junk = b"\n" * (64 * 2**20)
    bomb = rezip(file, tmp_path / "bomb.world.zip", extra=[("segments/z.jsonl", junk)])
    del junk
    assert bomb.stat().st_size < 2**20
    with pytest.raises(UsageError, match=r"to 1, more than 200 to 1\): not a world's entries"):
        World.open(bomb, writable=False)


def test_an_honest_packed_world_passes_the_ratio_bound(tmp_path):
    """Entries of one context with the same observation, packed: well inside the bound."""
    many = [entry(("read", {"id": f"R-{i}"}), answer="open") for i in range(3000)]
    folder = write_world(tmp_path / "w", many)
    export_world(folder, tmp_path / "w.world.zip")
    with zipfile.ZipFile(tmp_path / "w.world.zip") as z:
        (info,) = [i for i in z.infolist() if i.filename.startswith("segments/")]
        assert info.file_size / info.compress_size < 20  # digests and keys do not compress
    with World.open(tmp_path / "w.world.zip", writable=False) as world:
        assert len(world.keys()) == 3000


def test_a_long_garbage_line_in_a_packed_world_is_skipped_and_reported(packed, tmp_path):
    """A line past the line bound, of bytes that do not compress (so no ratio refuses it)."""
    folder, file, _ = packed
    with zipfile.ZipFile(file) as old:
        lines = old.read("segments/world.jsonl").splitlines(keepends=True)
    junk = random.Random(7).randbytes(17 * 2**20).replace(b"\n", b"~") + b"\n"
    member = b"".join([lines[0], junk, *lines[1:]])
    bad = rezip(file, tmp_path / "long.world.zip", change={"segments/world.jsonl": member})
    del junk, member
    found = verify_world(bad)
    assert sorted((p.kind.value, p.line) for p in found.problems) == [
        ("checksum", None),  # the member was changed after packing
        ("unreadable", 2),
    ]
    assert found.entries == 5 and found.keys == 5
    with World.open(bad, writable=False) as copy, World.open(folder, writable=False) as original:
        assert [copy.lookup(k) for k in original.keys()] == [
            original.lookup(k) for k in original.keys()
        ]
