"""Throughput, harness CPU, token economy and response cache of an occubench run.

The harness is the real thing: ``occubench run`` in its own process (and its shard
processes), through the ``occubench-openai`` provider (``--provider openai-api``:
Inspect's, through the OpenAI SDK) against a
scripted OpenAI-compatible server in another process on 127.0.0.1 (``serve.py``: the
package's scripted behaviours on uvicorn, latency counted from each request's
arrival). The agent is ``steps-agent`` (exactly
``--tool-calls`` calls per task, cycling the env's tools), the simulator
``echo-simulator``, the judge ``scripted-judge``. Tasks are the public sample's,
repeated to ``--tasks`` into a temporary dataset in the release layout; each copy has
its own env config (a one-line header in the simulator's system prompt) and a numbered
instruction, so no two tasks share a prompt (or a response-cache entry).

The critical-path bound is the longest chain of sequential calls of one task times the
per-call latency: agent turns + simulator calls + one judge round (the k votes run in
parallel). Wall time is the harness from launch to exit, startup included. Harness CPU
is the CPU time of the harness and its shards (not the server's); "steady" is the part
between the first and the last model call (the process tree's CPU sampled every 0.1 s).

The floor: the server records every request (``serve.py --record``), and after the run
``bare_client.py`` replays them, chain by chain, with nothing but the HTTP client;
occubench's ratio to it (CPU per call, wall) is printed (``--no-floor`` skips it).

    python benchmarks/throughput.py --tasks 100 --latency-ms 1000
    python benchmarks/throughput.py --tasks 100 --latency-ms 200
    python benchmarks/throughput.py --tasks 100 --latency-ms 0 --profile   # CPU per call
    python benchmarks/throughput.py --tasks 20 --cache-rerun               # cached re-run
    python benchmarks/throughput.py --tasks 100 --latency-ms 200 --world   # world: 100% hits

With ``--world``, after the plain run the same run records into a new world, then runs
again replaying it (``--world-mode replay``: every observation from the world, no
simulator request); the replay's wall time is compared with the plain run's.

Options after ``--`` go to ``occubench run`` (e.g. ``-- --workers 1``). The machine
should be otherwise idle: the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.event import ModelEvent
from inspect_ai.log import list_eval_logs, read_eval_log_samples

from occubench.analysis import PrefixShare, prefix_share
from occubench.dataset import load_dataset, write_dataset

SAMPLE_DIR = Path(
    os.environ.get(
        "OCCUBENCH_SAMPLE", Path(__file__).resolve().parents[2] / "shared" / "occubench-sample"
    )
)
SERVICE = "local"
API_KEY = "bench-5c0f2e9a7d1b4836"
"""The key the benchmarks give their server's models: shaped like a real key, which no
prompt holds (the word "benchmark" is in the judge's prompt: every sample's log was
redacted with it, which real runs do not pay for)."""
MODELS = {"agent": "steps-agent", "simulator": "echo-simulator", "verifier": "scripted-judge"}
ROLES = tuple(MODELS)
PROVIDER = "openai-api"
"""Provider of the three models: Inspect's ``openai-api``, as users name an endpoint (on
occubench's fast path by default; ``-- --no-fast-path`` for Inspect's own path through the
OpenAI SDK; ``occubench-openai`` for the lean provider by name)."""
BIN = Path(sys.executable).parent


def make_dataset(root: Path, tasks: int, tool_calls: int, source: Path = SAMPLE_DIR) -> Path:
    """The source's tasks (default: the sample's) repeated to ``tasks``, each with its own
    env copy, in ``root``."""
    sample = load_dataset(source)
    records, envs = [], []
    for i in range(tasks):
        base = sample.tasks[i % len(sample.tasks)]
        env = sample.env(base)
        name = f"{env.environment_name}_copy{i}"
        envs.append(
            env.model_copy(
                update={
                    "environment_name": name,
                    "world_model_system_prompt": f"Benchmark instance {i}.\n"
                    + env.world_model_system_prompt,
                }
            )
        )
        records.append(
            base.model_copy(
                update={
                    "task_id": i + 1,
                    "env_name": name,
                    "expected_tool_calls": tool_calls,
                    "agent_instruction": f"{base.agent_instruction}\n(Benchmark instance {i}.) "
                    f"[steps={tool_calls}]",
                }
            )
        )
    return write_dataset(root, records, envs, sample.scenarios.values())


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """The scripted OpenAI-compatible server, in its own process."""

    def __init__(self, latency: float, record: Path | None = None, *limits: str) -> None:
        self.port = free_port()
        self.record = record
        self.proc = subprocess.Popen(
            [
                sys.executable,
                str(Path(__file__).with_name("serve.py")),
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--latency",
                str(latency),
                *(["--record", str(record)] if record else []),
                *limits,
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        if "serving" not in line:
            self.stop()
            raise RuntimeError(f"the server did not start: {line!r}")

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stats(self) -> dict[str, Any]:
        """``GET /stats``: requests and prompt tokens per model, peak in-flight requests."""
        with urllib.request.urlopen(f"{self.base_url}/stats", timeout=10) as r:
            return json.loads(r.read())

    def reset(self) -> None:
        """Start the counts and the timeline again (before another harness's run)."""
        request = urllib.request.Request(f"{self.base_url}/stats/reset", data=b"", method="POST")
        with urllib.request.urlopen(request, timeout=10):
            pass

    def cpu_seconds(self) -> float:
        """CPU time the server process has used so far (Linux /proc)."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@contextmanager
def server(latency: float, record: Path | None = None, *limits: str) -> Iterator[Server]:
    """The benchmark server (``serve.py``); ``limits``: its ``--rpm``/``--tpm`` options."""
    s = Server(latency, record, *limits)
    try:
        yield s
    finally:
        s.stop()


def process_tree(root: int) -> tuple[float, list[int]]:
    """CPU seconds of a process and all its descendants so far, and those descendants.

    A live process counts its own time; one that ended counts in its parent's time of
    waited-for children, so each second is counted once (Linux /proc).
    """
    parent: dict[int, int] = {}
    cpu: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        pid = int(stat.parent.name)
        parent[pid] = int(fields[1])
        cpu[pid] = sum(int(f) for f in fields[11:15]) / tick
    total, stack, seen = 0.0, [root], []
    children: dict[int, list[int]] = {}
    for pid, ppid in parent.items():
        children.setdefault(ppid, []).append(pid)
    while stack:
        pid = stack.pop()
        seen.append(pid)
        total += cpu.get(pid, 0.0)
        stack += children.get(pid, [])
    return total, seen[1:]


def tree_cpu(root: int) -> float:
    """CPU seconds of a process and all its descendants so far (``process_tree``)."""
    return process_tree(root)[0]


class CpuSampler(threading.Thread):
    """Samples the CPU of a process tree every 0.1 s, to split startup from steady CPU.

    It also notes when each process the harness started (its shard workers) was first
    and last seen.
    """

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.samples: list[tuple[float, float]] = []
        self.workers: dict[int, list[float]] = {}
        """Descendant pid -> [first seen, last seen] (wall-clock seconds)."""
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(0.1):
            cpu, descendants = process_tree(self.pid)
            now = time.time()
            self.samples.append((now, cpu))
            for pid in descendants:  # spawned or forked, every process it started
                self.workers.setdefault(pid, [now, now])[1] = now

    def at(self, when: float) -> float:
        """CPU seconds of the tree at time ``when`` (linear between samples)."""
        before = [(t, c) for t, c in self.samples if t <= when] or self.samples[:1]
        after = [(t, c) for t, c in self.samples if t >= when] or self.samples[-1:]
        (t0, c0), (t1, c1) = before[-1], after[0]
        return c0 if t1 <= t0 else c0 + (c1 - c0) * (when - t0) / (t1 - t0)


@dataclass
class Run:
    """One harness run: its times and CPU, then what its log says."""

    wall: float
    cpu: float
    started: float
    ended: float
    samples: int = 0
    calls: Counter[str] = field(default_factory=Counter)
    input_tokens: Counter[str] = field(default_factory=Counter)
    chain: int = 0
    first_call: float = math.inf
    last_call: float = 0.0
    prefix: PrefixShare = field(default_factory=PrefixShare)
    peak_rss_mb: float = 0.0
    sampler: CpuSampler | None = None
    lines: list[tuple[float, str]] = field(default_factory=list)
    """The command's output lines, each with the time it was read."""

    def steady_cpu(self) -> float:
        """CPU seconds of the harness between its first and its last model call."""
        if self.sampler is None or not self.sampler.samples or self.last_call <= self.first_call:
            return math.nan
        return self.sampler.at(self.last_call) - self.sampler.at(self.first_call)


def harness(
    args: list[str],
    env: dict[str, str],
    timeout: float,
    profile: Path | None = None,
    program: Path = BIN / "occubench",
) -> Run:
    """Run ``PROGRAM run ARGS`` as a child process (bounded by ``timeout``)."""
    command = [str(program), "run", *args]
    if profile is not None:
        spy = shutil.which("py-spy", path=str(BIN)) or shutil.which("py-spy")
        if spy is None:
            raise RuntimeError("--profile needs py-spy (pip install py-spy)")
        command = [
            spy,
            "record",
            "--subprocesses",
            "--rate",
            "200",
            "--format",
            "raw",
            "--output",
            str(profile),
            "--",
            *command,
        ]
    started, start = time.time(), time.perf_counter()
    lines: list[tuple[float, str]] = []
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    reader = threading.Thread(target=_read_lines, args=(proc, lines), daemon=True)
    reader.start()
    sampler = CpuSampler(proc.pid)
    sampler.start()
    try:
        _, status, usage = _wait4(proc.pid, timeout)
    except TimeoutError:
        proc.kill()
        proc.wait()
        raise
    finally:
        sampler.stopped.set()
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    reader.join(timeout=10)
    if proc.returncode != 0:
        sys.stderr.write("\n".join(line for _, line in lines)[-8000:])
        raise RuntimeError(f"occubench run exited with {proc.returncode}")
    return Run(
        wall=wall,
        cpu=usage.ru_utime + usage.ru_stime,
        started=started,
        ended=started + wall,
        peak_rss_mb=usage.ru_maxrss / 1024,
        sampler=sampler,
        lines=lines,
    )


def _read_lines(proc: subprocess.Popen[bytes], lines: list[tuple[float, str]]) -> None:
    """Read the command's output, noting when each line came."""
    assert proc.stdout is not None
    for raw in proc.stdout:
        lines.append((time.time(), raw.decode(errors="replace").rstrip()))


def _wait4(pid: int, timeout: float) -> tuple[int, int, resource.struct_rusage]:
    """``os.wait4`` with a deadline: the child's status and the rusage of its process tree.

    The rusage covers the child and every descendant it waited for (its shards): CPU
    time summed, ``ru_maxrss`` the largest single process (KiB on Linux).
    """
    deadline = time.monotonic() + timeout
    while True:
        waited, status, usage = os.wait4(pid, os.WNOHANG)
        if waited:
            return waited, status, usage
        if time.monotonic() > deadline:
            raise TimeoutError(f"occubench run took more than {timeout:.0f} s")
        time.sleep(0.05)


def analyse(run: Run, log_dir: Path, votes: int) -> Run:
    """Fill in calls, tokens, the longest chain and simulator prefix reuse from the log."""
    for info in list_eval_logs(str(log_dir), recursive=True):
        for sample in read_eval_log_samples(info.name, resolve_attachments=True):
            run.samples += 1
            live: Counter[str] = Counter()
            for event in sample.events:
                if not isinstance(event, ModelEvent):
                    continue
                role = event.role or "agent"
                run.calls[role] += 1
                run.first_call = min(run.first_call, event.timestamp.timestamp())
                run.last_call = max(run.last_call, (event.completed or event.timestamp).timestamp())
                if event.cache != "read":  # a cache hit sends nothing
                    live[role] += 1
                    if event.output.usage is not None:
                        run.input_tokens[role] += event.output.usage.input_tokens
            judge_rounds = math.ceil(live["verifier"] / votes)
            run.chain = max(run.chain, live["agent"] + live["simulator"] + judge_rounds)
            run.prefix = run.prefix + prefix_share(sample.events)
    return run


IDLE_FRAMES = ("_worker (concurrent/futures/thread.py:81)",)  # a pool thread waiting for work
IDLE_CALLS = ("Condition.wait (", "Queue.get (", "Event.wait (")  # a thread blocked on a lock
HTTP = "HTTP stack (httpx, httpcore, h11, anyio streams)"
OWNERS = {
    "occubench": "occubench",
    "inspect_ai": "inspect_ai",
    "openai": "openai SDK",
    **{name: HTTP for name in ("httpx", "httpx2", "httpcore", "httpcore2", "h11")},
}
EVENT_LOOP = "AsyncIOBackend.run (anyio"


def owner_of(frame: str) -> str | None:
    """The tracked package a py-spy frame (``func (pkg/module.py:line)``) belongs to."""
    if frame.startswith(EVENT_LOOP):  # the event loop Inspect runs in: Inspect's engine
        return "inspect_ai"
    path = frame.rpartition(" (")[2]
    if path.startswith("anyio/"):
        return HTTP
    return OWNERS.get(path.split("/", 1)[0]) if "/" in path else None


def share_by_owner(raw: Path) -> tuple[int, Counter[str], Counter[str]]:
    """Busy samples by owner: the innermost frame of occubench, Inspect, openai or HTTP.

    Library and stdlib frames (pydantic, json, copy, asyncio, ...) count for the
    tracked package that called them; pool threads waiting for work are left out.
    Also returns the hottest innermost owned frames.
    """
    owners: Counter[str] = Counter()
    hot: Counter[str] = Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = [f for f in stack.split(";") if f.strip()]
        # with --subprocesses the first frame names the process: skip it
        frames = [f for f in frames if not f.startswith("process ")]
        if not frames or frames[-1] in IDLE_FRAMES or frames[-1].startswith(IDLE_CALLS):
            continue
        n = int(count)
        total += n
        owned = next(((o, f) for f in reversed(frames) if (o := owner_of(f))), None)
        owner, frame = owned if owned else ("other (interpreter, stdlib)", frames[-1])
        owners[owner] += n
        hot[f"{owner}: {frame}"] += n
    return total, owners, hot


def run_args(dataset: Path, votes: int, *extra: str, provider: str = PROVIDER) -> list[str]:
    """Arguments of ``occubench run`` for the benchmark's dataset and server models."""
    return [
        "--dataset",
        str(dataset),
        "--votes",
        str(votes),
        "--display",
        "none",
        "--agent-model",
        f"{provider}/{SERVICE}/{MODELS['agent']}",
        "--simulator-model",
        f"{provider}/{SERVICE}/{MODELS['simulator']}",
        "--verifier-model",
        f"{provider}/{SERVICE}/{MODELS['verifier']}",
        *extra,
    ]


@dataclass
class Floor:
    """The bare client's replay of a run's requests (``bare_client.py``)."""

    calls: int
    cpu: float
    cpu_steady: float
    wall: float
    chain: int
    span: float


def bare_client(srv: Server, count: int, skip: int = 0) -> Floor:
    """Replay the first ``count`` requests the server recorded (the first ``skip`` left out)."""
    assert srv.record is not None
    command = [
        sys.executable,
        str(Path(__file__).with_name("bare_client.py")),
        str(srv.record),
        "--base-url",
        srv.base_url,
        "--api-key",
        API_KEY,
        "--count",
        str(count),
        "--skip",
        str(skip),
        "--judge",
        MODELS["verifier"],
    ]
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read() if proc.stdout else ""
    _, status, usage = _wait4(proc.pid, 3600)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError("the bare client failed")
    result = json.loads(out)
    return Floor(
        calls=result["calls"],
        cpu=usage.ru_utime + usage.ru_stime,
        cpu_steady=result["cpu_steady"],
        wall=wall,
        chain=result["chain"],
        span=result["last_call"] - result["first_call"],
    )


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--tool-calls", type=int, default=16)
    parser.add_argument("--latency-ms", type=float, default=1000)
    parser.add_argument("--votes", type=int, default=3)
    parser.add_argument("--env-mode", default="E0")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="then a second run sampled by py-spy: where the harness CPU goes",
    )
    parser.add_argument(
        "--cache-rerun",
        action="store_true",
        help="run with --cache, then the same run again into a new log folder",
    )
    parser.add_argument(
        "--world",
        action="store_true",
        help="then record the run into a world and run it again replaying the world",
    )
    parser.add_argument(
        "--provider",
        default=PROVIDER,
        help=f"model provider: {PROVIDER} (default) or openai-api (Inspect's, via the SDK)",
    )
    parser.add_argument(
        "--no-floor", action="store_true", help="skip the bare client's replay of the requests"
    )
    parser.add_argument(
        "--compare",
        type=Path,
        help="another occubench command (e.g. a checkout's .venv/bin/occubench) run first, "
        "with the same arguments on the same server: both timelines and a side-by-side table",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("extra", nargs="*", help="options for occubench run (after --)")
    opts = parser.parse_args()
    latency = opts.latency_ms / 1000
    work = Path(tempfile.mkdtemp(prefix="occubench-bench-"))
    print(f"load average before: {load_average()} ({os.cpu_count()} cores)")
    try:
        dataset = make_dataset(work / "dataset", opts.tasks, opts.tool_calls)
        with server(latency, work / "requests.jsonl") as srv:
            env = {
                **os.environ,
                "LOCAL_BASE_URL": srv.base_url,
                "LOCAL_API_KEY": API_KEY,
                "INSPECT_CACHE_DIR": str(work / "cache"),
            }
            common = run_args(
                dataset,
                opts.votes,
                "--env-mode",
                opts.env_mode,
                *(["--cache"] if opts.cache_rerun else []),
                *opts.extra,
                provider=opts.provider,
            )
            calls_per_task = 2 * opts.tool_calls + 1 + opts.votes
            timeout = 600 + 20 * opts.tasks * calls_per_task * max(latency, 0.01)
            side: list[tuple[str, Run, dict[str, Any]]] = []
            if opts.compare:  # the other harness first, on the same server and dataset
                print(f"--- before: {opts.compare} (load {load_average()})")
                before = run_once(opts, latency, srv, env, common, timeout, work, opts.compare)
                side.append(("before", *before))
                print(f"--- after: {BIN / 'occubench'} (load {load_average()})")
            run, stats = run_once(opts, latency, srv, env, common, timeout, work)
            side.append(("after", run, stats))
            if len(side) > 1:
                report_side_by_side(side, latency)
            total = sum(stats["requests"].values())
            if not opts.no_floor:
                floor_at = total if not opts.compare else side[0][2]["total_requests"] + total
                report_floor(run, bare_client(srv, floor_at, skip=floor_at - total), total, latency)
                stats = srv.stats()  # the bare client's requests are not the re-run's
            if opts.cache_rerun:
                again = harness([*common, "--log-dir", str(work / "logs-2")], env, timeout)
                report_rerun(stats, srv.stats(), again)
            if opts.world:
                world = ["--world", str(work / "world")]
                harness([*common, *world, "--log-dir", str(work / "logs-w0")], env, timeout)
                before = srv.stats()
                replay = [*world, "--world-mode", "replay", "--log-dir", str(work / "logs-w1")]
                replayed = harness([*common, *replay], env, timeout)
                report_world(run, replayed, before, srv.stats())
            if opts.profile:  # a second run under py-spy: the CPU figure above stays clean
                raw = work / "harness.txt"
                harness([*common, "--log-dir", str(work / "logs-p")], env, timeout, raw)
                report_profile(raw, run.cpu, total)
    finally:
        print(f"load average after: {load_average()}")
        if opts.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def run_once(
    opts: argparse.Namespace,
    latency: float,
    srv: Server,
    env: dict[str, str],
    common: list[str],
    timeout: float,
    work: Path,
    program: Path = BIN / "occubench",
) -> tuple[Run, dict[str, Any]]:
    """One harness run from a fresh server count: reported, with the server's stats."""
    srv.reset()
    cpu_before = srv.cpu_seconds()
    logs = Path(tempfile.mkdtemp(prefix="logs-", dir=work))
    run = harness([*common, "--log-dir", str(logs)], env, timeout, program=program)
    stats = srv.stats()
    stats["server_cpu"] = srv.cpu_seconds() - cpu_before
    stats["total_requests"] = sum(stats["requests"].values())
    report(opts, latency, analyse(run, logs, opts.votes), stats, stats["server_cpu"])
    return run, stats


def report_side_by_side(side: list[tuple[str, Run, dict[str, Any]]], latency: float) -> None:
    """The runs next to each other: wall/critical, the timeline's parts, CPU per call."""
    rows: list[tuple[str, list[str]]] = []
    for name, run, stats in side:
        total = max(stats["total_requests"], 1)
        bound = run.chain * latency
        first, last = stats.get("first_arrival") or math.nan, stats.get("last_done") or math.nan
        rows.append(
            (
                name,
                [
                    f"{run.wall:.1f}",
                    f"{run.wall / bound:.2f}" if bound else "-",
                    f"{first - run.started:.2f}",
                    f"{last - first:.1f}",
                    f"{run.ended - last:.2f}",
                    f"{1000 * run.cpu / total:.2f}",
                    f"{1000 * run.steady_cpu() / total:.2f}",
                    f"{run.peak_rss_mb:.0f}",
                ],
            )
        )
    heads = [
        "wall (s)",
        "wall/critical",
        "to first request (s)",
        "requests' span (s)",
        "after last answer (s)",
        "CPU/call (ms)",
        "steady CPU/call (ms)",
        "peak RSS (MB)",
    ]
    print("| run | " + " | ".join(heads) + " |")
    print("|---" * (len(heads) + 1) + "|")
    for name, cells in rows:
        print(f"| {name} | " + " | ".join(cells) + " |")


def report(
    opts: argparse.Namespace, latency: float, run: Run, stats: dict[str, Any], server_cpu: float
) -> None:
    requests = stats["requests"]
    total = sum(requests.values())
    n = max(run.samples, 1)
    print(
        f"{run.samples} tasks x {opts.tool_calls} tool calls, env {opts.env_mode}, "
        f"latency {opts.latency_ms:.0f} ms, {opts.votes} votes; "
        f"occubench run options: {' '.join(opts.extra) or '(defaults)'}"
    )
    print(
        "calls at the server: "
        + ", ".join(f"{r} {requests.get(MODELS[r], 0)}" for r in ROLES)
        + f" (total {total}); in the log: "
        + ", ".join(f"{r} {run.calls[r]}" for r in ROLES)
    )
    print(
        "prompt tokens per task: "
        + ", ".join(f"{r} {run.input_tokens[r] / n:,.0f}" for r in ROLES)
        + f" (server total: {sum(stats['prompt_tokens'].values()):,})"
    )
    print(f"max in-flight requests: {stats['max_in_flight']}")
    bound = run.chain * latency
    print(
        f"wall {run.wall:.1f} s, startup included: {run.first_call - run.started:.1f} s to the "
        f"first model call, {run.last_call - run.first_call:.1f} s of calls, "
        f"{run.ended - run.last_call:.1f} s after the last"
    )
    if bound:
        print(
            f"critical path {run.chain} calls x {latency:.3f} s = {bound:.1f} s; "
            f"ratio wall/bound {run.wall / bound:.2f} "
            f"(calls span / bound {(run.last_call - run.first_call) / bound:.2f})"
        )
    report_timeline(run, stats, bound)
    cores = os.cpu_count() or 1
    steady = run.steady_cpu()
    print(
        f"harness CPU {run.cpu:.1f} s = {1000 * run.cpu / max(total, 1):.2f} ms per LLM call; "
        f"steady {1000 * steady / max(total, 1):.2f} ms per call ({steady:.1f} s between the "
        f"first and the last call, {run.cpu - steady:.1f} s before and after); "
        f"server CPU {server_cpu:.1f} s; CPU floor on {cores} cores "
        f"{(run.cpu + server_cpu) / cores:.1f} s; peak RSS {run.peak_rss_mb:.0f} MB"
    )
    p = run.prefix
    print(
        f"simulator prefix share {100 * p.share:.1f}% ({p.exact_pairs}/{p.pairs} consecutive "
        f"prompts are exact prefixes of the next)"
    )


def timeline(run: Run, stats: dict[str, Any]) -> list[tuple[float, str]]:
    """The run's moments from outside: the command's output, its shards, the server's view.

    Times are wall-clock seconds, sorted; the server's are request arrivals and answers,
    the shards' are when the process tree sampler (every 0.1 s) first and last saw them.
    """
    marks = [(run.started, "launch")]
    if stats.get("preflight"):
        first, last = stats["preflight"]
        marks += [(first, "preflight: first request"), (last, "preflight: last answer")]
    logs = next((t for t, line in run.lines if line.startswith("Logs:")), None)
    if logs is not None:
        marks.append((logs, "'Logs:' printed (the shards are given their tasks)"))
    workers = sorted(run.sampler.workers.values()) if run.sampler else []
    if workers:
        marks.append((workers[0][0], f"first of {len(workers)} shard processes seen"))
        marks.append((max(w[1] for w in workers), "last shard process gone"))
    if stats.get("first_arrival"):
        marks.append((stats["first_arrival"], "first request of the run (server)"))
        marks.append((stats["last_done"], "last answer of the run (server)"))
    marks.append((run.ended, "exit"))
    return sorted(marks)


def report_timeline(run: Run, stats: dict[str, Any], bound: float) -> None:
    """Print the timeline, and what lies outside the calls' span."""
    marks = timeline(run, stats)
    print("timeline (s from launch, +s since the previous mark):")
    previous = run.started
    for when, what in marks:
        print(f"  {when - run.started:7.2f}  +{when - previous:6.2f}  {what}")
        previous = when
    first, last = stats.get("first_arrival"), stats.get("last_done")
    if first and last:
        span = last - first
        print(
            f"before the first request {first - run.started:.2f} s, requests' span "
            f"{span:.2f} s"
            + (f" ({span / bound:.2f} x the bound)" if bound else "")
            + f", after the last answer {run.ended - last:.2f} s"
        )


def report_floor(run: Run, floor: Floor, total: int, latency: float) -> None:
    """The bare client's replay next to the harness run: the floor and occubench's ratio to it."""
    per_call = 1000 * floor.cpu_steady / max(floor.calls, 1)
    steady = 1000 * run.steady_cpu() / max(total, 1)
    print(
        f"bare client, the same {floor.calls} requests in {floor.chain}-call chains: CPU "
        f"{per_call:.2f} ms per call steady ({1000 * floor.cpu / max(floor.calls, 1):.2f} with "
        f"its start), wall {floor.wall:.1f} s"
        + (f", wall/bound {floor.wall / (floor.chain * latency):.2f}" if latency else "")
    )
    print(
        f"occubench / bare client: CPU per call {steady / per_call:.1f}x steady, "
        f"{(run.cpu / max(total, 1)) / (floor.cpu / max(floor.calls, 1)):.1f}x with startup; "
        f"wall {run.wall / floor.wall:.2f}x"
    )


def report_profile(raw: Path, cpu: float, calls: int) -> None:
    total, owners, hot = share_by_owner(raw)
    print(
        f"where the harness CPU goes (py-spy, {total} busy samples, startup included; "
        "ms/call scale the clean run's CPU by the shares):"
    )
    for name, n in owners.most_common():
        per_call = 1000 * cpu * n / total / max(calls, 1)
        print(f"  {name:50s} {100 * n / total:5.1f}%  {per_call:.2f} ms/call")
    print("  hottest innermost frames of those packages:")
    for name, n in hot.most_common(12):
        print(f"    {100 * n / total:5.1f}%  {name}")


def report_rerun(first: dict[str, Any], second: dict[str, Any], again: Run) -> None:
    made = {
        r: second["requests"].get(MODELS[r], 0) - first["requests"].get(MODELS[r], 0) for r in ROLES
    }
    print(
        f"identical re-run with --cache into a new log folder: wall {again.wall:.1f} s; "
        "requests it made at the server: " + ", ".join(f"{r} {made[r]}" for r in ROLES)
    )


def report_world(plain: Run, replayed: Run, before: dict[str, Any], after: dict[str, Any]) -> None:
    """The run replayed from a world (every observation a hit) next to the plain run."""
    made = {
        r: after["requests"].get(MODELS[r], 0) - before["requests"].get(MODELS[r], 0) for r in ROLES
    }
    print(
        f"replayed from a world (100% hits): wall {replayed.wall:.1f} s vs {plain.wall:.1f} s "
        f"without a world (ratio {replayed.wall / plain.wall:.2f}); harness CPU "
        f"{replayed.cpu:.1f} s vs {plain.cpu:.1f} s; requests it made at the server: "
        + ", ".join(f"{r} {made[r]}" for r in ROLES)
    )


if __name__ == "__main__":
    main()
