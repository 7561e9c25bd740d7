"""Runs stopped with every sample in flight, as the resume tests and benchmark make them.

Shared by ``tests/scale/test_resume.py`` and ``benchmarks/resume_savings.py``: the
scripted ``schema-agent`` answers on the chat wire (the scripted OpenAI server, which also
serves the ``canned`` simulator), or as ``CLAUDE`` on the strict Anthropic server with
thinking on. Every agent request at the hold turn is held until ``Servers.release``, so a
run can be stopped while each sample is in flight, however fast the machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from occubench.scripted import BEHAVIOURS
from occubench.testing import AnthropicServer, Hold, ScriptedOpenAIServer

BIN = Path(sys.executable).with_name("occubench")
AGENT = "schema-agent"
CLAUDE = "claude-opus-4-6"


@dataclass
class Servers:
    """The servers of one run: the simulator's (and the chat agent's), the Anthropic agent's."""

    chat: ScriptedOpenAIServer
    anthropic: AnthropicServer | None
    env: dict[str, str]
    """The environment the run gets: the servers' base URLs and keys."""

    def agent_requests(self) -> int:
        """Generations the agent's server was asked for so far (held ones included)."""
        if self.anthropic is not None:  # its token counts are free, and not journaled
            return sum(r.path == "/v1/messages" for r in self.anthropic.requests)
        return self.chat.stats.requests[AGENT]

    def simulator_requests(self) -> int:
        """Requests the ``canned`` simulator was sent so far."""
        return self.chat.stats.requests["canned"]

    def held(self) -> int:
        """Agent requests held at the turn so far."""
        return self.anthropic.stats.held if self.anthropic is not None else self.chat.stats.held

    def refused(self) -> list[str]:
        """What the Anthropic server refused (replayed thinking blocks it did not sign)."""
        return [] if self.anthropic is None else list(self.anthropic.refused)

    def release(self) -> None:
        """Let the held requests, and every later one, through."""
        self.chat.release()
        if self.anthropic is not None:
            self.anthropic.release()


@contextmanager
def servers(wire: str, turn: int, env: dict[str, str] | None = None) -> Iterator[Servers]:
    """The chat server and, for the ``anthropic`` wire, the agent's Anthropic server, each
    agent request at ``turn`` held; ``env``: more variables for the run's environment."""
    hold = Hold(model=AGENT, samples=0, turn=turn) if wire == "chat" else None
    with ScriptedOpenAIServer(hold=hold) as chat:
        run_env = {**os.environ, "LOCAL_BASE_URL": chat.base_url, "LOCAL_API_KEY": "test-key"}
        run_env |= env or {}
        if wire == "chat":
            yield Servers(chat, None, run_env)
            return
        behaviours = {CLAUDE: BEHAVIOURS[AGENT]}
        with AnthropicServer(behaviours=behaviours, record=True, hold_turn=turn) as anthropic:
            run_env |= {"ANTHROPIC_BASE_URL": anthropic.base_url, "ANTHROPIC_API_KEY": "test-key"}
            yield Servers(chat, anthropic, run_env)


def command(
    wire: str,
    dataset: Path | str,
    tasks: Sequence[int],
    logs: Path,
    workers: int = 1,
    extra: Sequence[str] = (),
) -> list[str]:
    """The ``occubench run`` command line of ``tasks`` on ``wire`` (each sample's log kept as
    it ends); ``extra``: further options."""
    agent = f"openai-api/local/{AGENT}" if wire == "chat" else f"anthropic/{CLAUDE}"
    thinking = [] if wire == "chat" else ["--reasoning-tokens", "agent=2048"]
    return [
        str(BIN),
        "run",
        "--agent-model",
        agent,
        "--simulator-model",
        "openai-api/local/canned",
        *thinking,
        "--dataset",
        str(dataset),
        "--tasks",
        ",".join(map(str, tasks)),
        "--workers",
        str(workers),
        *kept_in(logs),
        *extra,
    ]


def kept_in(logs: Path) -> list[str]:
    """``occubench run``'s options to keep each sample in ``logs`` as it ends (what an
    interrupted run keeps), with no display."""
    return ["--log-buffer", "1", "--display", "none", "--log-dir", str(logs)]


def start_held(
    run_command: list[str], served: Servers, samples: int, bound: float
) -> subprocess.Popen[bytes]:
    """``run_command`` started, once each of its ``samples`` is held at the turn."""
    run = subprocess.Popen(
        run_command, env=served.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    wait_held(run, served, samples, bound)
    return run


def wait_held(run: subprocess.Popen[bytes], served: Servers, samples: int, bound: float) -> None:
    """Wait until each of the ``samples`` of ``run`` is held at the turn (a count, not a
    duration; ``bound``: the most seconds to wait); it fails if ``run`` ends first."""
    deadline = time.monotonic() + bound
    while served.held() < samples:
        if run.poll() is not None:
            said = run.stdout.read().decode(errors="replace") if run.stdout else ""
            raise AssertionError(f"the run ended before it was held: {said}")
        assert time.monotonic() < deadline, "the samples never reached the held turn"
        time.sleep(0.05)


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]
