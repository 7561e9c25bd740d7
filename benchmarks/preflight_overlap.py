"""What the preflight's two-turn round trip costs a run in wall time.

Serves the scripted models with a latency per role (default: a tenth of the issue's
agent 6 s, simulator 2 s, verifier 4 s) and runs ``occubench run`` on the release
fixture's tasks three times: ``--no-preflight``, and with the preflight (its first turn
before the run, its second while the first samples start). For each it prints, from the
server's own clock: the seconds from launch to the first sample's first request, to the
preflight's second turn being answered, and to the run's end. The preflight's second
turn overlaps the first samples: the first sample starts after one agent round trip of
checking, not two.

    python benchmarks/preflight_overlap.py [--scale 0.1] [--tasks 4]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from inspect_ai.model import ChatMessage, ChatMessageAssistant
from inspect_ai.tool import ToolInfo

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the release-layout fixture's writer

from occubench.defaults import PREFLIGHT_TOOL_NAME  # noqa: E402
from occubench.scripted import BEHAVIOURS, Behaviour, Reply  # noqa: E402
from occubench.testing import ScriptedOpenAIServer  # noqa: E402
from release_layout import write_release_dataset  # noqa: E402

OCCUBENCH = str(Path(sys.executable).with_name("occubench"))
SECONDS = {"schema-agent": 6.0, "echo-simulator": 2.0, "scripted-judge": 4.0}
"""The issue's latencies per call, before ``--scale``."""


class Clock:
    """When the first sample started and when the preflight's second turn was answered."""

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.first_sample: float | None = None
        self.second_turn: float | None = None
        self.lock = threading.Lock()

    def seen(self, messages: list[ChatMessage], tools: list[ToolInfo]) -> None:
        now = time.monotonic() - self.start
        names = {t.name for t in tools}
        answered = any(isinstance(m, ChatMessageAssistant) for m in messages)
        with self.lock:
            if names == {PREFLIGHT_TOOL_NAME} and answered:
                self.second_turn = self.second_turn or now
            elif tools and names != {PREFLIGHT_TOOL_NAME} and not answered:
                self.first_sample = self.first_sample or now


def slowed(name: str, seconds: float, clock: Clock) -> Behaviour:
    """The scripted behaviour, answering after ``seconds`` (and noting what it saw)."""
    inner: Callable[[list[ChatMessage], list[ToolInfo]], Reply] = BEHAVIOURS[name]

    def answer(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
        if name == "schema-agent":
            clock.seen(messages, tools)
        time.sleep(seconds)
        return inner(messages, tools)

    return answer


def measure(dataset: Path, work: Path, scale: float, tasks: int, preflight: bool) -> str:
    """One run; its row."""
    clock = Clock()
    behaviours = {n: slowed(n, s * scale, clock) for n, s in SECONDS.items()}
    with ScriptedOpenAIServer(behaviours=behaviours) as server:
        env = {**os.environ, "LOCAL_BASE_URL": server.base_url, "LOCAL_API_KEY": "bench-key"}
        args = [OCCUBENCH, "run", "--agent-model", "openai-api/local/schema-agent",
                "--simulator-model", "openai-api/local/echo-simulator",
                "--verifier-model", "openai-api/local/scripted-judge",
                "--dataset", str(dataset), "--limit", str(tasks), "--workers", "1",
                "--display", "none", "--log-dir", str(work / f"logs-{preflight}"),
                *([] if preflight else ["--no-preflight"])]  # fmt: skip
        clock.start = time.monotonic()
        run = subprocess.run(args, cwd=work, env=env, capture_output=True, text=True)
        end = time.monotonic() - clock.start
    if run.returncode != 0:
        raise SystemExit(run.stdout + run.stderr)
    first = f"{clock.first_sample:.2f}" if clock.first_sample is not None else "-"
    second = f"{clock.second_turn:.2f}" if clock.second_turn is not None else "-"
    mode = "two-turn preflight" if preflight else "--no-preflight"
    return f"| {mode} | {first} | {second} | {end:.2f} |"


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scale", type=float, default=0.1, help="latency scale")
    parser.add_argument("--tasks", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        dataset = write_release_dataset(work / "release")
        agent = SECONDS["schema-agent"] * args.scale
        print(f"agent {agent:.2f} s, simulator {SECONDS['echo-simulator'] * args.scale:.2f} s, "
              f"verifier {SECONDS['scripted-judge'] * args.scale:.2f} s per call; "
              f"{args.tasks} tasks")  # fmt: skip
        print("| run | first sample's first request (s) | preflight turn 2 sent (s) "
              "| run ended (s) |")  # fmt: skip
        print("|---|---|---|---|")
        for preflight in (False, True):
            print(measure(dataset, work, args.scale, args.tasks, preflight), flush=True)


if __name__ == "__main__":
    main()
