"""The local executor: each shard in its own OS process on this machine.

A worker is ``python -P -m occubench.scale.worker SPEC.json RESULT.json`` started with
this interpreter; it inherits the environment (API keys, base URLs), which is never
written to the spec. ``-P`` keeps the current folder off its import path: a run started
in a folder that holds an ``occubench/`` package (a clone of the release) imports the
installed package, as the ``occubench`` command does; ``PYTHONPATH`` still applies.
At most ``parallel`` workers run at once; the others wait. Each worker is its own
process group: on Ctrl-C or SIGTERM (``KeyboardInterrupt`` here, see ``stop_signals``)
the groups are stopped with SIGINT, so that each worker's Inspect writes its log, then
killed if they outlast the grace period.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from occubench.redaction import redact
from occubench.scale._interrupt import stop_process_groups
from occubench.scale._progress import ProgressView, ShardState
from occubench.scale._spec import ShardResult, ShardSpec

_TAIL_LINES = 5
_WAIT_SECONDS = 0.05


def start_shard(spec: ShardSpec, stem: Path) -> subprocess.Popen[bytes]:
    """Start a worker process for ``spec``.

    It reads ``STEM.spec.json``, writes ``STEM.result.json`` and its output (stdout and
    stderr) to ``STEM.out``.
    """
    stem.with_suffix(".spec.json").write_text(spec.model_dump_json(indent=2))
    with stem.with_suffix(".out").open("wb") as out:
        return subprocess.Popen(
            [
                sys.executable,
                "-P",  # not the current folder first on the import path (see above)
                "-m",
                "occubench.scale.worker",
                str(stem.with_suffix(".spec.json")),
                str(stem.with_suffix(".result.json")),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # its own process group: stopped as one (see run_local)
        )


def shard_result(spec: ShardSpec, stem: Path, returncode: int) -> ShardResult:
    """The worker's result file, or a failed result naming its exit code and last output."""
    result = stem.with_suffix(".result.json")
    if result.is_file():
        return ShardResult.model_validate_json(result.read_text())
    out = stem.with_suffix(".out")
    tail = out.read_text(errors="replace").splitlines()[-_TAIL_LINES:] if out.is_file() else []
    return spec.result(
        False,
        error=redact(
            f"worker exited with code {returncode} (output: {out})"
            + "".join(f"\n  {line}" for line in tail)
        ),
    )


def run_local(
    shards: Sequence[ShardSpec], parallel: int, view: ProgressView | None = None
) -> list[ShardResult]:
    """Run the shards in worker processes, ``parallel`` at a time; results in shard order.

    The workers' files go to a temporary folder, removed when every shard succeeded or
    the run was interrupted, and kept (named in the failed results) otherwise. On
    ``KeyboardInterrupt`` the running workers are stopped (``stop_process_groups``) and
    the interrupt is raised again once they have ended.
    """
    work = Path(tempfile.mkdtemp(prefix="occubench-shards-"))
    stems = [work / f"{i:04d}" for i in range(len(shards))]
    results: list[ShardResult | None] = [None] * len(shards)
    states = [ShardState.PENDING] * len(shards)
    running: dict[int, subprocess.Popen[bytes]] = {}
    waiting = list(range(len(shards)))
    try:
        while waiting or running:
            while waiting and len(running) < max(1, parallel):
                i = waiting.pop(0)
                running[i] = start_shard(shards[i], stems[i])
                states[i] = ShardState.RUNNING
            for i, proc in list(running.items()):
                if proc.poll() is not None:
                    del running[i]
                    result = shard_result(shards[i], stems[i], proc.returncode)
                    results[i] = result
                    states[i] = ShardState.DONE if result.success else ShardState.FAILED
            if view is not None:
                view.update(states)
            if running:
                time.sleep(_WAIT_SECONDS)
    except KeyboardInterrupt:
        stop_process_groups(running.values())
        shutil.rmtree(work, ignore_errors=True)
        raise
    except BaseException:
        stop_process_groups(running.values(), grace=0)
        raise
    done = [r for r in results if r is not None]
    if all(r.success for r in done):
        shutil.rmtree(work, ignore_errors=True)
    return done
