"""Peak memory of one shard against its task count: is it flat?

Runs ``occubench run --workers 1`` (one process: the whole run is one shard) over the
throughput benchmark's dataset (``throughput.py`` beside this file: the sample's tasks
repeated to each ``--tasks`` value, ``--tool-calls`` calls each) against its scripted
server in another process, and prints the peak resident set size of the shard process
(``ru_maxrss`` of the harness's process tree, from ``wait4``), per task count, with the
growth per task between the smallest and the largest run. Flat means the peak does not
depend on how many tasks the shard holds: finished samples leave memory once written.

    python benchmarks/shard_memory.py                        # 100, 382 and 2000 tasks
    python benchmarks/shard_memory.py --tasks 100 382 -- --max-connections 32
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from pathlib import Path

from throughput import API_KEY, SERVICE, harness, load_average, make_dataset, run_args, server


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tasks", type=int, nargs="+", default=[100, 382, 2000])
    parser.add_argument("--tool-calls", type=int, default=16)
    parser.add_argument("--votes", type=int, default=3)
    parser.add_argument("--latency-ms", type=float, default=0)
    parser.add_argument("extra", nargs="*", help="options for occubench run (after --)")
    opts = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="occubench-memory-"))
    rows = []
    try:
        with server(opts.latency_ms / 1000) as srv:
            env = {
                **os.environ,
                f"{SERVICE.upper()}_BASE_URL": srv.base_url,
                f"{SERVICE.upper()}_API_KEY": API_KEY,
            }
            for tasks in opts.tasks:
                dataset = make_dataset(work / f"dataset-{tasks}", tasks, opts.tool_calls)
                before = load_average()
                args = run_args(dataset, opts.votes, "--workers", "1", *opts.extra)
                run = harness([*args, "--log-dir", str(work / f"logs-{tasks}")], env, 7200)
                rows.append((tasks, run.peak_rss_mb, run.wall, run.cpu, before, load_average()))
                print(
                    f"{tasks} tasks: peak RSS {run.peak_rss_mb:.0f} MB, wall {run.wall:.1f} s, "
                    f"CPU {run.cpu:.1f} s",
                    flush=True,
                )
                shutil.rmtree(work / f"logs-{tasks}", ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\none shard (--workers 1), {opts.tool_calls} tool calls per task, {opts.votes} votes")
    print("| tasks | peak RSS (MB) | wall (s) | harness CPU (s) | load avg before/after |")
    print("|---|---|---|---|---|")
    for tasks, rss, wall, cpu, before, after in rows:
        print(f"| {tasks} | {rss:.0f} | {wall:.1f} | {cpu:.1f} | {before} / {after} |")
    (small, small_rss, *_), (large, large_rss, *_) = min(rows), max(rows)
    if large > small:
        print(
            f"growth {large_rss / small_rss - 1:+.0%} from {small} to {large} tasks "
            f"({1024 * (large_rss - small_rss) / (large - small):.0f} KB per task)"
        )


if __name__ == "__main__":
    main()
