"""Crash and resume: SIGKILL an `occubench run` part-way, then run the same command again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

from inspect_ai.log import list_eval_logs, read_eval_log

from conftest import HANG_BOUND, RELEASE_IDS
from occubench.results import read_runs
from occubench.testing import Hold, ScriptedOpenAIServer

KILL_AFTER = 3
"""Samples the server lets start; the run is killed once they are in the log."""


def logged_samples(log_dir: Path) -> int:
    """Samples written to the run's (only) log so far; 0 while it is being written."""
    try:
        (path,) = log_dir.glob("*/*.eval")  # logs/<the run's folder>/
        with zipfile.ZipFile(path) as z:
            return sum(name.startswith("samples/") for name in z.namelist())
    except (ValueError, OSError, zipfile.BadZipFile):
        return 0


def test_sigkill_then_the_same_command_resumes(release_dir, tmp_path, http_models):
    # --log-buffer 1 writes each sample to the log as it finishes (Inspect's default
    # buffers 10), so every sample finished before the kill is on disk.
    command = [
        str(Path(sys.executable).with_name("occubench")),
        "run",
        *http_models,
        "--dataset",
        str(release_dir),
        "--display",
        "none",
        "--workers",
        "1",
        "--max-samples",
        "2",
        "--log-buffer",
        "1",
        "--no-preflight",  # judge calls are counted below
    ]
    logs = tmp_path / "logs"
    # the server holds the later samples' first requests: the run stops at KILL_AFTER
    # finished samples however fast or slow the machine, and is killed there
    with ScriptedOpenAIServer(hold=Hold(model="schema-agent", samples=KILL_AFTER)) as server:
        env = {**os.environ, "LOCAL_BASE_URL": server.base_url, "LOCAL_API_KEY": "test-key"}
        first = subprocess.Popen(
            command,
            cwd=tmp_path,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + HANG_BOUND
        while logged_samples(logs) < KILL_AFTER:
            assert first.poll() is None, "the run ended before it was killed"
            assert time.monotonic() < deadline, "the run wrote no samples"
            time.sleep(0.05)
        os.killpg(first.pid, signal.SIGKILL)  # the run and anything it started
        first.wait()
        server.release()
        (killed,) = logs.glob("*/*.eval")
        before = read_eval_log(str(killed))
        assert before.status == "started"
        done = {s.id: s.uuid for s in before.samples}
        assert len(done) == KILL_AFTER
        judged = server.stats.requests["scripted-judge"]

        again = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)
        assert again.returncode == 0, again.stdout + again.stderr
        resumed_judge_calls = server.stats.requests["scripted-judge"] - judged

    (folder,) = logs.iterdir()
    infos = list_eval_logs(str(folder))
    assert len(infos) == 1, [i.name for i in infos]  # the killed log was superseded, removed
    log = read_eval_log(infos[0].name)
    assert log.status == "success"
    ids = [s.id for s in log.samples]
    assert sorted(ids) == RELEASE_IDS  # exactly one result per task: none lost, none twice
    assert all(s.error is None and s.scores["occubench_scorer"].value == "C" for s in log.samples)
    kept = {s.id: s.uuid for s in log.samples if s.id in done}
    assert kept == done  # the finished samples are the same samples, not re-run ...
    assert resumed_judge_calls == 3 * (len(RELEASE_IDS) - len(done))  # ... nor re-graded
    rows = read_runs([folder])  # what a reader of the whole folder sees
    assert sorted(r.task_id for r in rows) == RELEASE_IDS
    assert "Completion rate by industry" in again.stdout
    print(
        f"\nkilled with {len(done)} samples logged; the resume ran "
        f"{len(RELEASE_IDS) - len(done)} and judged {resumed_judge_calls // 3}"
    )
