"""How fast ``occubench report`` is at paper scale: terminal and HTML, cold and warm.

The paper's full grid is 382 tasks x 4 modes x 15 models = 22,920 samples. Running
that many samples offline takes hours, so the benchmark synthesizes the logs: it runs
the public sample's tasks once per mode family (E0, and E3 with faults) with the
scripted offline models, then writes ``--models`` x ``--modes`` logs of
``--samples`` samples in all, each sample a copy of a real one (messages, events,
store, scores) with its own id and a seeded verdict (each model its own pass rate,
votes to match). The logs are ordinary Inspect ``.eval`` files.

It then times ``occubench report LOGS`` as a child process (startup included): cold
(no results store beside the logs: every log is read), warm (the second report reads
only the stores), and ``--format html`` cold and warm. ``--before BIN`` also times
another ``occubench`` executable on the same logs (e.g. a checkout of an earlier
commit), ``--before-samples N`` on the first N samples' logs only, for a slow one.

    python benchmarks/report_speed.py --samples 20000
    python benchmarks/report_speed.py --samples 20000 --logs /tmp/paper-logs --keep
    python benchmarks/report_speed.py --before /path/to/old/.venv/bin/occubench
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from inspect_ai.log import EvalLog, EvalSample, read_eval_log, write_eval_log
from inspect_ai.scorer import CORRECT, INCORRECT
from throughput import load_average

from occubench.config import CONFIG_METADATA, EvalOptions
from occubench.results._store import STORE_SUFFIX
from occubench.roles import Role
from occubench.scale._runner import BENCHMARK_TASK, run_eval

SAMPLE_DIR = Path(
    os.environ.get(
        "OCCUBENCH_SAMPLE", Path(__file__).resolve().parents[2] / "shared" / "occubench-sample"
    )
)
BIN = Path(sys.executable).parent / "occubench"
MODES = ("E0", "E1", "E2", "E3")
SCORER = "occubench_scorer"


def seed_logs(work: Path) -> dict[str, EvalLog]:
    """Real runs of the sample's tasks: E0, and E3 with faults (the seed of E1-E3)."""
    found = {}
    for mode in ("E0", "E3"):
        outcome = run_eval(
            BENCHMARK_TASK,
            {"dataset": str(SAMPLE_DIR), "env_mode": mode, "votes": 3},
            log_dir=str(work / f"seed-{mode}"),
            model="occubench/schema-agent",
            roles={
                Role.SIMULATOR: "occubench/echo-simulator",
                Role.VERIFIER: "occubench/scripted-judge",
            },
            options=EvalOptions(),
        )
        found[mode] = read_eval_log(outcome.logs[0])
    return found


def synthetic_sample(base: EvalSample, sample_id: int, passed: bool) -> EvalSample:
    """A copy of ``base`` with a new id and the given verdict (its votes agreeing)."""
    sample = base.model_copy(update={"id": sample_id})
    score = sample.scores[SCORER] if sample.scores else None
    if score is not None:
        metadata = dict(score.metadata or {})
        metadata["votes"] = [{**vote, "is_correct": passed} for vote in metadata.get("votes") or []]
        metadata["passed"] = passed
        sample.scores = {
            SCORER: score.model_copy(
                update={"value": CORRECT if passed else INCORRECT, "metadata": metadata}
            )
        }
    return sample


def make_logs(out: Path, samples: int, models: int) -> list[Path]:
    """``models`` x 4 modes logs holding ``samples`` samples in all (see the docstring)."""
    out.mkdir(parents=True, exist_ok=True)
    seeds = seed_logs(out / "seed-runs")
    per_log = -(-samples // (models * len(MODES)))
    rng = random.Random(0)
    written = []
    for m in range(models):
        skill = 0.3 + 0.6 * m / max(models - 1, 1)
        for mode in MODES:
            seed = seeds["E0" if mode == "E0" else "E3"]
            base = seed.samples or []
            eval_spec = seed.eval.model_copy(deep=True)
            eval_spec.model = f"synthetic/agent-{m:02d}"
            eval_spec.eval_id = f"synthetic-{m:02d}-{mode}"
            eval_spec.run_id = eval_spec.eval_id
            eval_spec.dataset.samples = per_log
            eval_spec.dataset.sample_ids = list(range(1, per_log + 1))
            metadata = dict(eval_spec.metadata or {})
            metadata[CONFIG_METADATA] = {**metadata.get(CONFIG_METADATA, {}), "env_mode": mode}
            eval_spec.metadata = metadata
            penalty = 0.0 if mode == "E0" else 0.15
            log = seed.model_copy(
                update={
                    "eval": eval_spec,
                    "samples": [
                        synthetic_sample(base[k % len(base)], k + 1, rng.random() < skill - penalty)
                        for k in range(per_log)
                    ],
                }
            )
            path = out / f"agent-{m:02d}-{mode}.eval"
            write_eval_log(log, str(path), format="eval")
            written.append(path)
        print(f"wrote the logs of model {m + 1}/{models}", flush=True)
    shutil.rmtree(out / "seed-runs", ignore_errors=True)
    return written


def samples_in(log: Path) -> int:
    """Samples in an ``.eval`` log (its ``samples/`` members)."""
    with zipfile.ZipFile(log) as archive:
        return sum(n.startswith("samples/") for n in archive.namelist())


def timed(command: list[str]) -> float:
    """Wall seconds of a command (which must succeed)."""
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
        raise RuntimeError(f"{' '.join(command[:3])} exited with {done.returncode}")
    return elapsed


def clear_stores(logs: list[Path]) -> None:
    for log in logs:
        log.with_name(log.name + STORE_SUFFIX).unlink(missing_ok=True)


def report_timings(binary: str, logs: list[Path], html_out: Path) -> list[tuple[str, float]]:
    """Terminal and HTML reports over ``logs``, cold (no stores) and warm."""
    paths = [str(p) for p in logs]
    terminal = [binary, "report", *paths]
    html = [*terminal, "--format", "html", "--out", str(html_out)]
    results = []
    clear_stores(logs)
    results.append(("terminal, cold", timed(terminal)))
    results.append(("terminal, warm", timed(terminal)))
    clear_stores(logs)
    results.append(("html, cold", timed(html)))
    results.append(("html, warm", timed(html)))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--samples", type=int, default=20000)
    parser.add_argument("--models", type=int, default=15)
    parser.add_argument("--logs", type=Path, help="folder of the logs (made if missing)")
    parser.add_argument("--before", help="another occubench executable to time the same way")
    parser.add_argument("--before-samples", type=int, help="samples the --before run reads")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    opts = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="occubench-report-"))
    folder = opts.logs or work / "logs"
    try:
        logs = sorted(folder.glob("agent-*.eval"))
        if not logs:
            started = time.perf_counter()
            logs = make_logs(folder, opts.samples, opts.models)
            print(f"made {len(logs)} logs in {time.perf_counter() - started:.0f} s")
        total = sum(samples_in(p) for p in logs)
        size = sum(p.stat().st_size for p in logs) / 2**20
        print(f"{len(logs)} logs, about {total} samples, {size:.0f} MB")
        rows = []
        for label, seconds in report_timings(str(BIN), logs, work / "html"):
            rows.append(("this tree", label, len(logs), seconds, load_average()))
            print(f"{label}: {seconds:.1f} s (load {load_average()})", flush=True)
        if opts.before:
            subset = logs
            if opts.before_samples:
                per_log = max(total // len(logs), 1)
                subset = logs[: max(1, opts.before_samples // per_log)]
            for label, seconds in report_timings(opts.before, subset, work / "html-before"):
                rows.append(("before", label, len(subset), seconds, load_average()))
                print(f"before, {label}: {seconds:.1f} s (load {load_average()})", flush=True)
        print("\n| code | report | logs | seconds | load avg after |")
        print("|---|---|---|---|---|")
        for code, label, n, seconds, load in rows:
            print(f"| {code} | {label} | {n} | {seconds:.1f} | {load} |")
    finally:
        if opts.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
