"""Start-up of the ``occubench`` command: ``--version``, ``--help``, and a run's first request.

Two builds side by side, their runs interleaved so that both meet the same load: this
checkout's ``occubench`` (the interpreter running this script) and another one
(``--other``, e.g. the main branch's ``.venv/bin/occubench``). For each:

- ``occubench --version``, ``occubench --help`` and ``occubench run --help``: wall time
  from launch to exit;
- ``occubench run`` on ``--tasks`` sample tasks (the public sample, ``OCCUBENCH_SAMPLE``,
  in a temporary dataset as ``throughput.py`` makes it) against the scripted
  OpenAI-compatible server of ``serve.py`` on 127.0.0.1, which records each request's
  arrival time: launch -> the first request (the preflight's), launch -> the first
  request of a sample (the agent's first turn), launch -> exit.

Each figure is the median of ``--repeat`` runs; the ratio is other / this. The machine
should be otherwise idle: the load average is printed before and after.

    python benchmarks/startup.py --other /work/main/.venv/bin/occubench
    python benchmarks/startup.py --other ../main/.venv/bin/occubench --repeat 9 --tasks 1
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from throughput import API_KEY, load_average, make_dataset, run_args, server

BIN = Path(sys.executable).parent
PREFLIGHT_MAX_TOKENS = 16
"""``max_tokens`` of the preflight's request (``occubench.scale``): tells it from a sample's."""
RUN_TIMEOUT = 600.0
"""Seconds one ``occubench run`` may take before the benchmark gives up."""


@dataclass(frozen=True)
class Started:
    """One ``occubench run``: seconds from its launch to each event (None: never came)."""

    first_request: float | None
    first_sample_request: float | None
    exit: float


def wall(command: list[str]) -> float:
    """Seconds from launch to exit of ``command`` (its output discarded; it must succeed)."""
    started = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def requests_after(record: Path, launched: float) -> tuple[float | None, float | None]:
    """Seconds from ``launched`` to the first request, and to the first one of a sample."""
    first: float | None = None
    sample: float | None = None
    for line in record.read_text().splitlines():
        entry = json.loads(line)
        at = entry["t"] - launched
        first = at if first is None else min(first, at)
        if json.loads(entry["body"]).get("max_tokens") != PREFLIGHT_MAX_TOKENS:
            sample = at if sample is None else min(sample, at)
    return first, sample


def one_run(program: str, dataset: Path, latency: float, work: Path) -> Started:
    """``program run`` on ``dataset`` against a fresh recording server."""
    record = work / "requests.jsonl"
    record.unlink(missing_ok=True)
    logs = tempfile.mkdtemp(dir=work)
    with server(latency, record) as srv:
        env = {
            **os.environ,
            "LOCAL_BASE_URL": srv.base_url,
            "LOCAL_API_KEY": API_KEY,
            "INSPECT_CACHE_DIR": str(work / "cache"),
        }
        launched = time.time()
        done = subprocess.run(
            [program, "run", *run_args(dataset, 1, "--log-dir", logs)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            timeout=RUN_TIMEOUT,
            cwd=work,
        )
        ended = time.time()
    if done.returncode != 0:
        raise RuntimeError(f"{program} run exited with {done.returncode}: {done.stderr[-2000:]}")
    first, sample = requests_after(record, launched)
    return Started(first, sample, ended - launched)


def median(values: list[float | None]) -> float | None:
    """The median of the values, or None when one is missing."""
    known = [v for v in values if v is not None]
    return statistics.median(known) if known and len(known) == len(values) else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--other", required=True, help="The other build's occubench program.")
    parser.add_argument("--repeat", type=int, default=5, help="Runs of each measure (median).")
    parser.add_argument("--tasks", type=int, default=2, help="Sample tasks of each run.")
    parser.add_argument("--tool-calls", type=int, default=2, help="Agent tool calls per task.")
    parser.add_argument("--latency-ms", type=float, default=50.0, help="The server's latency.")
    opts = parser.parse_args()
    builds = {"this": str(BIN / "occubench"), "other": opts.other}
    print(f"load average before: {load_average()}")
    times: dict[str, dict[str, list[float | None]]] = {b: {} for b in builds}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        dataset = make_dataset(work / "dataset", opts.tasks, opts.tool_calls)
        for _ in range(opts.repeat):
            for build, program in builds.items():
                for name, args in (
                    ("--version", ["--version"]),
                    ("--help", ["--help"]),
                    ("run --help", ["run", "--help"]),
                ):
                    times[build].setdefault(name, []).append(wall([program, *args]))
                got = one_run(program, dataset, opts.latency_ms / 1000, work)
                times[build].setdefault("run: first request", []).append(got.first_request)
                times[build].setdefault("run: first sample request", []).append(
                    got.first_sample_request
                )
                times[build].setdefault("run: exit", []).append(got.exit)
    print(f"load average after: {load_average()}")
    print(
        f"{opts.repeat} runs each, median seconds from launch; {opts.tasks} task(s), "
        f"{opts.tool_calls} tool calls each, server latency {opts.latency_ms:g} ms"
    )
    print(f"{'':28} {'this':>8} {'other':>8} {'other/this':>10}")
    for name in times["this"]:
        ours, theirs = median(times["this"][name]), median(times["other"][name])
        ratio = f"{theirs / ours:.2f}" if ours and theirs else "-"
        shown = [f"{v:8.2f}" if v is not None else f"{'-':>8}" for v in (ours, theirs)]
        print(f"{name:28} {shown[0]} {shown[1]} {ratio:>10}")


if __name__ == "__main__":
    main()
