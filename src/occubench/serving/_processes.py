"""An agent program's processes: found and stopped as a whole, its output read to a bound.

The program is started in a session of its own (its process group too), with standard
output and error on pipes of ours (``OutputPipe``). What it starts may leave both: a
daemon double-forks and calls ``setsid``. So when its sample ends, every process of the
program is looked for in ``/proc`` (``ProgramProcesses.find``), matching any of:

- its process group or session is the program's;
- its environment holds this run's tag (``PROCESS_TAG_VARIABLE``, a random value given to
  the program and inherited by what it starts);
- it holds one of the program's output pipes open for writing (a process that does is
  the one that would keep the run waiting for the end of the output).

``ProgramProcesses.stop`` sends SIGTERM to them all, waits up to ``STOP_GRACE`` seconds
for them to end, then sends SIGKILL (looking again each round, for what they started
meanwhile) until none is left or another ``STOP_GRACE`` has passed. Reading the output
stops ``STOP_GRACE`` seconds after that whether or not it ended: nothing makes a sample
wait longer.

Limits: a process that leaves the session, replaces its environment and closes the
pipes is not found, and outlives its sample; so does a process of another user (a
set-user-ID program) or one in another PID namespace that hides it. Where there is no
``/proc`` only the process group is signalled. For programs that are not trusted this
far, run occubench in a container, or the program in a cgroup or sandbox of its own.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import NamedTuple

import anyio
from anyio.abc import Process

PROCESS_TAG_VARIABLE = "OCCUBENCH_PROCESS_TAG"
"""Holds a random tag per run of a program; its processes are found by it."""
STOP_GRACE = 2.0
"""Seconds between SIGTERM and SIGKILL; also the most each later step of a stop waits."""
ENVIRONMENT_STRING_BYTES = 128 * 1024
"""The most one ``NAME=value`` string of a started program's environment may take, its
final NUL included: Linux's limit on one string (32 pages of 4 KiB)."""

_PROC = Path("/proc")
_STARTTIME = 19  # /proc/PID/stat's field 22, counted from the state (field 3)
_POLL = 0.05
_READ_BYTES = 65536
_ACCESS_MODE = 0o3
_WRITE_MODES = {os.O_WRONLY, os.O_RDWR}


def fits_in_environment(name: str, value: str) -> bool:
    """Whether ``name=value`` can be a variable of a program this process starts.

    Not when the value holds a NUL byte (it would end the string), cannot be encoded, or
    makes a string of more than ``ENVIRONMENT_STRING_BYTES``; nor when this process's
    environment with it would take more than half of the system's ``ARG_MAX`` (what
    arguments and environment of a started program may take together; the other half is
    left to the command and the variables added with it).
    """
    if "\0" in value:
        return False
    try:
        size = len(os.fsencode(f"{name}={value}")) + 1
    except UnicodeEncodeError:
        return False
    inherited = sum(len(k) + len(v) + 2 for k, v in os.environb.items())
    return size <= ENVIRONMENT_STRING_BYTES and inherited + size <= os.sysconf("SC_ARG_MAX") // 2


class OutputPipe:
    """A pipe for one output stream of a program: its write end given, its read end read.

    The read end is non-blocking and read through the event loop (``drain``), so reading
    can be stopped at any time, whoever still holds the write end.
    """

    def __init__(self) -> None:
        self.read_end, self.write_end = os.pipe()
        os.set_blocking(self.read_end, False)
        self.inode = os.fstat(self.read_end).st_ino
        self.ended = anyio.Event()
        """Set once the stream ended (every writer closed it) or reading stopped."""
        self._write_open = True

    def given(self) -> None:
        """The program was started with the write end: close ours."""
        if self._write_open:
            os.close(self.write_end)
            self._write_open = False

    async def drain(self, sink: Callable[[bytes], None]) -> None:
        """Pass what arrives to ``sink`` until the stream ends (or this is cancelled)."""
        try:
            while True:
                await anyio.wait_readable(self.read_end)
                try:
                    chunk = os.read(self.read_end, _READ_BYTES)
                except BlockingIOError:
                    continue
                if not chunk:
                    return
                sink(chunk)
        finally:
            self.ended.set()

    def __enter__(self) -> OutputPipe:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.given()
        os.close(self.read_end)


class ProgramProcesses:
    """Every process of one run of an agent program (see the module docstring).

    Made by ``start_program``, which gives the program ``stdout`` and ``stderr``.
    """

    def __init__(self, process: Process, tag: str, stdout: OutputPipe, stderr: OutputPipe) -> None:
        self.process = process
        self.stdout = stdout
        self.stderr = stderr
        self.leader = process.pid
        self._tag = f"{PROCESS_TAG_VARIABLE}={tag}".encode()
        self._pipes = {f"pipe:[{p.inode}]" for p in (stdout, stderr)}
        self._since = 0
        with contextlib.suppress(OSError, ValueError, IndexError):
            self._since = _stat(self.leader).start
        self.stopped = False
        """Whether ``stop`` ran to its end."""

    def find(self) -> list[int]:
        """The pids of the program's processes still running (zombies are not).

        Only processes started no earlier than the program are looked at.
        """
        if not _PROC.is_dir():
            return []
        own = os.getpid()
        found = []
        for entry in os.scandir(_PROC):
            if entry.name.isdigit() and int(entry.name) != own:
                with contextlib.suppress(OSError, ValueError, IndexError):
                    if self._belongs(int(entry.name)):
                        found.append(int(entry.name))
        return found

    def _belongs(self, pid: int) -> bool:
        stat = _stat(pid)
        if stat.ended or stat.start < self._since:
            return False
        if self.leader in (stat.group, stat.session):
            return True
        with contextlib.suppress(OSError):
            if self._tag in (_PROC / str(pid) / "environ").read_bytes().split(b"\0"):
                return True
        return self._writes_to_pipes(pid)

    def _writes_to_pipes(self, pid: int) -> bool:
        fds = _PROC / str(pid) / "fd"
        for fd in os.listdir(fds):
            with contextlib.suppress(OSError):
                if os.readlink(fds / fd) in self._pipes and _open_for_writing(pid, fd):
                    return True
        return False

    async def _signal(self, sig: signal.Signals) -> list[int]:
        """Send ``sig`` to the program's group and every process found; those found."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.leader, sig)
        found = await anyio.to_thread.run_sync(self.find)
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
        return found

    async def stop(self) -> None:
        """SIGTERM to every process of the program, SIGKILL to those left; reap the program.

        Each of the three steps (the grace after SIGTERM, the SIGKILL rounds, the wait for
        the program's exit status) takes at most ``STOP_GRACE`` seconds.
        """
        found = await self._signal(signal.SIGTERM)
        with anyio.move_on_after(STOP_GRACE):
            while found or self.process.returncode is None:
                await anyio.sleep(_POLL)
                found = await anyio.to_thread.run_sync(self.find)
        with anyio.move_on_after(STOP_GRACE):
            while await self._signal(signal.SIGKILL):  # what they started meanwhile too
                await anyio.sleep(_POLL)
        with anyio.move_on_after(STOP_GRACE):
            await self.process.wait()
        self.stopped = True

    async def output_ended(self) -> None:
        """Wait for both output streams to end, at most ``STOP_GRACE`` seconds."""
        with anyio.move_on_after(STOP_GRACE):
            await self.stdout.ended.wait()
            await self.stderr.ended.wait()


@contextlib.asynccontextmanager
async def start_program(
    argv: Sequence[str], environment: Mapping[str, str]
) -> AsyncIterator[ProgramProcesses]:
    """Start a program in a session of its own, its output on our pipes; stop it all after.

    ``environment`` is the program's whole environment; ``PROCESS_TAG_VARIABLE`` is added.
    Its standard input is empty. Leaving the block (an error and a cancellation included)
    stops what ``ProgramProcesses.stop`` had not.
    """
    tag = secrets.token_hex(16)
    with OutputPipe() as stdout, OutputPipe() as stderr:
        process = await anyio.open_process(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=stdout.write_end,
            stderr=stderr.write_end,
            env={**environment, PROCESS_TAG_VARIABLE: tag},
            start_new_session=True,
        )
        stdout.given()
        stderr.given()
        program = ProgramProcesses(process, tag, stdout, stderr)
        try:
            yield program
        finally:
            if not program.stopped:
                with anyio.CancelScope(shield=True):
                    await program.stop()


class _Stat(NamedTuple):
    ended: bool
    group: int
    session: int
    start: int


def _stat(pid: int) -> _Stat:
    """What ``/proc/PID/stat`` says of a process (the command name, in parentheses, skipped)."""
    stat = (_PROC / str(pid) / "stat").read_bytes()
    fields = stat[stat.rindex(b")") + 2 :].split()
    return _Stat(
        ended=fields[0] in (b"Z", b"X"),
        group=int(fields[2]),
        session=int(fields[3]),
        start=int(fields[_STARTTIME]),
    )


def _open_for_writing(pid: int, fd: str) -> bool:
    """Whether the process's descriptor ``fd`` is open for writing (``fdinfo``'s flags)."""
    for line in (_PROC / str(pid) / "fdinfo" / fd).read_text().splitlines():
        if line.startswith("flags:"):
            return (int(line.split()[1], 8) & _ACCESS_MODE) in _WRITE_MODES
    return False
