"""No silent zeros: an agent API error the paper protocol grades is said, and not exit 0.

The paper's harness ends the loop on an agent API failure and grades what exists; a run of
the paper protocol against an endpoint that refuses the second turn reported a completion
rate of 0 with exit 0 and nothing said. Now the run says how many samples ended so and
the first error, ``report`` says it again, and the run exits 4; under ``occubench`` such a
sample is an infrastructure error, retried (here the retry succeeds: exit 0, scored).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import HTTP_MODEL_ARGS
from occubench.errors import ExitCode
from occubench.report import build_report
from occubench.results import read_runs
from occubench.testing import HardFailure, ScriptedOpenAIServer

OCCUBENCH = str(Path(sys.executable).with_name("occubench"))


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize(
    ("protocol", "code"), [("paper", ExitCode.AGENT_ERRORS), ("occubench", ExitCode.OK)]
)
def test_an_agent_error_is_said_and_never_exits_0(release_dir, tmp_path, protocol, code):
    refused = [HardFailure(model="schema-agent", call=2)]  # the second turn of the first task
    with ScriptedOpenAIServer(hard_failures=refused) as server:
        env = {**os.environ, "LOCAL_BASE_URL": server.base_url, "LOCAL_API_KEY": "test-key"}
        args = [OCCUBENCH, "run", *HTTP_MODEL_ARGS, "--dataset", str(release_dir),
                "--tasks", "11", "--protocol", protocol, "--workers", "1", "--display",
                "none", "--no-preflight", "--log-dir", str(tmp_path / "logs")]  # fmt: skip
        run = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True)
    said = flat(run.stdout + run.stderr)
    assert run.returncode == code, said
    rows = read_runs([tmp_path / "logs"])
    assert len(rows) == 1
    if protocol == "paper":
        (row,) = rows
        assert row.passed is not None and row.agent_error is not None  # graded as it stood
        assert "1 sample(s) ended on an agent API error and were graded as they stood" in said
        assert "The first:" in said and "request 2 refused (injected)" in said
        report = subprocess.run([OCCUBENCH, "report", str(tmp_path / "logs")], cwd=tmp_path,
                                capture_output=True, text=True)  # fmt: skip
        assert report.returncode == 0
        assert "ended on an agent API error" in flat(report.stdout)
        board = report.stdout.split("Leaderboard")[1].split("Completion rate by")[0]
        assert "API" in board  # the leaderboard's column "agent API errors" (wrapped)
        (line,) = build_report(rows).leaderboard
        assert line.agent_errors == 1 and line.scored == 1
    else:  # an infrastructure error: the sample ran again, never graded on the error
        assert rows[0].passed is not None and rows[0].agent_error is None
        assert "agent API error" not in said
