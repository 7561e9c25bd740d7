"""``occubench data fetch`` and ``--dataset occubench`` against a local HTTP server.

The server (127.0.0.1, a free port) serves archives the tests build from the fixture
dataset in the release layout: a good one, a corrupt one, one without the layout, and
a download cut short (the Content-Length promises more than is sent). A hostile mirror
is played by archives each test builds (a chain of symbolic links past PATH_MAX, a hard
link, a device, a FIFO, a sparse or zero-filled bomb, zeros after the archive's end, a
header declaring terabytes, a huge sparse map, paths outside the folder, too many
members) and by two endless answers (no Content-Length, or one far over the bound).
Bounds are made small through ``RELEASE_LIMITS``, never by writing gigabytes.
Each attack checks that nothing outside the target is created or changed, the error
line, the exit status, and that nothing is left in the cache.
"""

from __future__ import annotations

import gzip
import hashlib
import http.server
import io
import sys
import tarfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

import occubench.archives as archives_module
import occubench.dataset._fetch as fetch_module
from occubench.cli import _common, app
from occubench.dataset import (
    PUBLIC_RELEASE,
    RELEASE_LIMITS,
    SOURCE_FILE,
    TASKS_FILE,
    FetchLimits,
    content_digest,
    load_dataset,
)
from occubench.errors import ExitCode
from release_layout import RELEASE_IDS, write_release_dataset

runner = CliRunner()

PREFIX = "OccuBench-abc123"
"""Top folder of the test archives, as a repository archive has one."""

ENDLESS_CAP = 64 * 2**20
"""Bytes an endless answer stops at: far past the bounds the tests set, so a client that
does not stop reads all of it (a server thread never runs forever)."""

CHAIN_DEPTH = 30
"""Symbolic links in the chain: enough folders of CHAIN_NAME to resolve past PATH_MAX
(4096), fewer than the 40 links the kernel follows in one path."""

CHAIN_NAME = "d" * 250
"""Name of each folder of the chain (a file name may have 255 bytes)."""

BLOCK = 1 << 16
"""Bytes an endless answer writes at a time."""


def tar_gz(root: Path, prefix: str) -> bytes:
    """``root`` as a .tar.gz under ``prefix`` (as a repository archive holds data/)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(root, arcname=prefix)
    return buffer.getvalue()


def add(tar: tarfile.TarFile, name: str, kind: bytes = tarfile.REGTYPE, **fields) -> None:
    """A member ``name`` of type ``kind``: ``data`` (bytes) for a file, else ``fields``."""
    data = fields.pop("data", b"")
    info = tarfile.TarInfo(name)
    info.type = kind
    info.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
    info.size = len(data)
    for field, value in fields.items():
        setattr(info, field, value)
    tar.addfile(info, io.BytesIO(data) if data else None)


def release_with(release: Path, extra: Callable[[tarfile.TarFile], None]) -> bytes:
    """The good release archive with ``extra``'s members after its own."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(release, arcname=f"{PREFIX}/data")
        extra(tar)
    return buffer.getvalue()


def symlink_chain(outside: Path) -> Callable[[tarfile.TarFile], None]:
    """Members that plant ``planted.txt`` in ``outside`` and overwrite its ``victim.txt``.

    Each link ``a<i>`` names a folder of CHAIN_NAME beside it, so ``a0/a1/...`` is a short
    path that resolves to a path longer than PATH_MAX. The link ``l`` at its end climbs
    back up the chain; ``esc`` goes through ``l`` and up to ``/``, then down to
    ``outside``. A realpath that gives up resolving past PATH_MAX keeps ``l`` as a plain
    name, pops it and stays deep inside the folder: the ``data`` filter of an unpatched
    Python (3.11 before 3.11.13) lets every member through, while the kernel, which
    resolves the short path, writes ``esc/planted.txt`` outside.
    """

    def members(tar: tarfile.TarFile) -> None:
        here = ""
        for step in range(CHAIN_DEPTH):
            add(tar, here + CHAIN_NAME, tarfile.DIRTYPE)
            add(tar, here + f"a{step}", tarfile.SYMTYPE, linkname=CHAIN_NAME)
            here += f"a{step}/"
        add(tar, here + "l", tarfile.SYMTYPE, linkname="../" * CHAIN_DEPTH)
        climb = "../" * (CHAIN_DEPTH - 1) + str(outside).lstrip("/")
        add(tar, "esc", tarfile.SYMTYPE, linkname=f"{here}l/{climb}")
        add(tar, "esc/planted.txt", data=b"planted by the archive\n")
        add(tar, "esc/victim.txt", data=b"overwritten by the archive\n")

    return members


class SparseHeader(tarfile.TarInfo):
    """An old-GNU sparse member (no data stored) whose real size is ``real_size``."""

    real_size = 0

    def tobuf(self, format=tarfile.GNU_FORMAT, encoding=tarfile.ENCODING, errors="strict"):
        header = bytearray(super().tobuf(tarfile.GNU_FORMAT, encoding, errors))
        header[483:495] = b"%011o\0" % self.real_size
        header[148:156] = b" " * 8  # the checksum counts its own field as spaces
        header[148:155] = b"%06o\0" % sum(header[:512])
        return bytes(header)


def sparse_bomb(size: int) -> Callable[[tarfile.TarFile], None]:
    """A sparse member declaring ``size`` bytes, none of them stored."""

    def members(tar: tarfile.TarFile) -> None:
        info = SparseHeader(f"{PREFIX}/data/bomb.bin")
        info.type = tarfile.GNUTYPE_SPARSE
        info.real_size = size
        tar.addfile(info)

    return members


def extra_members(*members: tuple[str, bytes, dict]) -> Callable[[tarfile.TarFile], None]:
    """Members given as (name, type, fields)."""

    def write(tar: tarfile.TarFile) -> None:
        for name, kind, fields in members:
            add(tar, name, kind, **fields)

    return write


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    return write_release_dataset(tmp_path_factory.mktemp("release") / "data")


@pytest.fixture(scope="module")
def archives(release, tmp_path_factory) -> dict[str, bytes]:
    good = tar_gz(release, f"{PREFIX}/data")
    other = tmp_path_factory.mktemp("other")
    (other / "README.md").write_text("no release here\n")
    return {
        "/good.tar.gz": good,
        "/corrupt.tar.gz": good[: len(good) // 2] + b"\x00garbage" * 64,
        "/empty.tar.gz": tar_gz(other, PREFIX),
        "/cut.tar.gz": good,
    }


sent: dict[str, int] = {}
"""Bytes the server wrote for each endless path."""


def endless(handler: http.server.BaseHTTPRequestHandler, length: int | None) -> None:
    """Answer with zeros (announcing ``length`` when given) until the client hangs up."""
    handler.send_response(200)
    if length is not None:
        handler.send_header("Content-Length", str(length))
    handler.end_headers()
    block = bytes(BLOCK)
    sent[handler.path] = 0
    try:
        while sent[handler.path] < ENDLESS_CAP:
            handler.wfile.write(block)
            sent[handler.path] += len(block)
    except (BrokenPipeError, ConnectionResetError):
        pass
    handler.close_connection = True


@pytest.fixture(scope="module")
def server(archives) -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the standard library's name
            if self.path == "/endless":
                endless(self, None)
                return
            if self.path == "/announced":
                endless(self, 2**40)
                return
            body = archives.get(self.path)
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/gzip")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.path == "/cut.tar.gz":
                self.wfile.write(body[: len(body) // 3])  # then the connection closes
                self.close_connection = True
                return
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(autouse=True)
def wide_console(monkeypatch):
    for console in (_common.console, _common.err_console):
        monkeypatch.setattr(console, "width", 200)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fetch(*args: str):
    return runner.invoke(app, ["data", "fetch", *args])


def nothing_left(parent: Path) -> bool:
    """No partial download or unpacked tree in the target's folder."""
    return not parent.exists() or not any(parent.iterdir())


def test_fetch_checks_and_unpacks(server, archives, tmp_path):
    target = tmp_path / "cache" / "release"
    result = fetch(
        "--url",
        f"{server}/good.tar.gz",
        "--sha256",
        sha(archives["/good.tar.gz"]),
        "--to",
        str(target),
    )
    assert result.exit_code == ExitCode.OK, result.output
    assert f"Release layout in {target}" in result.output
    data = load_dataset(target)
    assert sorted(t.task_id for t in data.tasks) == RELEASE_IDS
    assert (target / SOURCE_FILE).is_file()
    assert sorted(p.name for p in target.parent.iterdir()) == ["release"]  # no partial left
    again = fetch("--url", f"{server}/good.tar.gz", "--sha256", "0" * 64, "--to", str(target))
    assert again.exit_code == ExitCode.OK  # a checked copy is kept, not fetched again


def test_a_cached_release_hashes_to_its_archives_digest(server, serve, release, tmp_path):
    body = release_with(release, lambda tar: add(tar, f"{PREFIX}/LICENSE", data=b"Apache-2.0\n"))
    path = serve("/licensed.tar.gz", body)
    target = tmp_path / "cache" / "release"
    result = fetch("--url", f"{server}{path}", "--sha256", sha(body), "--to", str(target))
    assert result.exit_code == ExitCode.OK, result.output
    assert (target / "LICENSE").read_text() == "Apache-2.0\n"  # the license travels with it
    assert content_digest(target) == content_digest(release)  # but is not in the digest


@pytest.mark.parametrize(
    ("path", "digest", "message"),
    [
        ("/good.tar.gz", "0" * 64, "checksum mismatch: the archive's SHA-256 is"),
        ("/corrupt.tar.gz", None, "the archive is corrupt"),
        ("/empty.tar.gz", None, "the archive holds no release layout"),
        ("/cut.tar.gz", None, "download cut short"),
        ("/missing.tar.gz", "0" * 64, "download failed: http"),
    ],
)
def test_a_bad_download_is_one_clear_error_and_leaves_nothing(
    server, archives, tmp_path, path, digest, message
):
    parent = tmp_path / "cache"
    chosen = digest or sha(archives[path])
    result = fetch("--url", f"{server}{path}", "--sha256", chosen, "--to", str(parent / "r"))
    assert result.exit_code == ExitCode.INCOMPLETE, result.output
    assert f"Fetch failed: {message}" in " ".join(result.output.split())
    assert path != "/missing.tar.gz" or "answered HTTP 404 Not Found" in result.output
    assert "Traceback" not in result.output
    assert nothing_left(parent)


def test_a_mirror_must_hold_the_pinned_files(server, tmp_path):
    parent = tmp_path / "cache"
    result = fetch("--url", f"{server}/good.tar.gz", "--to", str(parent / "r"))
    assert result.exit_code == ExitCode.INCOMPLETE, result.output
    text = " ".join(result.output.split())
    assert "checksum mismatch: the release's data files hash to" in text
    assert PUBLIC_RELEASE.content_sha256 in text
    assert nothing_left(parent)


def test_dataset_occubench_fetches_on_first_use(server, archives, tmp_path, monkeypatch):
    monkeypatch.setenv("OCCUBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("OCCUBENCH_RELEASE_URL", f"{server}/good.tar.gz")
    monkeypatch.setenv("OCCUBENCH_RELEASE_SHA256", sha(archives["/good.tar.gz"]))
    first = runner.invoke(app, ["list", "--dataset", "occubench"])
    assert first.exit_code == ExitCode.OK, first.output
    assert "not in the cache yet: fetching revision" in " ".join(first.output.split())
    assert "10 tasks in 10 scenarios" in first.output
    cached = tmp_path / "cache" / "datasets" / PUBLIC_RELEASE.name
    assert (cached / TASKS_FILE).is_file()
    second = runner.invoke(app, ["list", "--dataset", "occubench"])
    assert second.exit_code == ExitCode.OK and "fetching" not in second.output


@pytest.fixture
def outside(tmp_path) -> Path:
    """A folder beside the cache, holding a file an attack would overwrite."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "victim.txt").write_text("original\n")
    return folder


def untouched(folder: Path) -> bool:
    """``outside`` holds its one file, unchanged."""
    return [p.name for p in folder.iterdir()] == ["victim.txt"] and (
        folder / "victim.txt"
    ).read_text() == "original\n"


@pytest.fixture
def writes(monkeypatch) -> list[str]:
    """Names of the members the fetch wrote (recorded as each batch is written)."""
    written: list[str] = []
    write = archives_module.write_members

    def recording(tar, members) -> None:
        written.extend(member.name for member, _ in members)
        write(tar, members)

    monkeypatch.setattr(archives_module, "write_members", recording)
    return written


@pytest.fixture
def serve(archives) -> Callable[[str, bytes], str]:
    """Serve a test's archive at a path of its own; the path back."""

    def add_route(path: str, body: bytes) -> str:
        archives[path] = body
        return path

    return add_route


def refused(result, message: str, parent: Path) -> None:
    """The fetch failed with exit 1 and one line ``message``, leaving nothing in ``parent``."""
    assert result.exit_code == ExitCode.INCOMPLETE, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("Fetch failed")]
    assert len(lines) == 1, result.output
    assert f"Fetch failed: {message}" in " ".join(result.output.split())
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert nothing_left(parent)


@pytest.mark.parametrize("checked", ["pinned digest", "archive sha256"])
def test_a_symlink_chain_past_path_max_plants_nothing(
    server, serve, release, outside, writes, tmp_path, checked
):
    body = release_with(release, symlink_chain(outside))
    path = serve("/chain.tar.gz", body)
    digest = ["--sha256", sha(body)] if checked == "archive sha256" else []
    parent = tmp_path / "cache"
    result = fetch("--url", f"{server}{path}", *digest, "--to", str(parent / "r"))
    refused(
        result,
        "refused: the archive holds a symbolic link, 'a0'; a release holds only files and folders",
        parent,
    )
    assert untouched(outside)
    assert writes == []  # the refusal came before anything was written


_DATA_FILTER_FIXED = {11: (3, 11, 13), 12: (3, 12, 11), 13: (3, 13, 4)}
"""First release of each Python whose ``data`` filter resolves links past PATH_MAX."""


@pytest.mark.skipif(
    sys.version_info[:3]
    >= _DATA_FILTER_FIXED.get(sys.version_info.minor, (3, sys.version_info.minor, 0)),
    reason="this Python's tarfile data filter refuses the symlink chain by itself",
)
def test_the_symlink_chain_gets_past_this_pythons_data_filter(release, outside, tmp_path):
    """The attack above is real: tarfile's own ``data`` filter plants and overwrites."""
    body = release_with(release, symlink_chain(outside))
    into = tmp_path / "cache" / "partial" / "unpacked"
    into.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(body), mode="r:gz") as tar:
        tar.extractall(into, filter="data")
    assert (outside / "planted.txt").read_text() == "planted by the archive\n"
    assert (outside / "victim.txt").read_text() == "overwritten by the archive\n"


def test_a_wrong_sha256_is_found_before_the_archive_is_opened(
    server, serve, release, outside, writes, tmp_path
):
    path = serve("/chain-wrong-sum.tar.gz", release_with(release, symlink_chain(outside)))
    parent = tmp_path / "cache"
    result = fetch("--url", f"{server}{path}", "--sha256", "0" * 64, "--to", str(parent / "r"))
    refused(result, "checksum mismatch: the archive's SHA-256 is", parent)
    assert untouched(outside) and writes == []


@pytest.mark.parametrize(
    ("name", "kind", "fields", "said"),
    [
        ("hard", tarfile.LNKTYPE, {"linkname": "VICTIM"}, "a hard link"),
        ("null", tarfile.CHRTYPE, {"devmajor": 1, "devminor": 3}, "a character device"),
        ("disk", tarfile.BLKTYPE, {"devmajor": 7, "devminor": 0}, "a block device"),
        ("pipe", tarfile.FIFOTYPE, {}, "a FIFO"),
        ("label", b"V", {}, "a member of type b'V'"),  # a GNU volume label
    ],
)
def test_links_and_special_files_are_refused(
    server, serve, release, outside, writes, tmp_path, name, kind, fields, said
):
    member = f"{PREFIX}/data/{name}"
    fields = {k: str(outside / "victim.txt") if v == "VICTIM" else v for k, v in fields.items()}
    overwrite = (member, tarfile.REGTYPE, {"data": b"overwritten by the archive\n"})
    body = release_with(release, extra_members((member, kind, fields), overwrite))
    path = serve(f"/{name}.tar.gz", body)
    parent = tmp_path / "cache"
    result = fetch("--url", f"{server}{path}", "--sha256", sha(body), "--to", str(parent / "r"))
    refused(result, f"refused: the archive holds {said}, '{member}'", parent)
    assert untouched(outside) and writes == []


@pytest.mark.parametrize("where", ["../../../outside/planted.txt", "ABSOLUTE"])
def test_a_path_outside_the_folder_is_refused(
    server, serve, release, outside, writes, tmp_path, where
):
    name = str(outside / "planted.txt") if where == "ABSOLUTE" else where
    body = release_with(release, extra_members((name, tarfile.REGTYPE, {"data": b"x\n"})))
    path = serve("/outside.tar.gz", body)
    parent = tmp_path / "cache"
    result = fetch("--url", f"{server}{path}", "--sha256", sha(body), "--to", str(parent / "r"))
    refused(result, f"refused: the archive's member '{name}' lies outside the folder", parent)
    assert untouched(outside) and writes == []


def test_a_sparse_bomb_is_refused(server, serve, release, writes, tmp_path):
    body = release_with(release, sparse_bomb(2**30))  # 1 GiB declared, none of it stored
    assert len(body) < 64 * 1024
    path = serve("/sparse.tar.gz", body)
    parent = tmp_path / "cache"
    result = fetch("--url", f"{server}{path}", "--sha256", sha(body), "--to", str(parent / "r"))
    refused(result, f"refused: the archive holds a sparse file, '{PREFIX}/data/bomb.bin'", parent)
    assert writes == []


def test_a_zero_bomb_is_refused_from_its_header(
    server, serve, release, writes, tmp_path, monkeypatch
):
    limits = FetchLimits(unpacked_bytes=256 * 1024)  # 256 KiB and 4 MiB stand for 1 GiB
    monkeypatch.setattr(fetch_module, "RELEASE_LIMITS", limits)
    zeros = (f"{PREFIX}/data/zeros.bin", tarfile.REGTYPE, {"data": bytes(4 * 2**20)})
    body = release_with(release, extra_members(zeros))
    assert len(body) < 64 * 1024
    path = serve("/zeros.tar.gz", body)
    parent = tmp_path / "cache"
    result = fetch("--url", f"{server}{path}", "--sha256", sha(body), "--to", str(parent / "r"))
    refused(
        result,
        "refused: the archive's files add up to more than 262,144 bytes, more than a release "
        "can be",
        parent,
    )
    assert writes == []


def test_zeros_after_the_archives_end_are_refused_past_the_bound(
    server, serve, release, writes, tmp_path, monkeypatch
):
    limits = FetchLimits(unpacked_bytes=256 * 1024, members=20)
    monkeypatch.setattr(fetch_module, "RELEASE_LIMITS", limits)
    tar = gzip.decompress(tar_gz(release, f"{PREFIX}/data"))
    body = gzip.compress(tar + bytes(4 * 2**20))  # no header counts these 4 MiB
    path = serve("/trailing.tar.gz", body)
    parent = tmp_path / "cache"
    result = fetch("--url", f"{server}{path}", "--sha256", sha(body), "--to", str(parent / "r"))
    said = f"{limits.stream_bytes:,} bytes"
    refused(result, f"refused: the archive unpacks to more than {said}, more than a", parent)
    assert writes == []


def test_a_header_declaring_terabytes_is_refused_before_it_is_read(server, serve, writes, tmp_path):
    name = tarfile.TarInfo("x" * 200)  # a GNU long name (type L) declaring 100 TB
    name.type, name.size = tarfile.GNUTYPE_LONGNAME, 10**14
    body = gzip.compress(name.tobuf(tarfile.GNU_FORMAT) + bytes(20 * 512))
    path = serve("/long-name.tar.gz", body)
    parent = tmp_path / "cache"
    result = fetch("--url", f"{server}{path}", "--sha256", sha(body), "--to", str(parent / "r"))
    refused(
        result,
        "refused: the archive holds a header of 100,000,000,000,000 bytes, more than a "
        "release's can be (1 MiB)",
        parent,
    )
    assert writes == []


def test_a_sparse_map_larger_than_the_headers_bound_is_refused(
    server, serve, writes, tmp_path, monkeypatch
):
    limits = FetchLimits(members=4)  # headers: (4 + 2) x 8 KiB
    monkeypatch.setattr(fetch_module, "RELEASE_LIMITS", limits)
    pairs = 20_000  # a 200 KB map that tarfile parses into a list while reading headers
    sparse_map = b"%d\n" % pairs + b"".join(b"%d\n1\n" % (i * 4096) for i in range(pairs))
    member = tarfile.TarInfo(f"{PREFIX}/data/map.bin")
    member.size = len(sparse_map)
    member.pax_headers = {
        "GNU.sparse.major": "1",
        "GNU.sparse.minor": "0",
        "GNU.sparse.name": f"{PREFIX}/data/map.bin",
        "GNU.sparse.realsize": str(pairs * 4096),
    }
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        tar.addfile(member, io.BytesIO(sparse_map))
    body = buffer.getvalue()
    path = serve("/sparse-map.tar.gz", body)
    parent = tmp_path / "cache"
    result = fetch("--url", f"{server}{path}", "--sha256", sha(body), "--to", str(parent / "r"))
    refused(result, "refused: the archive's headers add up to more than a release's can be", parent)
    assert writes == []


def test_too_many_members_are_refused(server, serve, release, writes, tmp_path, monkeypatch):
    monkeypatch.setattr(fetch_module, "RELEASE_LIMITS", FetchLimits(members=40))
    many = [(f"{PREFIX}/many/{i}.txt", tarfile.REGTYPE, {"data": b"x"}) for i in range(40)]
    body = release_with(release, extra_members(*many))
    path = serve("/many.tar.gz", body)
    parent = tmp_path / "cache"
    result = fetch("--url", f"{server}{path}", "--sha256", sha(body), "--to", str(parent / "r"))
    refused(
        result, "refused: the archive holds more than 40 files and folders, more than a", parent
    )
    assert writes == []


def test_an_endless_download_is_stopped_at_the_bound(server, writes, tmp_path, monkeypatch):
    monkeypatch.setattr(fetch_module, "RELEASE_LIMITS", FetchLimits(download_bytes=2**20))
    parent = tmp_path / "cache"
    result = fetch("--url", f"{server}/endless", "--sha256", "0" * 64, "--to", str(parent / "r"))
    refused(result, f"refused: the download from {server}/endless went past 1 MiB", parent)
    assert sent["/endless"] < ENDLESS_CAP  # the client hung up; it did not read to the end
    assert writes == []


def test_a_content_length_over_the_bound_is_refused_before_reading(server, writes, tmp_path):
    parent = tmp_path / "cache"
    result = fetch("--url", f"{server}/announced", "--to", str(parent / "r"))
    refused(
        result,
        f"refused: {server}/announced announces 1,099,511,627,776 bytes, more than a release "
        "can be (64 MiB)",
        parent,
    )
    assert writes == []


def test_the_bounds_are_said_in_the_help():
    said = " ".join(runner.invoke(app, ["data", "fetch", "--help"]).output.split())
    assert RELEASE_LIMITS.describe() in said
    assert "An archive over 64 MiB, or unpacking to over 256 MiB or 10,000 files" in said
