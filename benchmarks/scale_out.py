"""Scale-out: wall time of one run in 1 vs N shard processes, against the critical path.

Reuses the throughput benchmark's pieces (``throughput.py`` beside this file): its
dataset (the sample's tasks repeated to ``--tasks``, ``--tool-calls`` calls each by the
``steps-agent``), its scripted OpenAI-compatible server in its own process with a fixed
latency per request, and its harness (``occubench run`` as a child process, wall and
CPU time of the whole process tree). For each latency, the same run goes once per
``--workers`` value; the critical path is the longest chain of sequential calls of one
task times the latency (from the log). One table at the end. The server shares the
machine's cores with the harness: its CPU time is in the table too.

    python benchmarks/scale_out.py         # 100 tasks x 16 calls, 200 and 1000 ms, 1 and 2 workers
    python benchmarks/scale_out.py --ray   # also: the sample under Ray local mode vs local
    python benchmarks/scale_out.py --latency-ms 200 --workers 1 2 4 --repeat 2
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from throughput import (
    API_KEY,
    BIN,
    SAMPLE_DIR,
    SERVICE,
    analyse,
    harness,
    make_dataset,
    run_args,
    server,
)

from occubench.results import read_runs
from occubench.scale import expand_sweep, load_sweeps, sweep_runs


def load() -> str:
    """The machine's 1-minute load average (other processes skew wall times)."""
    return f"{os.getloadavg()[0]:.1f}"


def scale_table(opts: argparse.Namespace, work: Path) -> None:
    dataset = make_dataset(work / "dataset", opts.tasks, opts.tool_calls)
    rows = []
    for latency_ms in opts.latency_ms:
        latency = latency_ms / 1000
        with server(latency) as srv:
            env = {
                **os.environ,
                f"{SERVICE.upper()}_BASE_URL": srv.base_url,
                f"{SERVICE.upper()}_API_KEY": API_KEY,
            }
            common = run_args(dataset, opts.votes)
            timeout = 600 + 20 * opts.tasks * (2 * opts.tool_calls + 2) * max(latency, 0.01)
            for attempt in range(opts.repeat):
                for workers in opts.workers:
                    logs = work / f"logs-{latency_ms:g}-{workers}-{attempt}"
                    before, served = load(), srv.cpu_seconds()
                    args = [*common, "--workers", str(workers), "--log-dir", str(logs)]
                    run = analyse(harness(args, env, timeout), logs, opts.votes)
                    rows.append(
                        (
                            latency_ms,
                            workers,
                            run.wall,
                            run.cpu,
                            run.chain * latency,
                            srv.cpu_seconds() - served,
                            run.samples,
                            f"{before}/{load()}",
                        )
                    )
                    print(
                        f"latency {latency_ms:g} ms, workers {workers}: wall {run.wall:.1f} s, "
                        f"CPU {run.cpu:.1f} s, {run.samples} samples",
                        flush=True,
                    )
    print(
        f"\n{opts.tasks} tasks x {opts.tool_calls} tool calls, {opts.votes} votes, "
        f"{os.cpu_count()} CPUs; wall = `occubench run` from launch to exit (startup included)\n"
    )
    print(
        "| latency | workers | wall (s) | critical path (s) | wall / critical | "
        "harness CPU (s) | server CPU (s) | samples | load avg before/after |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for latency_ms, workers, wall, cpu, critical, served, samples, loads in rows:
        print(
            f"| {latency_ms:g} ms | {workers} | {wall:.1f} | {critical:.1f} | "
            f"{wall / critical:.2f} | {cpu:.1f} | {served:.1f} | {samples} | {loads} |"
        )


def ray_check(work: Path) -> None:
    """The public sample in 2 shards under Ray local mode vs the local executor."""
    models = [
        "--agent-model",
        "occubench/schema-agent",
        "--simulator-model",
        "occubench/echo-simulator",
        "--verifier-model",
        "occubench/scripted-judge",
    ]
    verdicts = {}
    for name, extra in (
        ("local, 1 worker", ["--workers", "1"]),
        ("local, 2 workers", ["--workers", "2"]),
        ("ray local mode, 2 shards", ["--workers", "2", "--executor", "ray"]),
    ):
        logs = work / name.replace(" ", "").replace(",", "-")
        done = subprocess.run(
            [
                str(BIN / "occubench"),
                "run",
                "--dataset",
                str(SAMPLE_DIR),
                *models,
                *extra,
                "--display",
                "none",
                "--log-dir",
                str(logs),
            ],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
            raise RuntimeError(f"{name}: occubench run exited with {done.returncode}")
        rows = read_runs([logs])
        verdicts[name] = {r.task_id: (r.passed, r.votes_yes, r.tool_calls) for r in rows}
        print(f"{name}: {len(rows)} samples, {sum(bool(r.passed) for r in rows)} passed")
    first = next(iter(verdicts.values()))
    print(
        "same verdicts, votes and tool calls per task: "
        + ", ".join(f"{name} {v == first}" for name, v in verdicts.items())
    )


def sweep_counts() -> None:
    sweeps = load_sweeps(["paper-*"])
    for sweep in sweeps:
        print(f"{sweep.name}: {len(expand_sweep(sweep))} runs")
    print(f"all paper sweeps together: {len(sweep_runs(sweeps))} distinct runs")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--tool-calls", type=int, default=16)
    parser.add_argument("--votes", type=int, default=3)
    parser.add_argument("--latency-ms", type=float, nargs="+", default=[200, 1000])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeat", type=int, default=1, help="runs of each configuration")
    parser.add_argument("--ray", action="store_true", help="also the Ray local-mode check")
    parser.add_argument("--no-table", action="store_true", help="skip the timing table")
    opts = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="occubench-scale-"))
    try:
        sweep_counts()
        if opts.ray:
            ray_check(work)
        if not opts.no_table:
            scale_table(opts, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
