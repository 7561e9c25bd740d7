"""Secrets: an API key in the environment reaches the provider and nothing else.

A run with a recognisable fake key (cached responses, realtime log, some samples
ending in provider errors) must leave it in no log (every member of the .eval zips),
no cache or Inspect data file, no report and no output.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import zipfile
from pathlib import Path

from typer.testing import CliRunner

from occubench.analysis import read_runs
from occubench.cli import app
from occubench.errors import ExitCode
from occubench.scripted._openai_server import FailureKind, Flakiness, ScriptedOpenAIServer

FAKE_KEY = "sk-occubench-FAKE-0123456789abcdef0123456789abcdef"
ERRORS = Flakiness(rate=0.1, seed=12, kinds=[FailureKind.SERVER_ERROR], failures=100)
"""Some requests fail for good: their samples end in errors, whose messages are logged."""


def texts(root: Path):
    """(name, bytes) of every file under ``root``, unzipped and gunzipped too."""
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        yield str(path), data
        if data[:2] == b"\x1f\x8b":  # gzip (Inspect's trace logs)
            yield f"{path}!gunzip", gzip.decompress(data)
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as z:
                for member in z.namelist():
                    yield f"{path}!{member}", z.read(member)


def leaks(root: Path) -> list[str]:
    return [name for name, data in texts(root) if FAKE_KEY.encode() in data]


def test_the_scan_reads_zip_members(tmp_path):
    with zipfile.ZipFile(tmp_path / "x.eval", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("samples/1.json", f'{{"auth": "Bearer {FAKE_KEY}"}}')
    (tmp_path / "trace.log.gz").write_bytes(gzip.compress(FAKE_KEY.encode()))
    assert leaks(tmp_path) == [
        f"{tmp_path / 'trace.log.gz'}!gunzip",
        f"{tmp_path / 'x.eval'}!samples/1.json",
    ]


def test_a_fake_key_leaks_nowhere(release_dir, tmp_path, http_models):
    home = tmp_path / "home"  # Inspect's cache and data folders (traces, sample buffers)
    env = {
        **os.environ,
        "LOCAL_API_KEY": FAKE_KEY,
        "OPENAI_API_KEY": FAKE_KEY,
        "INSPECT_CACHE_DIR": str(home / "cache"),
        "XDG_CACHE_HOME": str(home / "xdg-cache"),
        "XDG_DATA_HOME": str(home / "xdg-data"),
    }
    command = [
        str(Path(sys.executable).with_name("occubench")),
        "run",
        *http_models,
        "--dataset",
        str(release_dir),
        "--tasks",
        "11,24,26,32",
        "--protocol",
        "occubench",  # provider failures are errors (the paper's would grade them)
        "--display",
        "plain",
        "--workers",
        "1",
        "--cache",
        "--log-realtime",
        "--max-retries",
        "0",
        "--retry-on-error",
        "0",
        "--log-dir",
        str(tmp_path / "logs"),
    ]
    with ScriptedOpenAIServer(flaky=ERRORS) as server:
        run = subprocess.run(
            command,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env={**env, "LOCAL_BASE_URL": server.base_url},
        )
        assert server.stats.saw_key(FAKE_KEY)  # the key did reach the provider
        failures = server.stats.snapshot()["failures"]
    assert run.returncode == ExitCode.SAMPLE_ERRORS, run.stdout + run.stderr
    assert failures and "infrastructure error" in run.stdout
    rows = read_runs([tmp_path / "logs"])
    errors = [r.error for r in rows if r.error]
    assert errors and all("500" in e or "InternalServerError" in e for e in errors)
    assert any(home.rglob("*")), "the run cached nothing: the cache check would be empty"

    report = CliRunner().invoke(
        app,
        ["report", str(tmp_path / "logs"), "--out", str(tmp_path / "report")],
        terminal_width=200,
    )
    assert report.exit_code == 0, report.output
    assert any((tmp_path / "report").iterdir())

    for text in (run.stdout, run.stderr, report.output, *errors):
        assert FAKE_KEY not in text
    assert leaks(tmp_path) == []
    print(f"\nscanned {sum(1 for _ in texts(tmp_path))} files and zip members")
    assert next((tmp_path / "logs").glob("*/*.eval"))  # logs/<the run's folder>/
