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
folder, e.g. the commit before journals, to compare before and after).

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
import time
from pathlib import Path
from typing import Any

from occubench.scripted import BEHAVIOURS
from occubench.testing import AnthropicServer, Hold, ScriptedOpenAIServer

OCCUBENCH = str(Path(sys.executable).with_name("occubench"))
AGENT = "schema-agent"
CLAUDE = "claude-opus-4-6"
TASKS = "11,24,26,32"


def command(wire: str, dataset: str, logs: Path, workers: int) -> list[str]:
    """The run's command line."""
    agent = f"openai-api/local/{AGENT}" if wire == "chat" else f"anthropic/{CLAUDE}"
    thinking = [] if wire == "chat" else ["--reasoning-tokens", "agent=2048"]
    return [
        OCCUBENCH,
        "run",
        "--agent-model",
        agent,
        "--simulator-model",
        "openai-api/local/canned",
        *thinking,
        "--dataset",
        dataset,
        "--tasks",
        TASKS,
        "--workers",
        str(workers),
        "--display",
        "none",
        "--log-dir",
        str(logs),
    ]


def measure(
    wire: str, dataset: str, source: str | None, turn: int, root: Path, kill: bool
) -> dict[str, Any]:
    """First run (stopped at ``turn``), resume and an uninterrupted run, on ``wire``.

    Stopped by SIGINT (one worker), or with ``kill`` by SIGKILL of its two shard workers.
    """
    workers = 2 if kill else 1
    hold = Hold(model=AGENT, samples=0, turn=turn) if wire == "chat" else None
    anthropic = (
        AnthropicServer(behaviours={CLAUDE: BEHAVIOURS[AGENT]}, record=True, hold_turn=turn)
        if wire == "anthropic"
        else None
    )
    with ScriptedOpenAIServer(hold=hold) as chat:
        env = {**os.environ, "LOCAL_BASE_URL": chat.base_url, "LOCAL_API_KEY": "x"}
        if source:
            env["PYTHONPATH"] = source
        if anthropic is not None:
            anthropic.start()
            env |= {"ANTHROPIC_BASE_URL": anthropic.base_url, "ANTHROPIC_API_KEY": "x"}

        def counts() -> tuple[int, int]:
            sim = chat.stats.requests["canned"]
            if anthropic is not None:
                return sum(r.path == "/v1/messages" for r in anthropic.requests), sim
            return chat.stats.requests[AGENT], sim

        def held() -> int:
            return anthropic.stats.held if anthropic is not None else chat.stats.held

        logs = root / wire / "logs"
        run = subprocess.Popen(
            command(wire, dataset, logs, workers),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        while held() < len(TASKS.split(",")):
            if run.poll() is not None:
                raise RuntimeError(run.stdout.read().decode() if run.stdout else "ended")
            time.sleep(0.05)
        if kill:
            listed = subprocess.run(
                ["ps", "-o", "pid=", "--ppid", str(run.pid)], capture_output=True, text=True
            )
            for pid in listed.stdout.split():
                os.killpg(int(pid), signal.SIGKILL)  # each worker in its own process group
        else:
            run.send_signal(signal.SIGINT)
        run.communicate()
        first = counts()
        chat.release()
        if anthropic is not None:
            anthropic.release()
        resumed = subprocess.run(
            command(wire, dataset, logs, workers), env=env, capture_output=True
        )
        after = counts()
        whole = subprocess.run(
            command(wire, dataset, root / wire / "clean", workers), env=env, capture_output=True
        )
        clean = counts()
        if anthropic is not None:
            refused = anthropic.refused
            anthropic.stop()
        else:
            refused = []
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
