"""A bundle is hostile input: each attack, then the safe behaviour (refused, named, nothing left).

Verification unpacks into a temporary folder; here that folder is made under the test's
own, so that the test sees everything the verification wrote, and that it is gone after.
Bounds are made small through ``BundleLimits``, never by writing gigabytes.
"""

from __future__ import annotations

import hashlib
import io
import struct
import tarfile
import tempfile
import zipfile
import zlib
from pathlib import Path

import pytest

from bundle.scripted import write_tar
from occubench.bundle import (
    BUNDLE_FORMAT,
    MANIFEST,
    BundleLimits,
    FileSum,
    Manifest,
    Outcome,
    RunRecord,
    Settings,
    verify_bundle,
)
from occubench.errors import ExitCode


@pytest.fixture
def work(tmp_path, monkeypatch) -> Path:
    """Where the verification unpacks (inside the test's folder), with a file beside it."""
    folder = tmp_path / "work"
    folder.mkdir()
    (tmp_path / "victim.txt").write_text("original\n")
    real = tempfile.mkdtemp
    monkeypatch.setattr(tempfile, "mkdtemp", lambda **kw: real(dir=folder, **kw))
    return folder


def untouched(work: Path) -> bool:
    """Nothing left in the work folder, nothing planted or changed beside it."""
    parent = work.parent
    names = sorted(p.name for p in parent.iterdir())
    return (
        list(work.iterdir()) == []
        and (parent / "victim.txt").read_text() == "original\n"
        and "planted.txt" not in names
    )


def refused(result, member: str, words: str) -> None:
    assert result.outcome is Outcome.FAILED and result.exit_code is ExitCode.BAD_INPUT
    assert [p.member for p in result.problems] == [member], result.problems
    assert words in result.problems[0].message, result.problems


def tar_with(path: Path, add) -> Path:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        info = tarfile.TarInfo(MANIFEST)
        info.size = 2
        tar.addfile(info, io.BytesIO(b"{}"))
        add(tar)
    path.write_bytes(buffer.getvalue())
    return path


def member(tar: tarfile.TarFile, name: str, kind=tarfile.REGTYPE, data: bytes = b"", **fields):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.size = len(data)
    for key, value in fields.items():
        setattr(info, key, value)
    tar.addfile(info, io.BytesIO(data) if data else None)


@pytest.mark.parametrize(
    ("add", "said"),
    [
        (
            lambda t: member(t, "logs/x.eval", tarfile.SYMTYPE, linkname="../victim.txt"),
            "holds a symbolic link, 'logs/x.eval'; a bundle holds only files and folders",
        ),
        (
            lambda t: member(t, "logs/y.eval", tarfile.LNKTYPE, linkname=MANIFEST),
            "holds a hard link, 'logs/y.eval'",
        ),
        (
            lambda t: member(t, "../planted.txt", data=b"x"),
            "member '../planted.txt' lies outside the folder",
        ),
        (
            lambda t: member(t, "/tmp/planted.txt", data=b"x"),
            "member '/tmp/planted.txt' lies outside the folder",
        ),
        (lambda t: member(t, "fifo", tarfile.FIFOTYPE), "holds a FIFO, 'fifo'"),
    ],
    ids=["symlink", "hardlink", "traversal", "absolute", "fifo"],
)
def test_links_paths_and_devices_are_refused_before_anything_is_written(work, tmp_path, add, said):
    result = verify_bundle(tar_with(tmp_path / "evil.tar.gz", add))
    refused(result, "evil.tar.gz", said)
    assert untouched(work)


def test_bounds_on_the_bundle_are_checked_from_its_headers(work, tmp_path):
    many = tar_with(tmp_path / "many.tar.gz", lambda t: [member(t, f"f{i}") for i in range(20)])
    result = verify_bundle(many, limits=BundleLimits(members=10))
    refused(result, "many.tar.gz", "holds more than 10 files and folders, more than a bundle")
    big = tar_with(tmp_path / "big.tar.gz", lambda t: member(t, "logs/a.eval", data=b"0" * 5000))
    result = verify_bundle(big, limits=BundleLimits(unpacked_bytes=4096))
    refused(result, "big.tar.gz", "files add up to more than 4,096 bytes, more than a bundle")
    result = verify_bundle(big, limits=BundleLimits(bundle_bytes=100))
    refused(result, "big.tar.gz", "more than a bundle can be")
    assert untouched(work)


def test_json_is_measured_before_it_is_parsed(work, tmp_path):
    deep = write_tar(tmp_path / "deep.tar.gz", {MANIFEST: b"[" * 5000 + b"]" * 5000})
    refused(verify_bundle(deep), MANIFEST, "JSON nested deeper than 400 levels")
    large = write_tar(tmp_path / "large.tar.gz", {MANIFEST: b'"' + b"x" * 300 + b'"'})
    refused(verify_bundle(large, limits=BundleLimits(json_bytes=100)), MANIFEST, "larger than")
    assert untouched(work)


def bomb_log() -> bytes:
    """A log whose one member declares 1,000 bytes and inflates to 4 MB."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("samples/1_epoch_1.json", b"0" * 4_000_000)
    data = bytearray(out.getvalue())
    crc = zlib.crc32(b"0" * 1000)
    struct.pack_into("<I", data, 14, crc)
    struct.pack_into("<I", data, 22, 1000)
    central = data.find(b"PK\x01\x02")
    struct.pack_into("<I", data, central + 16, crc)
    struct.pack_into("<I", data, central + 24, 1000)
    return bytes(data)


def test_a_zip_bomb_in_a_log_is_refused_before_inspect_reads_it(work, tmp_path):
    log = bomb_log()
    manifest = Manifest(
        format=BUNDLE_FORMAT,
        created="2026-01-01T00:00:00+00:00",
        occubench_version="0",
        inspect_version="0",
        settings=Settings(resamples=10, seed=0),
        runs=[],
        datasets=[],
        files={"logs/001-x.eval": FileSum(sha256=hashlib.sha256(log).hexdigest(), bytes=len(log))},
    )
    manifest.digest = manifest.computed_digest()
    files = {MANIFEST: manifest.model_dump_json().encode(), "logs/001-x.eval": log}
    result = verify_bundle(write_tar(tmp_path / "bomb.tar.gz", files))
    refused(result, MANIFEST, "its runs do not name the bundle's logs one for one")
    manifest.runs = [  # with a run naming it, the log itself is reached and refused
        RunRecord(
            log="logs/001-x.eval",
            eval_id="x",
            task="occubench/occubench",
            agent="a",
            model="a",
            simulator=None,
            verifier=None,
            env_mode="E0",
            config={},
            points={},
            dataset="d",
            sample_ids=["1"],
            epochs=1,
        )
    ]
    manifest.digest = manifest.computed_digest()
    files[MANIFEST] = manifest.model_dump_json().encode()
    result = verify_bundle(write_tar(tmp_path / "bomb2.tar.gz", files))
    refused(
        result,
        "logs/001-x.eval",
        "member 'samples/1_epoch_1.json' does not decompress to the 1,000 bytes and CRC-32",
    )
    assert untouched(work)
