"""``occubench data fetch`` and ``--dataset occubench`` against a local HTTP server.

The server (127.0.0.1, a free port) serves archives the tests build from the fixture
dataset in the release layout: a good one, a corrupt one, one without the layout, and
a download cut short (the Content-Length promises more than is sent).
"""

from __future__ import annotations

import hashlib
import http.server
import io
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from occubench.cli import _common, app
from occubench.dataset import PUBLIC_RELEASE, SOURCE_FILE, TASKS_FILE, load_dataset
from occubench.errors import ExitCode
from release_layout import RELEASE_IDS, write_release_dataset

runner = CliRunner()


def tar_gz(root: Path, prefix: str) -> bytes:
    """``root`` as a .tar.gz under ``prefix`` (as a repository archive holds data/)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(root, arcname=prefix)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def archives(tmp_path_factory) -> dict[str, bytes]:
    root = write_release_dataset(tmp_path_factory.mktemp("release") / "data")
    good = tar_gz(root, "OccuBench-abc123/data")
    other = tmp_path_factory.mktemp("other")
    (other / "README.md").write_text("no release here\n")
    return {
        "/good.tar.gz": good,
        "/corrupt.tar.gz": good[: len(good) // 2] + b"\x00garbage" * 64,
        "/empty.tar.gz": tar_gz(other, "OccuBench-abc123"),
        "/cut.tar.gz": good,
    }


@pytest.fixture(scope="module")
def server(archives) -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the standard library's name
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
