"""Ctrl-C and SIGTERM: one behaviour for a run in this process and for shard workers.

A run in this process is an Inspect eval on an asyncio loop, whose runner turns the
first SIGINT into a cancellation of the eval: Inspect cancels the samples in flight,
writes its logs with the finished samples (status ``cancelled``) and returns. Inside
``stop_signals``:

- SIGTERM is handled as SIGINT (it calls whatever SIGINT handler is installed), so a
  ``kill`` stops a run as gently as a Ctrl-C;
- once an eval's loop runs, its SIGINT handler is wrapped (an Inspect hook at the
  start of the run): the signal is recorded and Inspect's own console is silenced, so
  that its "Completed all tasks ... successfully" and ``inspect eval-retry`` advice do
  not follow an interrupt (the command says what was kept and how to resume);
- outside an eval (the local executor's loop, the preflight) SIGINT raises
  ``KeyboardInterrupt`` as usual.

The local executor starts each worker in its own process group and stops the groups
with SIGINT (``stop_process_groups``), so each worker's Inspect writes its log too.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, Protocol

import rich
from inspect_ai.hooks import Hooks, RunStart, TaskStart, hooks

from occubench.defaults import DEFAULT_WORKER_STOP_SECONDS


@dataclass
class Interruption:
    """Which stop signal arrived while ``stop_signals`` was active (None: none).

    ``cause`` says why the run stopped itself, when it did (e.g. the preflight's second
    turn was refused while the run started: ``FollowUp``); empty for a person's Ctrl-C.
    """

    signal: int | None = None
    cause: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        """The signal's name (``SIGINT``), or an empty string."""
        return signal.Signals(self.signal).name if self.signal is not None else ""


_active: Interruption | None = None


class _Recording:
    """A SIGINT handler that records the signal, silences Inspect, then calls ``inner``."""

    def __init__(self, inner: Callable[[int, FrameType | None], Any] | int | None) -> None:
        self.inner = inner

    def __call__(self, signum: int, frame: FrameType | None) -> Any:
        record(signum)
        rich.get_console().quiet = True  # Inspect prints through rich's global console
        if callable(self.inner):
            return self.inner(signal.SIGINT, frame)
        raise KeyboardInterrupt


def record(signum: int) -> None:
    """Note that a stop signal arrived (the first one counts)."""
    if _active is not None and _active.signal is None:
        _active.signal = signum


def _as_sigint(signum: int, frame: FrameType | None) -> Any:
    record(signum)
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler) and handler is not signal.default_int_handler:
        return handler(signal.SIGINT, frame)
    raise KeyboardInterrupt


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def watch_sigint() -> None:
    """Wrap the SIGINT handler installed now (the eval loop's) so that it records (idempotent)."""
    if _active is None or not _in_main_thread():
        return
    current = signal.getsignal(signal.SIGINT)
    if not isinstance(current, _Recording):
        signal.signal(signal.SIGINT, _Recording(current))


@contextmanager
def stop_signals() -> Iterator[Interruption]:
    """SIGINT and SIGTERM stop the work inside the block gently, and are recorded.

    Yields the ``Interruption``, whose ``signal`` says what arrived. The previous
    handlers, and Inspect's console, are restored on exit. Outside the main thread
    (where Python cannot install handlers) the block runs with the handlers as they are.
    """
    global _active
    seen = Interruption()
    if not _in_main_thread():
        yield seen
        return
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    quiet = rich.get_console().quiet
    outer, _active = _active, seen
    signal.signal(signal.SIGTERM, _as_sigint)
    try:
        yield seen
    except KeyboardInterrupt:
        if seen.signal is None:
            seen.signal = signal.SIGINT
        raise
    finally:
        _active = outer
        for sig, old in previous.items():
            signal.signal(sig, old if old is not None else signal.SIG_DFL)
        rich.get_console().quiet = quiet


@hooks(name="occubench_interrupt", description="Records Ctrl-C and SIGTERM during a run.")
class InterruptHooks(Hooks):
    """Wraps the eval loop's SIGINT handler as the run starts (see ``watch_sigint``)."""

    def enabled(self) -> bool:
        """Only inside ``stop_signals``."""
        return _active is not None

    async def on_run_start(self, data: RunStart) -> None:
        """The eval's loop runs: record its SIGINTs."""
        watch_sigint()

    async def on_task_start(self, data: TaskStart) -> None:
        """The same, should a task start on a loop of its own."""
        watch_sigint()


class WorkerProcess(Protocol):
    """What stopping needs of a worker process (``subprocess.Popen`` has it)."""

    pid: int
    returncode: int | None

    def poll(self) -> int | None:
        """The exit code, or None while it runs."""

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the exit code (``subprocess.TimeoutExpired`` after ``timeout``)."""


def stop_process_groups(
    processes: Iterable[WorkerProcess], grace: float = DEFAULT_WORKER_STOP_SECONDS
) -> None:
    """Stop workers started in their own process groups: SIGINT, then SIGKILL after ``grace``.

    SIGINT lets each worker's Inspect cancel its samples and write its log; a group still
    alive after ``grace`` seconds is killed, children included.
    """
    alive = [p for p in processes if p.poll() is None]
    for proc in alive:
        _signal_group(proc, signal.SIGINT)
    deadline = time.monotonic() + grace
    # a second Ctrl-C must not cut this wait short: the workers would outlive us
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if _in_main_thread() else None
    try:
        for proc in alive:
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(proc, signal.SIGKILL)
                proc.wait()
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _signal_group(proc: WorkerProcess, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
