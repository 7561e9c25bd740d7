"""A real small model through every path (opt-in: ``python -m pytest -m real_model``).

Qwen2.5-Coder-0.5B-Instruct (GGUF) runs on this CPU behind an OpenAI-compatible server
(``shared/real-model``: ``get_model.sh`` fetches the model, ``local_llm_server.py``
serves it with llama-cpp-python), and plays agent, simulator and verifier on two sample
tasks under both protocol presets. It is weak and slow: the test asserts harness facts
only, never the quality of a verdict: no infrastructure error, tool calls reached the
simulator, every vote was read or counted. The transcript summary (calls per role,
simulator parse outcomes, verdicts, wall time) is printed.

Skipped with its reason when the model, the server script or llama-cpp-python is
absent. ``OCCUBENCH_REAL_MODEL`` (the .gguf) and ``OCCUBENCH_REAL_MODEL_SERVER`` (the
server script) say where they are when not at their default places.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from occubench.agent import episode_in
from occubench.grading import Grade

MODEL = Path(
    os.environ.get(
        "OCCUBENCH_REAL_MODEL",
        Path.home() / ".cache/occubench-real-model/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    )
)
SERVER = Path(
    os.environ.get(
        "OCCUBENCH_REAL_MODEL_SERVER",
        Path(__file__).resolve().parents[2] / "shared" / "real-model" / "local_llm_server.py",
    )
)
TASKS = "26,47"
"""Two sample tasks (scenarios with few tools: a short first prompt on this CPU)."""
ROLES = ("agent", "simulator", "verifier")
CACHE_MB = 100
"""The server's prompt cache, counted in KV-state bytes (a few states). Each cached state
also holds its prompt's logits (tokens x 151,936 floats, not counted): at the default,
3000 MB, the cache held 22.7 GB when the occubench protocol's re-asks filled it, and the
kernel killed the server on a 24 GB machine."""


def missing() -> str | None:
    """Why the real model cannot run here (None: it can)."""
    if not MODEL.is_file():
        return f"no model at {MODEL} (run shared/real-model/get_model.sh; OCCUBENCH_REAL_MODEL)"
    if not SERVER.is_file():
        return f"no server script at {SERVER} (OCCUBENCH_REAL_MODEL_SERVER)"
    for module in ("llama_cpp", "fastapi", "uvicorn"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed (see shared/real-model/README.md)"
    return None


MISSING = missing()
pytestmark = [
    pytest.mark.real_model,
    pytest.mark.skipif(MISSING is not None, reason=f"the real model cannot run here: {MISSING}"),
]


@pytest.fixture(scope="module")
def real_model_url(tmp_path_factory):
    """The model served on a free local port, one request at a time, one thread."""
    assert missing() is None
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = tmp_path_factory.mktemp("real-model") / "server.log"
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    server = subprocess.Popen(
        [sys.executable, str(SERVER), "--model", str(MODEL), "--port", str(port),
         "--threads", "1", "--cache-mb", str(CACHE_MB), "--log", str(log)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 300
    while True:
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=5):
                break
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                server.kill()
                pytest.fail(f"the model server did not start: {server.stderr.read()!r}")
            time.sleep(1)
    yield url
    server.terminate()
    server.wait(timeout=30)


def summary(log_dir: Path) -> dict:
    """Harness facts of a run's samples: calls per role, simulator steps, votes."""
    (path,) = log_dir.glob("*/*.eval")  # LOG_DIR/<the run's folder>/
    log = read_eval_log(str(path))
    calls: Counter[str] = Counter()
    out = {"samples": [], "calls": calls}
    for sample in log.samples or []:
        for event in sample.events:
            if event.event == "model":
                calls[event.role or "agent"] += 1
        episode = episode_in(sample.store)
        steps = episode.steps
        score = (sample.scores or {}).get("occubench_scorer")
        grade = Grade.of(score.metadata, score.value == "C") if score else None
        out["samples"].append(
            {
                "id": sample.id,
                "error": sample.error.message if sample.error else None,
                "tool_calls": episode.tool_calls,
                "rejected_calls": episode.rejected_calls,
                "steps": len(steps),
                "simulator_attempts": sum(s.attempts for s in steps),
                "raw_passed_on": sum(s.parse_failed for s in steps),
                "checks_failed": sum(s.check is not None for s in steps),
                "votes": [v.is_correct for v in grade.votes or []] if grade else None,
                "verdict": score.value if score else None,
                "stop": episode.stop_reason,
            }
        )
    return out


@pytest.mark.parametrize("protocol", ["paper", "occubench"])
def test_a_real_model_through_every_path(real_model_url, public_sample, tmp_path, protocol):
    env = {**os.environ, "LOCAL_BASE_URL": real_model_url, "LOCAL_API_KEY": "local-model"}
    log_dir = tmp_path / "logs"
    started = time.monotonic()
    run = subprocess.run(
        [str(Path(sys.executable).with_name("occubench")), "run",
         "--agent-model", "openai-api/local/qwen", "--simulator-model", "openai-api/local/qwen",
         "--verifier-model", "openai-api/local/qwen", "--dataset", str(public_sample),
         "--tasks", TASKS, "--protocol", protocol, "--max-tool-calls", "6", "--votes", "1",
         "--workers", "1", "--max-connections", "1", "--display", "none",
         "--log-dir", str(log_dir)],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=3600,
    )  # fmt: skip
    wall = time.monotonic() - started
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    facts = summary(log_dir)
    report = subprocess.run(
        [str(Path(sys.executable).with_name("occubench")), "report", str(log_dir),
         "--out", str(tmp_path / "report")],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert report.returncode == 0, report.stdout + report.stderr  # every reader reads the log
    assert "could not be read" not in report.stdout
    print(f"\nreal model, {protocol} protocol, {wall:.0f} s: calls {dict(facts['calls'])}")
    for sample in facts["samples"]:
        print(f"  {sample}")
    samples = facts["samples"]
    assert sorted(s["id"] for s in samples) == sorted(int(t) for t in TASKS.split(","))
    assert [s["error"] for s in samples] == [None, None]  # no infrastructure error
    assert sum(s["steps"] for s in samples) >= 1  # a tool call reached the simulator
    assert facts["calls"]["simulator"] >= 1 and facts["calls"]["verifier"] >= 1
    for sample in samples:  # every vote read (True/False) or counted (None: a failing vote)
        assert sample["votes"] is not None and len(sample["votes"]) == 1
        assert all(v in (True, False, None) for v in sample["votes"])
        assert sample["verdict"] in ("C", "I")
