"""Rate limits: finished samples per minute against an endpoint's per-minute limits.

The benchmark server (``serve.py``) enforces requests per minute (RPM) or tokens per
minute (TPM) as an endpoint does: a request over a limit is answered 429 at once with a
Retry-After (token buckets holding a second of each limit). A first run without limits
measures the run's calls and tokens per sample; each limit is then set so that its
bound is ``--samples-per-minute`` (RPM = that x calls per sample, TPM = that x tokens
per sample), and ``occubench run`` (the default command, on the fast path: adaptive
requests in flight) and ``occubench run --no-fast-path`` (Inspect's path: a fixed
``--max-connections``, Inspect's and the SDK's retries) run against it, side by side.

For each: finished samples per minute (from the run's first request to its last
answer) against the bound, the 429s the server sent, samples lost (ended in an error or
missing), and billed calls repeated (answers the server sent beyond the model calls
the logs hold: 0 means no paid call was made twice).

    python benchmarks/rate_limits.py --tasks 20 --tool-calls 8 --samples-per-minute 12
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from inspect_ai.event import ModelEvent
from inspect_ai.log import list_eval_logs, read_eval_log_samples
from throughput import API_KEY, Server, harness, load_average, make_dataset, run_args, server

PATHS = (("fast path (default)", []), ("--no-fast-path", ["--no-fast-path"]))
"""The two ways a run meets the limit: adaptive requests in flight, or Inspect's path."""


@dataclass
class Outcome:
    """One run against the limited server."""

    name: str
    samples: int = 0
    lost: int = 0
    calls: int = 0
    tokens: int = 0
    answered: int = 0
    rate_limited: int = 0
    span: float = 0.0
    wall: float = 0.0
    finished: bool = True
    reached: str = ""

    def per_minute(self) -> float:
        """Finished samples per minute, from the first request to the last answer."""
        return 60 * (self.samples - self.lost) / self.span if self.span else 0.0


def read_logs(log_dir: Path) -> tuple[int, int, int, int]:
    """Samples, samples ended in an error, model calls and their tokens, from the logs."""
    samples = errors = calls = tokens = 0
    for info in list_eval_logs(str(log_dir), recursive=True):
        for sample in read_eval_log_samples(info.name, all_samples_required=False):
            samples += 1
            errors += sample.error is not None
            for event in sample.events:
                if isinstance(event, ModelEvent) and event.cache != "read" and event.error is None:
                    calls += 1
                    if event.output.usage is not None:
                        tokens += event.output.usage.total_tokens
    return samples, errors, calls, tokens


def run(
    name: str,
    srv: Server,
    env: dict[str, str],
    args: list[str],
    log_dir: Path,
    tasks: int,
    timeout: float,
) -> Outcome:
    """One ``occubench run`` against the server, from a fresh count."""
    srv.reset()
    outcome = Outcome(name)
    try:
        done = harness([*args, "--log-dir", str(log_dir)], env, timeout)
        outcome.wall = done.wall
        outcome.reached = " | ".join(
            line.removeprefix("Requests in flight, ")
            for _, line in done.lines
            if line.startswith("Requests in flight")
        )
    except (TimeoutError, RuntimeError) as e:  # too slow, or samples left unfinished
        outcome.finished = False
        outcome.reached = str(e)
    stats = srv.stats()
    outcome.samples, errors, outcome.calls, outcome.tokens = read_logs(log_dir)
    outcome.lost = errors + (tasks - outcome.samples)
    outcome.answered = sum(stats.get("answered", {}).values()) - stats["preflight_answers"]
    outcome.rate_limited = sum(stats.get("rate_limited", {}).values())
    if stats.get("first_arrival") and stats.get("last_done"):
        outcome.span = stats["last_done"] - stats["first_arrival"]
    return outcome


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--tool-calls", type=int, default=8)
    parser.add_argument("--votes", type=int, default=3)
    parser.add_argument("--latency-ms", type=float, default=500)
    parser.add_argument("--samples-per-minute", type=float, default=12.0)
    parser.add_argument("--timeout", type=float, default=900, help="seconds per run at most")
    parser.add_argument("extra", nargs="*", help="options for occubench run (after --)")
    opts = parser.parse_args()
    latency = opts.latency_ms / 1000
    work = Path(tempfile.mkdtemp(prefix="occubench-limits-"))
    print(f"load average before: {load_average()} ({os.cpu_count()} cores)")
    try:
        dataset = make_dataset(work / "dataset", opts.tasks, opts.tool_calls)
        args = run_args(dataset, opts.votes, *opts.extra)
        # the summary's lines unwrapped: each model's "Requests in flight" on one line
        base_env = {**os.environ, "LOCAL_API_KEY": API_KEY, "COLUMNS": "400"}
        with server(latency) as srv:
            env = {**base_env, "LOCAL_BASE_URL": srv.base_url}
            free = run("no limit", srv, env, args, work / "free", opts.tasks, opts.timeout)
        calls, tokens = free.calls / free.samples, free.tokens / free.samples
        rate = opts.samples_per_minute
        print(
            f"{opts.tasks} tasks x {opts.tool_calls} tool calls, {opts.votes} votes, latency "
            f"{opts.latency_ms:.0f} ms: {calls:.1f} calls and {tokens:,.0f} tokens per sample "
            f"(no limit: {free.per_minute():.1f} samples/min)"
        )
        limits = {
            f"RPM {rate * calls:,.0f}": ["--rpm", f"{rate * calls:.0f}"],
            f"TPM {rate * tokens:,.0f}": ["--tpm", f"{rate * tokens:.0f}"],
        }
        rows: list[tuple[str, Outcome, str]] = []
        for label, limit in limits.items():
            with server(latency, None, *limit) as srv:
                env = {**base_env, "LOCAL_BASE_URL": srv.base_url}
                for name, more in PATHS:
                    outcome = run(
                        name,
                        srv,
                        env,
                        [*args, *more],
                        work / f"{len(rows)}",
                        opts.tasks,
                        opts.timeout,
                    )
                    rows.append((label, outcome, load_average()))
                    print(f"{label}, {name}: {outcome.reached}", flush=True)
        print(
            "\n| limit | path | bound (samples/min) | achieved | achieved / bound | 429s "
            "| lost | billed calls repeated | wall (s) | load |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|")
        for label, o, load in rows:
            achieved = o.per_minute()
            repeated = o.answered - o.calls
            print(
                f"| {label} | {o.name} | {rate:.1f} | {achieved:.1f} | {achieved / rate:.2f} "
                f"| {o.rate_limited} | {o.lost} | {repeated} | "
                f"{o.wall:.0f}{'' if o.finished else ' (unfinished)'} | {load} |"
            )
    finally:
        print(f"load average after: {load_average()}")
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
