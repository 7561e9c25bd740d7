"""The matrix: every wire x every role x both protocols x E0 and E3, one release task.

Each cell is a real ``occubench run`` (the preflight's two-turn round trip included) with
the agent, the simulator and the verifier all on one provider's own API, served by its
strict local server (``occubench.testing``), the agent's reasoning on. A cell passes when
the run exits 0, its one sample is scored, every role's model was answered and the wire
refused nothing.

On main before the per-wire protocol (``occubench.providers.Wire``), the ``paper`` cells
of three wires failed: Anthropic refused the agent's second turn (thinking dropped),
Gemini's STOP ended the loop after one call, DeepSeek refused the second turn
(``reasoning_content`` dropped); each ended the sample on an agent API error.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from occubench.results import read_runs
from occubench.roles import Role
from occubench.testing import WIRE_CASES, WireCase

OCCUBENCH = str(Path(sys.executable).with_name("occubench"))


@pytest.mark.parametrize("mode", ["E0", "E3"])
@pytest.mark.parametrize("protocol", ["paper", "occubench"])
@pytest.mark.parametrize("case", WIRE_CASES, ids=[c.wire.value for c in WIRE_CASES])
def test_every_wire_runs_every_role(release_dir, tmp_path, case: WireCase, protocol, mode):
    server = case.server()
    with server:
        env = {**os.environ, **case.environment(server)}
        args = [OCCUBENCH, "run", *case.model_options(), *case.agent_settings,
                "--dataset", str(release_dir), "--tasks", "11", "--protocol", protocol,
                "--env-mode", mode, "--workers", "1", "--display", "none",
                "--log-dir", str(tmp_path / "logs")]  # fmt: skip
        run = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True)
    said = run.stdout + run.stderr
    assert server.stats.refused == [], said
    assert run.returncode == 0, said
    (row,) = read_runs([tmp_path / "logs"])
    assert row.passed is not None and row.error is None and row.agent_error is None
    answered = server.stats.answered
    for role in (Role.AGENT, Role.SIMULATOR, Role.VERIFIER):
        assert answered[case.models[role].split("/")[-1]] > 0, (role, dict(answered))
    assert row.tool_calls >= 2  # the loop went on past the first call
