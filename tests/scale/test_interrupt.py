"""Ctrl-C and SIGTERM: one behaviour for one worker and for shard workers.

``occubench run`` is a child process against the scripted server, which lets one sample
start and holds the others' first requests; once that sample is logged the run gets
SIGINT (one worker) or SIGTERM (two workers). It must exit 130, say how many samples
were kept and the exact command that resumes, never say "successfully", leave no worker
process and no temporary folder; the printed command then finishes the run.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from conftest import HANG_BOUND
from occubench.errors import ExitCode
from occubench.results import read_runs
from occubench.testing import Hold, ScriptedOpenAIServer
from resume_runs import kept_in

BIN = Path(sys.executable).with_name("occubench")
MODELS = [
    "--agent-model",
    "openai-api/local/careful",
    "--simulator-model",
    "openai-api/local/canned",
]


def logged(root: Path) -> int:
    """Samples written so far to the logs under ``root`` (0 while one is being written)."""
    total = 0
    for path in root.rglob("*.eval"):
        try:
            with zipfile.ZipFile(path) as z:
                total += sum(n.startswith("samples/") for n in z.namelist())
        except (OSError, zipfile.BadZipFile):
            pass
    return total


def workers_in(root: Path) -> list[str]:
    """This run's processes still alive: shard workers, spawned (their spec files are
    under ``root``) or forked (the command's own line, which names ``root``)."""
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [
        line
        for line in out.splitlines()
        if str(root) in line and ("occubench.scale.worker" in line or "occubench run" in line)
    ]


@pytest.mark.parametrize(
    ("workers", "sig"), [("1", signal.SIGINT), ("2", signal.SIGTERM)], ids=["one", "two"]
)
def test_interrupt_keeps_samples_and_prints_the_resuming_command(tmp_path, workers, sig):
    temp = tmp_path / "tmp"
    temp.mkdir()
    logs = tmp_path / "logs"
    command = [
        str(BIN),
        "run",
        *MODELS,
        "--dataset",
        "reference",
        "--with-plan",
        "--workers",
        workers,
        "--max-samples",
        "1",  # one at a time: a held request keeps its connection from the others
        *kept_in(logs),
    ]
    with ScriptedOpenAIServer(hold=Hold(model="careful", samples=1)) as server:
        env = {
            **os.environ,
            "LOCAL_BASE_URL": server.base_url,
            "LOCAL_API_KEY": "test-key",
            "TMPDIR": str(temp),
        }
        run = subprocess.Popen(
            command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + HANG_BOUND
        while logged(logs) < 1:
            assert run.poll() is None, "the run ended before it was interrupted"
            assert time.monotonic() < deadline, "no sample was logged"
            time.sleep(0.1)
        run.send_signal(sig)
        out, _ = run.communicate(timeout=HANG_BOUND)
        text = out.decode()
        assert run.returncode == ExitCode.INTERRUPTED, text
        assert f"Interrupted ({sig.name}):" in text and "samples finished and are kept" in text
        assert "successfully" not in text and "eval-retry" not in text
        assert "Traceback" not in text
        assert not workers_in(tmp_path)
        assert list(temp.iterdir()) == []  # the shards' temporary folder is gone
        kept = len(read_runs([logs]))
        assert 1 <= kept < 10
        resume = next(
            line.strip() for line in text.splitlines() if line.strip().startswith("occubench run")
        )
        server.release()
        again = subprocess.run(
            [str(BIN), *shlex.split(resume)[1:]],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
        )
    assert again.returncode == ExitCode.OK, again.stdout + again.stderr
    rows = read_runs([logs])
    assert sorted(r.task_id for r in rows) == list(range(1001, 1011))  # one result per task
    assert all(r.passed for r in rows)
