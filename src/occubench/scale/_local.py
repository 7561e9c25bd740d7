"""The local executor: each shard in its own OS process on this machine.

A worker is ``python -P -m occubench.scale.worker SPEC.json RESULT.json`` started with
this interpreter, or a fork of this process (below); it inherits the environment (API
keys, base URLs), which is never written to the spec. ``-P`` keeps the current folder
off its import path: a run started in a folder that holds an ``occubench/`` package (a
clone of the release) imports the installed package, as the ``occubench`` command does;
``PYTHONPATH`` still applies. At most ``parallel`` workers run at once; the others wait.
Each worker is its own process group (its own session): on Ctrl-C or SIGTERM
(``KeyboardInterrupt`` here, see ``stop_signals``) the groups are stopped with SIGINT, so
that each worker's Inspect writes its log, then killed if they outlast the grace period.

Workers can start before their shards are planned (``start_workers``): a run starts
them as soon as it knows how many it may need, and they get ready (imports, the task
registry) while the run checks its models and decides how many shards it has; each is
then given its shard or dismissed (``WorkerPool``). Where it is safe, a worker is a fork
of this process (``can_fork``: Linux, one thread), which has imported everything a shard
needs already, and read Inspect's model database: it starts in milliseconds instead of
seconds of imports, and its imported modules are shared with this process until
written; it imports the modules an eval imports at its start while it waits. Elsewhere it is a new
interpreter started with ``LAUNCHER`` (``occubench.scale.worker``), which tunes the
collector before its first import.
"""

from __future__ import annotations

import atexit
import gc
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from occubench.redaction import redact
from occubench.scale._interpreter import exit_now, warm_model_data
from occubench.scale._interrupt import WorkerProcess, stop_process_groups
from occubench.scale._progress import ProgressView, ShardState
from occubench.scale._spec import ShardResult, ShardSpec
from occubench.scale.worker import GO, LAUNCHER, WAIT, serve

_TAIL_LINES = 5
_WAIT_SECONDS = 0.05


def _files(stem: Path) -> tuple[Path, Path, Path]:
    """A worker's spec, result and output files."""
    return (
        stem.with_suffix(".spec.json"),
        stem.with_suffix(".result.json"),
        stem.with_suffix(".out"),
    )


def _command(stem: Path, *extra: str) -> list[str]:
    spec, result, _ = _files(stem)
    return [
        sys.executable,
        "-P",  # not the current folder first on the import path (see above)
        "-c",
        LAUNCHER,
        str(spec),
        str(result),
        *extra,
    ]


def start_shard(spec: ShardSpec, stem: Path) -> subprocess.Popen[bytes]:
    """Start a worker process for ``spec`` (a new interpreter).

    It reads ``STEM.spec.json``, writes ``STEM.result.json`` and its output (stdout and
    stderr) to ``STEM.out``.
    """
    spec_file, _, out_file = _files(stem)
    spec_file.write_text(spec.model_dump_json(indent=2))
    with out_file.open("wb") as out:
        return subprocess.Popen(
            _command(stem),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # its own process group: stopped as one (see run_local)
        )


class ForkedProcess:
    """A forked worker, with the part of ``subprocess.Popen`` the executor uses."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        """The exit code, or None while it runs."""
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere: it is gone
                self.returncode = -1
                return self.returncode
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the exit code (``subprocess.TimeoutExpired`` after ``timeout`` seconds)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while (code := self.poll()) is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired([str(self.pid)], timeout or 0.0)
            time.sleep(_WAIT_SECONDS)
        return code


def can_fork() -> bool:
    """Whether a worker can be a fork of this process: Linux and no other thread.

    A thread of this process (a live progress view, a pool) could hold a lock when the
    fork copies it, which the worker would then wait on forever.
    """
    return sys.platform == "linux" and hasattr(os, "fork") and threading.active_count() == 1


class Worker:
    """A worker process started before its shard is known: given one, or dismissed.

    Args:
        process: The process.
        stem: Its files' common path (``STEM.spec.json``, ``.result.json``, ``.out``).
        go: The pipe it waits on (``GO`` runs it, closing it dismisses it).
    """

    def __init__(self, process: WorkerProcess, stem: Path, go: IO[bytes]) -> None:
        self.process = process
        self.stem = stem
        self.given = False
        self._go = go

    def give(self, spec: ShardSpec) -> WorkerProcess:
        """Write the shard's spec and tell the worker to run it."""
        spec_file, _, _ = _files(self.stem)
        spec_file.write_text(spec.model_dump_json(indent=2))
        self.given = True
        try:
            self._go.write(GO + b"\n")
            self._go.close()
        except OSError:  # it is gone already: its exit code says so
            pass
        return self.process

    def dismiss(self) -> None:
        """Tell the worker it is not needed (it ends without running anything)."""
        try:
            self._go.close()
        except OSError:
            pass

    @property
    def pending(self) -> bool:
        """Whether it was neither given a shard nor dismissed."""
        return not self._go.closed

    def fileno(self) -> int:
        """This process's end of the worker's pipe (a fork closes the others' ends)."""
        return self._go.fileno()


def _spawn_worker(stem: Path) -> Worker:
    _, _, out_file = _files(stem)
    with out_file.open("wb") as out:
        proc = subprocess.Popen(
            _command(stem, WAIT),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.PIPE,
            start_new_session=True,
        )
    assert proc.stdin is not None
    return Worker(proc, stem, proc.stdin)


def _fork_worker(stem: Path, others: Sequence[Worker]) -> Worker:
    """Fork a worker that waits for its shard (see the module's docstring).

    The pipes of the workers forked before (``others``) are closed in it: a worker
    holding another's pipe open would keep that one waiting after its dismissal.
    """
    theirs = [w.fileno() for w in others if w.pending]
    spec_file, result_file, out_file = _files(stem)
    out = os.open(out_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    read_end, write_end = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the worker: never returns into the caller's code
        code = 1
        try:
            for fd in (write_end, *theirs):
                os.close(fd)
            os.setsid()  # its own session and process group, as a spawned worker
            for fd in (1, 2):
                os.dup2(out, fd)
            os.close(out)
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.close(null)
            atexit._clear()  # the caller's exit handlers are the caller's
            signal.signal(signal.SIGINT, signal.default_int_handler)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            with os.fdopen(read_end, "rb") as go:
                code = serve(spec_file, result_file, go)
        except BaseException:  # noqa: BLE001 - reported in its output, as a spawned one's
            traceback.print_exc()
        finally:
            exit_now(code)
    os.close(read_end)
    os.close(out)
    return Worker(ForkedProcess(pid), stem, os.fdopen(write_end, "wb"))


class WorkerPool:
    """Workers started at once, each to be given a shard or dismissed (``start_workers``)."""

    def __init__(self, folder: Path, workers: list[Worker]) -> None:
        self.folder = folder
        self.workers = workers

    def take(self) -> Worker | None:
        """A worker not given a shard yet, if any."""
        return next((w for w in self.workers if w.pending), None)

    def dismiss_rest(self) -> None:
        """Dismiss every worker not given a shard, and wait for them to end."""
        for worker in self.workers:
            if worker.pending:
                worker.dismiss()
                try:
                    worker.process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    stop_process_groups([worker.process], grace=0)


@contextmanager
def start_workers(count: int) -> Iterator[WorkerPool]:
    """Start ``count`` workers that wait for their shards (forked where ``can_fork``).

    Those still waiting when the block ends are dismissed; on an error or an interrupt
    they are stopped at once (they have run nothing). The workers' folder is removed
    when none of them ran a shard; ``run_local`` removes it otherwise.
    """
    folder = Path(tempfile.mkdtemp(prefix="occubench-shards-"))
    fork = can_fork()
    if fork:
        warm_model_data()  # read once here, shared by every fork
        gc.collect()
        gc.freeze()  # the forks' collections leave the copied objects (and pages) alone
    workers: list[Worker] = []
    try:
        for i in range(count):
            stem = folder / f"{i:04d}"
            workers.append(_fork_worker(stem, workers) if fork else _spawn_worker(stem))
    except BaseException:
        stop_process_groups([w.process for w in workers], grace=0)
        shutil.rmtree(folder, ignore_errors=True)
        raise
    finally:
        if fork:
            gc.unfreeze()
    pool = WorkerPool(folder, workers)
    try:
        yield pool
    except BaseException:
        stop_process_groups([w.process for w in workers if w.pending], grace=0)
        raise
    finally:
        pool.dismiss_rest()
        if not any(w.given for w in workers):  # nothing ran: nothing to keep
            shutil.rmtree(folder, ignore_errors=True)


def shard_result(spec: ShardSpec, stem: Path, returncode: int) -> ShardResult:
    """The worker's result file, or a failed result naming its exit code and last output."""
    _, result, out = _files(stem)
    if result.is_file():
        return ShardResult.model_validate_json(result.read_text())
    tail = out.read_text(errors="replace").splitlines()[-_TAIL_LINES:] if out.is_file() else []
    return spec.result(
        False,
        error=redact(
            f"worker exited with code {returncode} (output: {out})"
            + "".join(f"\n  {line}" for line in tail)
        ),
    )


def run_local(
    shards: Sequence[ShardSpec],
    parallel: int,
    view: ProgressView | None = None,
    pool: WorkerPool | None = None,
    started: Callable[[], None] | None = None,
) -> list[ShardResult]:
    """Run the shards in worker processes, ``parallel`` at a time; results in shard order.

    Workers of ``pool`` (started before, waiting) take the first shards; the others get
    new workers. ``started`` is called once every shard that can run at once has been
    handed out. The workers' files go to a temporary folder (the pool's), removed when
    every shard succeeded or the run was interrupted, and kept (named in the failed
    results) otherwise. On ``KeyboardInterrupt`` the running workers are stopped
    (``stop_process_groups``) and the interrupt is raised again once they have ended.
    """
    work = pool.folder if pool is not None else Path(tempfile.mkdtemp(prefix="occubench-shards-"))
    stems = [work / f"{i:04d}" for i in range(len(shards))]
    results: list[ShardResult | None] = [None] * len(shards)
    states = [ShardState.PENDING] * len(shards)
    running: dict[int, WorkerProcess] = {}
    waiting = list(range(len(shards)))
    try:
        while waiting or running:
            while waiting and len(running) < max(1, parallel):
                i = waiting.pop(0)
                worker = pool.take() if pool is not None else None
                if worker is not None:
                    stems[i] = worker.stem
                    running[i] = worker.give(shards[i])
                else:
                    running[i] = start_shard(shards[i], stems[i])
                states[i] = ShardState.RUNNING
            if started is not None:
                started()
                started = None
            for i, proc in list(running.items()):
                if proc.poll() is not None:
                    del running[i]
                    code = proc.returncode if proc.returncode is not None else -1
                    result = shard_result(shards[i], stems[i], code)
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
