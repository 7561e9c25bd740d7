"""The wire matrix as a table: every wire x both protocols x E0/E3, each role's requests.

Runs ``occubench run`` on release task 11 (the test fixture's release layout) once per
cell, the agent, simulator and verifier all on one provider's own API through its strict
local server (``occubench.testing.WIRE_CASES``), and prints one Markdown row per cell: the
exit code, samples scored, and per role the requests answered and those the wire
refused, then the first refusal. ``tests/agent/test_wire_matrix.py`` asserts the same.

    python benchmarks/wire_matrix.py [--wires anthropic,google] [--protocols paper] \
        [--run-options "--no-preflight"]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the release-layout fixture's writer

from occubench.results import read_runs  # noqa: E402
from occubench.roles import Role  # noqa: E402
from occubench.testing import WIRE_CASES, WireCase  # noqa: E402
from release_layout import write_release_dataset  # noqa: E402

OCCUBENCH = str(Path(sys.executable).with_name("occubench"))
ROLES = (Role.AGENT, Role.SIMULATOR, Role.VERIFIER)


def cell(
    case: WireCase, protocol: str, mode: str, dataset: Path, work: Path, extra: list[str]
) -> str:
    """One run; its Markdown row."""
    logs = work / f"{case.wire.value}-{protocol}-{mode}"
    server = case.server()
    with server:
        env = {**os.environ, **case.environment(server)}
        args = [OCCUBENCH, "run", *case.model_options(), *case.agent_settings,
                "--dataset", str(dataset), "--tasks", "11", "--protocol", protocol,
                "--env-mode", mode, "--workers", "1", "--display", "none",
                "--log-dir", str(logs), *extra]  # fmt: skip
        run = subprocess.run(args, cwd=work, env=env, capture_output=True, text=True)
    rows = read_runs([logs]) if logs.exists() else []
    scored = sum(r.passed is not None for r in rows)
    passed = sum(bool(r.passed) for r in rows)
    calls = sum(r.tool_calls for r in rows)
    graded_on_error = sum(r.agent_error is not None for r in rows)
    refused = server.stats.refused
    counts = []
    for role in ROLES:
        name = case.models[role].split("/")[-1]
        counts.append(f"{server.stats.answered[name]}")
    first = refused[0][:90].replace("|", "/") if refused else "-"
    return (
        f"| {case.wire.value} | {protocol} | {mode} | {run.returncode} | {scored} | {passed} | "
        f"{calls} | {graded_on_error} | {' / '.join(counts)} | {len(refused)} | {first} |"
    )


def main() -> None:
    """Print the matrix."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--wires", default=",".join(c.wire.value for c in WIRE_CASES))
    parser.add_argument("--protocols", default="paper,occubench")
    parser.add_argument("--modes", default="E0,E3")
    parser.add_argument("--run-options", default="", help="more options for every run")
    args = parser.parse_args()
    wires = set(args.wires.split(","))
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        dataset = write_release_dataset(work / "release")
        print(
            "| wire | protocol | mode | exit | scored | passed | tool calls | graded on an "
            "agent error | answered agent / simulator / verifier | refused | first refusal |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for case in WIRE_CASES:
            if case.wire.value not in wires:
                continue
            for protocol in args.protocols.split(","):
                for mode in args.modes.split(","):
                    extra = args.run_options.split()
                    print(cell(case, protocol, mode, dataset, work, extra), flush=True)


if __name__ == "__main__":
    main()
