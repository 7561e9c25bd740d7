"""Taking a log folder: one run at a time, stale locks, unreadable logs, read-only, full disk."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import zipfile
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from conftest import HANG_BOUND, HTTP_MODEL_ARGS, RELEASE_IDS, SCRIPTED_MODEL_ARGS
from occubench.defaults import DEFAULT_LOCK_FILE
from occubench.results import read_runs
from occubench.scale import LogFolderBusy, hold_log_folder
from occubench.testing import Hold, ScriptedOpenAIServer

OCCUBENCH = str(Path(sys.executable).with_name("occubench"))


def command(
    release_dir: Path, log_dir: Path, *extra: str, models: list[str] = SCRIPTED_MODEL_ARGS
) -> list:
    return [
        OCCUBENCH, "run", *models, "--dataset", str(release_dir), "--display", "none",
        "--protocol", "occubench", "--log-dir", str(log_dir), *extra,
    ]  # fmt: skip


def flat(text: str) -> str:
    """Text without whitespace: terminal output wraps long paths anywhere."""
    return "".join(text.split())


def holder(folder: Path) -> subprocess.Popen[str]:
    """Another process that takes the folder and keeps it until its stdin closes."""
    code = textwrap.dedent(
        f"""
        import sys
        from occubench.scale import hold_log_folder
        with hold_log_folder({str(folder)!r}):
            print("held", flush=True)
            sys.stdin.read()
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_held_folder_is_refused_with_its_owner_and_freed_after(tmp_path):
    folder = tmp_path / "logs"
    other = holder(folder)
    try:
        with pytest.raises(LogFolderBusy, match=rf"in use by another run \(pid {other.pid} on "):
            with hold_log_folder(folder):
                pass
    finally:
        other.communicate("")
    with hold_log_folder(folder) as held:  # free once the holder ended
        assert held.notes == []
        owner = json.loads((folder / DEFAULT_LOCK_FILE).read_text())
        assert owner["pid"] == os.getpid()
        with hold_log_folder(folder) as again:  # re-entrant in one process
            assert again.notes == []
    assert (folder / DEFAULT_LOCK_FILE).read_text() == ""  # emptied, not removed


def test_a_stale_lock_is_taken_over_and_said(tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], text=True,
                          capture_output=True).stdout.strip()  # fmt: skip
    stale = {"pid": int(dead), "host": os.uname().nodename, "started": "2026-01-01T00:00:00"}
    (folder / DEFAULT_LOCK_FILE).write_text(json.dumps({**stale, "command": "occubench run"}))
    with hold_log_folder(folder) as held:
        (note,) = held.notes
    assert f"took over the lock of {folder} left by pid {dead}" in note and "not running" in note


def test_two_identical_runs_at_once_one_runs_one_is_refused(release_dir, tmp_path):
    """Started together: one run, one clear refusal naming the holder, one result per task.

    The server starts no sample until one of the two has ended, so the winner still holds
    the folder when the other asks for it, however far apart a busy machine starts them.
    """
    log_dir = tmp_path / "logs"
    with ScriptedOpenAIServer(hold=Hold(model="schema-agent", samples=0)) as server:
        env = {**os.environ, "LOCAL_BASE_URL": server.base_url, "LOCAL_API_KEY": "test-key"}
        run = command(release_dir, log_dir, "--workers", "2", models=HTTP_MODEL_ARGS)
        outs = [tmp_path / f"run-{i}.out" for i in range(2)]
        procs = []
        for out in outs:
            with out.open("w") as sink:
                procs.append(subprocess.Popen(run, cwd=tmp_path, env=env, stdout=sink,
                                              stderr=subprocess.STDOUT))  # fmt: skip
        deadline = time.monotonic() + HANG_BOUND
        while all(p.poll() is None for p in procs):
            assert time.monotonic() < deadline, "neither run ended: both took the folder?"
            time.sleep(0.05)
        server.release()
        for p in procs:
            p.wait(timeout=HANG_BOUND)
    outputs = [out.read_text() for out in outs]
    codes = sorted(p.returncode for p in procs)
    assert codes == [0, 1], outputs
    refused = outputs[[p.returncode for p in procs].index(1)]
    winner = procs[[p.returncode for p in procs].index(0)]
    assert flat(f"is in use by another run (pid {winner.pid} on") in flat(refused)
    assert "Traceback" not in refused and "Estimate before the run" not in refused  # said first
    rows = read_runs([log_dir])
    assert sorted(r.task_id for r in rows) == RELEASE_IDS  # not 20 results for 10 tasks
    assert all(r.error is None for r in rows)


def test_an_unreadable_log_is_named_moved_aside_and_its_samples_run_again(release_dir, tmp_path):
    log_dir = tmp_path / "logs"
    tasks = ["--tasks", "11,24", "--workers", "1"]
    first = subprocess.run(command(release_dir, log_dir, *tasks), cwd=tmp_path, text=True,
                           capture_output=True)  # fmt: skip
    assert first.returncode == 0, first.stdout + first.stderr
    (log,) = log_dir.glob("*/*.eval")  # LOG_DIR/<the run's folder>/
    run_dir = log.parent
    log.write_bytes(log.read_bytes()[: log.stat().st_size // 2])  # cut short, as by a crash
    (run_dir / "garbage.eval").write_bytes(b"not a zip at all")
    again = subprocess.run(command(release_dir, log_dir, *tasks), cwd=tmp_path, text=True,
                           capture_output=True)  # fmt: skip
    out = flat(again.stdout)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "EOCD" not in again.stderr and "Traceback" not in again.stderr
    assert flat(f"moved aside, its samples run again: {log} (not a readable zip") in out
    assert flat(f"{run_dir / 'garbage.eval'} (not a readable zip") in out
    assert sorted(p.name for p in run_dir.glob("*.corrupt")) == sorted(
        [f"{log.name}.corrupt", "garbage.eval.corrupt"]
    )
    (fresh,) = list_eval_logs(str(run_dir))
    samples = read_eval_log(fresh.name).samples or []
    assert sorted(s.id for s in samples) == [11, 24] and all(s.error is None for s in samples)


def can_mount(where: Path) -> str | None:
    """Why a test cannot mount a small tmpfs in ``where`` (None: it can)."""
    if os.geteuid() != 0:
        return "mounting a tmpfs needs root"
    probe = where / "mount-probe"
    probe.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(probe)],
                          capture_output=True)  # fmt: skip
    if done.returncode != 0:
        probe.rmdir()
        return f"mount refused: {done.stderr.decode(errors='replace').strip()}"
    subprocess.run(["umount", str(probe)], check=True)
    probe.rmdir()
    return None


def _mount_problem() -> str | None:
    """``can_mount`` in a temporary folder of its own (asked once, as the tests are collected)."""
    with tempfile.TemporaryDirectory() as where:
        return can_mount(Path(where))


MOUNT_PROBLEM = _mount_problem()
needs_tmpfs = pytest.mark.skipif(
    MOUNT_PROBLEM is not None, reason=f"a small tmpfs cannot be mounted here: {MOUNT_PROBLEM}"
)
"""For the tests that mount a tmpfs (root, and a system that lets it mount one)."""


@pytest.fixture
def tmpfs(tmp_path):
    """Mount a small tmpfs: ``mount(size, read_only)`` -> its path; unmounted after."""
    assert MOUNT_PROBLEM is None, "a tmpfs test without the needs_tmpfs mark"
    mounted: list[Path] = []

    def mount(size: str, read_only: bool = False) -> Path:
        point = tmp_path / f"mnt{len(mounted)}"
        point.mkdir()
        options = f"size={size}" + (",ro" if read_only else "")
        subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(point)], check=True)
        mounted.append(point)
        return point

    yield mount
    for point in mounted:
        subprocess.run(["umount", "-l", str(point)], check=False)


@needs_tmpfs
def test_a_read_only_folder_is_one_line_before_any_model_call(release_dir, tmp_path, tmpfs):
    read_only = tmpfs("1m", read_only=True)
    with ScriptedOpenAIServer() as server:
        env = {**os.environ, "LOCAL_BASE_URL": server.base_url, "LOCAL_API_KEY": "test-key"}
        for log_dir in (read_only, read_only / "new"):  # an existing folder, one to create
            args = command(release_dir, log_dir, "--workers", "1", models=HTTP_MODEL_ARGS)
            run = subprocess.run(args, cwd=tmp_path, env=env, text=True, capture_output=True)
            assert run.returncode == 1, run.stdout + run.stderr
            line = flat(run.stderr)
            assert flat(f"Error: the log folder {log_dir}/") in line  # its run's folder in it
            assert flat("is read-only (Read-only file") in line
            assert "Traceback" not in run.stdout + run.stderr
        assert sum(server.stats.requests.values()) == 0  # no model was called


@needs_tmpfs
def test_a_full_disk_is_one_line_before_the_run_and_during_it(
    release_dir, tmp_path, tmpfs, monkeypatch
):
    small = tmpfs("1m")
    before = subprocess.run(command(release_dir, small / "logs", "--workers", "1"), cwd=tmp_path,
                            text=True, capture_output=True)  # fmt: skip
    assert before.returncode == 1
    line = flat(before.stderr)  # the console wraps a long tmp path anywhere
    assert flat(f"the disk holding the log folder {small / 'logs'}/") in line  # its run's folder
    assert flat("is full (1 MB free, 64 MB needed)") in line
    assert "Traceback" not in before.stdout + before.stderr

    # The disk fills up during the run (the free-space floor lowered to let it start).
    from typer.testing import CliRunner

    import occubench.scale._log_folder as log_folder
    from occubench.cli import app

    monkeypatch.setattr(log_folder, "DEFAULT_MIN_FREE_MB", 0)
    tiny = tmpfs("150k")
    during = CliRunner().invoke(
        app, command(release_dir, tiny / "logs", "--workers", "1", "--log-buffer", "1")[1:],
        terminal_width=200,
    )  # fmt: skip
    assert during.exit_code == 1, during.output
    said = flat(during.output)
    assert flat(f"shard 1/1: the disk holding the log folder {tiny / 'logs'}/") in said
    assert flat("is full") in said
    assert during.exception is None or isinstance(during.exception, SystemExit)


def test_a_log_written_by_nobody_is_no_longer_read(tmp_path):
    """A folder's zip that is not a log at all (no header) is moved aside like a cut one."""
    folder = tmp_path / "logs"
    folder.mkdir()
    with zipfile.ZipFile(folder / "other.eval", "w") as z:
        z.writestr("readme.txt", "hello")
    with hold_log_folder(folder) as held:
        (note,) = held.notes
    assert "no header.json or _journal/start.json in it" in note
    assert (folder / "other.eval.corrupt").is_file() and not (folder / "other.eval").exists()
