"""Shared fixtures: the public sample dataset and offline model helpers."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

SAMPLE_DIR = Path(
    os.environ.get(
        "OCCUBENCH_SAMPLE", Path(__file__).resolve().parents[2] / "shared" / "occubench-sample"
    )
)
SAMPLE_IDS = [11, 24, 26, 32, 46, 47, 51, 70, 119, 154]
SCRIPTED_ROLES = {"simulator": "occubench/echo-simulator", "verifier": "occubench/scripted-judge"}


@pytest.fixture(scope="session")
def sample_dir() -> Path:
    if not (SAMPLE_DIR / "eval_benchmark_solvable.jsonl").is_file():
        pytest.fail(f"the public sample is missing at {SAMPLE_DIR} (set OCCUBENCH_SAMPLE)")
    return SAMPLE_DIR


@pytest.fixture
def sample_copy(sample_dir: Path, tmp_path: Path) -> Path:
    """A writable copy of the sample, for tests that break it."""
    target = tmp_path / "dataset"
    shutil.copytree(sample_dir, target)
    for path in target.rglob("*"):
        path.chmod(0o644 if path.is_file() else 0o755)
    return target


def rewrite_json(path: Path, change) -> None:
    """Load a JSON file, let ``change`` edit it, write it back."""
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def run_task(
    log_dir: Path, *, agent="occubench/schema-agent", roles=None, eval_args=None, **task_args
):
    """Run the occubench task on the sample with offline models; returns the EvalLog.

    The run follows the occubench protocol unless ``protocol`` says otherwise: these
    tests check occubench's hardened behaviour (code-placed faults, validated arguments);
    tests of the paper protocol name it. Models named by string are built fresh (not
    memoized), so a model that talks to a test server never outlives that server in
    Inspect's model cache.
    """
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    from occubench.task import occubench

    def fresh(model):
        return get_model(model, memoize=False) if isinstance(model, str) else model

    task_args.setdefault("dataset", str(SAMPLE_DIR))
    task_args.setdefault("protocol", "occubench")
    logs = inspect_eval(
        occubench(**task_args),
        model=fresh(agent),
        model_roles={k: fresh(v) for k, v in (SCRIPTED_ROLES if roles is None else roles).items()},
        log_dir=str(log_dir),
        display="none",
        **(eval_args or {}),
    )
    return logs[0]


def replay(*outputs):
    """An occubench/replay model answering with ``outputs`` in turn."""
    from inspect_ai.model import get_model

    return get_model("occubench/replay", outputs=list(outputs))


def sample_row(**fields):
    """A hand-built SampleRow: neutral defaults, overridden by ``fields``."""
    from occubench.analysis import SampleRow

    defaults = dict(
        log="file:///x.eval",
        run_id="run1",
        agent_model="a/one",
        simulator_model="s/sim",
        verifier_model=None,
        env_mode="E0",
        fault_count=2,
        fault_duration=2,
        fault_engine="code",
        seed=0,
        epoch=1,
        task_id=1,
        scenario="S",
        industry="I",
        domain="D",
        difficulty=1,
        passed=True,
        error=None,
        stop_reason="answered",
        tool_calls=3,
        wall_time=1.0,
    )
    return SampleRow(**{**defaults, **fields})
