"""What a resume pays after Ctrl-C: requests sent by the first run, by the resume, saved.

Four tasks (11, 24, 26, 32 of a dataset in the release layout, by default the public
sample), the scripted agent ``schema-agent`` and the ``canned`` simulator. The test
server holds every agent request at a turn (``--turn``, default 3: each sample has had
that many agent calls answered), so every sample is in flight when the run gets SIGINT
(``--kill``: its two shard workers get SIGKILL instead); then the same command runs
again. Printed per wire (the chat wire, and the agent on the strict Anthropic server
with thinking on): the agent's generation requests and the simulator's requests sent by
the first run (held ones included), by the resume, and by an uninterrupted run, and the
resume's "Resumed:" line. ``--source`` runs another checkout's occubench (its ``src``
folder, e.g. the commit before journals, to compare before and after). The servers and
the command line are the resume tests' (``tests/resume_runs.py``).

    python benchmarks/resume_savings.py [--dataset DIR] [--source SRC] [--turn 3] [--kill]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the resume tests' runs

from resume_runs import children, command, servers, start_held  # noqa: E402

TASKS = [11, 24, 26, 32]
HOLD_BOUND = 600
"""The most seconds the first run may take to reach the held turn."""


def measure(
    wire: str, dataset: str, source: str | None, turn: int, root: Path, kill: bool
) -> dict[str, Any]:
    """First run (stopped at ``turn``), resume and an uninterrupted run, on ``wire``.

    Stopped by SIGINT (one worker), or with ``kill`` by SIGKILL of its two shard workers.
    """
    workers = 2 if kill else 1
    with servers(wire, turn, {"PYTHONPATH": source} if source else None) as served:

        def counts() -> tuple[int, int]:
            return served.agent_requests(), served.simulator_requests()

        logs = root / wire / "logs"
        run = start_held(
            command(wire, dataset, TASKS, logs, workers), served, len(TASKS), HOLD_BOUND
        )
        if kill:
            for pid in children(run.pid):
                os.killpg(pid, signal.SIGKILL)  # each worker in its own process group
        else:
            run.send_signal(signal.SIGINT)
        run.communicate()
        first = counts()
        served.release()
        resumed = subprocess.run(
            command(wire, dataset, TASKS, logs, workers), env=served.env, capture_output=True
        )
        after = counts()
        clean_logs = root / wire / "clean"
        whole = subprocess.run(
            command(wire, dataset, TASKS, clean_logs, workers), env=served.env, capture_output=True
        )
        clean = counts()
        refused = served.refused()
    said = [line for line in resumed.stdout.decode().splitlines() if line.startswith("Resumed")]
    return {
        "wire": wire,
        "stop": "SIGKILL of the shard workers" if kill else "SIGINT",
        "first_run": {"agent": first[0], "simulator": first[1]},
        "resume": {"agent": after[0] - first[0], "simulator": after[1] - first[1]},
        "uninterrupted": {"agent": clean[0] - after[0], "simulator": clean[1] - after[1]},
        "resume_exit": resumed.returncode,
        "uninterrupted_exit": whole.returncode,
        "resumed_line": said[0] if said else None,
        "refused": refused,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="/work/shared/occubench-sample")
    parser.add_argument("--source", default=None, help="PYTHONPATH of the occubench to run")
    parser.add_argument("--turn", type=int, default=3)
    parser.add_argument("--kill", action="store_true", help="kill -9 two shard workers instead")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for wire in ("chat", "anthropic"):
            found = measure(wire, args.dataset, args.source, args.turn, Path(folder), args.kill)
            print(json.dumps(found))


if __name__ == "__main__":
    main()
