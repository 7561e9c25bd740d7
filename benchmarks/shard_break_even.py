"""Shard break-even: from how many samples do two shard processes beat one on this machine?

A shard is a second Inspect process: it costs a process start (importing Inspect, the
SDK and ACP: seconds of CPU) and pays off once the harness is CPU-bound in one
process. This script runs ``occubench run`` (a child process, wall time from launch to
exit) on the built-in reference suite repeated to each size, ``--tool-calls`` calls per
task by the ``steps-agent``, once with ``--workers 1`` and once with ``--workers 2``,
and prints the ratio for each size, in two settings:

- offline: the scripted models in process (``occubench/...``, as in the Quick start);
- served: the same models through the benchmark's OpenAI-compatible server in its own
  process (the real HTTP provider path) with ``--latency-ms`` per request.

It needs nothing beside the clone. Each run is repeated ``--repeat`` times (in turns) and
the shortest wall counts: other work on the machine only ever adds time. The size at
which 2 workers first win with served models is the break-even that
``DEFAULT_SHARD_MIN_SAMPLES`` records (in-process scripted models cost so little CPU
per call that one process wins at every size measured).

    python benchmarks/shard_break_even.py
    python benchmarks/shard_break_even.py --sizes 10 40 160 --latency-ms 500
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from throughput import API_KEY, SERVICE, harness, load_average, make_dataset, run_args, server

from occubench.dataset import reference_suite_dir

OFFLINE = [
    "--agent-model",
    "occubench/steps-agent",
    "--simulator-model",
    "occubench/echo-simulator",
    "--verifier-model",
    "occubench/scripted-judge",
]


def offline_args(dataset: Path, votes: int) -> list[str]:
    return ["--dataset", str(dataset), "--votes", str(votes), "--display", "none", *OFFLINE]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 40, 80])
    parser.add_argument("--tool-calls", type=int, default=16)
    parser.add_argument("--votes", type=int, default=3)
    parser.add_argument("--latency-ms", type=float, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    opts = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp, server(opts.latency_ms / 1000) as srv:
        work = Path(tmp)
        env = {
            **os.environ,
            f"{SERVICE.upper()}_BASE_URL": srv.base_url,
            f"{SERVICE.upper()}_API_KEY": API_KEY,
        }
        for size in opts.sizes:
            data = make_dataset(work / f"d{size}", size, opts.tool_calls, reference_suite_dir())
            for setting, args in (
                ("offline", offline_args(data, opts.votes)),
                (f"served {opts.latency_ms:g} ms", run_args(data, opts.votes)),
            ):
                walls: dict[int, float] = {}
                for attempt in range(opts.repeat):
                    for workers in (1, 2):
                        logs = work / f"logs-{size}-{setting[:6]}-{workers}-{attempt}"
                        extra = ["--workers", str(workers), "--log-dir", str(logs)]
                        wall = harness([*args, *extra, "--no-preflight"], env, 1800).wall
                        walls[workers] = min(walls.get(workers, wall), wall)
                rows.append((size, setting, walls[1], walls[2], load_average()))
                print(
                    f"{size} samples, {setting}: 1 worker {walls[1]:.1f} s, "
                    f"2 workers {walls[2]:.1f} s",
                    flush=True,
                )
    print(
        f"\n{os.cpu_count()} CPUs, {opts.tool_calls} tool calls per task, {opts.votes} votes, "
        f"best of {opts.repeat}\n"
    )
    print("| samples | models | 1 worker (s) | 2 workers (s) | 2 / 1 | load avg after |")
    print("|---:|---|---:|---:|---:|---|")
    for size, setting, one, two, loads in rows:
        print(f"| {size} | {setting} | {one:.1f} | {two:.1f} | {two / one:.2f} | {loads} |")
    even = [
        size for size in opts.sizes if all(two < one for s, _, one, two, _ in rows if s == size)
    ]
    print(
        f"\nsmallest size where 2 workers win in every setting: {even[0]}"
        if even
        else "\n2 workers won at no size measured"
    )


if __name__ == "__main__":
    main()
