"""Shared fixtures: a dataset in the release layout, the public sample, offline models.

The default suite reads ``RELEASE_DIR``, a dataset written in the public release's layout
from the project's own reference suite (``release_layout.py``), so a bare clone's test
command needs nothing beside it. Compatibility tests on the public OccuBench sample take
the ``public_sample`` fixture: it is ``$OCCUBENCH_SAMPLE`` or ``../shared/occubench-sample``
when present, and those tests are skipped, saying so, otherwise.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from release_layout import RELEASE_IDS, write_release_dataset

_FIXTURE_ROOT = Path(tempfile.mkdtemp(prefix="occubench-release-"))
atexit.register(shutil.rmtree, _FIXTURE_ROOT, ignore_errors=True)
RELEASE_DIR = write_release_dataset(_FIXTURE_ROOT / "dataset")
"""The fixture dataset (release layout), written once per test session."""

PUBLIC_SAMPLE_DIR = Path(
    os.environ.get(
        "OCCUBENCH_SAMPLE", Path(__file__).resolve().parents[2] / "shared" / "occubench-sample"
    )
)
PUBLIC_SAMPLE_IDS = [11, 24, 26, 32, 46, 47, 51, 70, 119, 154]
SCRIPTED_ROLES = {"simulator": "occubench/echo-simulator", "verifier": "occubench/scripted-judge"}
SCRIPTED_MODEL_ARGS = [
    "--agent-model",
    "occubench/schema-agent",
    "--simulator-model",
    "occubench/echo-simulator",
    "--verifier-model",
    "occubench/scripted-judge",
]
"""``occubench run``'s options for the offline scripted models, in process."""
HTTP_MODEL_ARGS = [
    "--agent-model",
    "openai-api/local/schema-agent",
    "--simulator-model",
    "openai-api/local/echo-simulator",
    "--verifier-model",
    "openai-api/local/scripted-judge",
]
"""The same models through the local OpenAI-compatible test server (``LOCAL_*`` env)."""
HANG_BOUND = 300
"""Seconds after which a wait that should have ended fails: a bound on a hang, never a margin
that a test's outcome depends on (tests wait for counts and pids, not for durations)."""

__all__ = ["RELEASE_IDS"]

settings.register_profile(
    "suite",
    deadline=None,  # no time limit per example: a busy machine runs one slowly
    database=None,  # no example database: each run of the suite starts afresh
    suppress_health_check=[HealthCheck.too_slow],  # nor on generating them
)
settings.load_profile("suite")


@pytest.fixture(scope="session")
def release_dir() -> Path:
    """The fixture dataset in the release layout (read-only by convention)."""
    return RELEASE_DIR


@pytest.fixture(scope="session")
def public_sample() -> Path:
    """The public OccuBench sample; the test is skipped when it is absent."""
    if not (PUBLIC_SAMPLE_DIR / "eval_benchmark_solvable.jsonl").is_file():
        reason = f"public OccuBench sample not found at {PUBLIC_SAMPLE_DIR}"
        pytest.skip(reason=f"{reason} (set OCCUBENCH_SAMPLE to its folder)")
    return PUBLIC_SAMPLE_DIR


@pytest.fixture
def release_copy(tmp_path: Path) -> Path:
    """A writable copy of the fixture dataset, for tests that break it."""
    return write_release_dataset(tmp_path / "dataset")


@pytest.fixture
def public_sample_copy(public_sample: Path, tmp_path: Path) -> Path:
    """A writable copy of the public sample, for tests that break it."""
    target = tmp_path / "public-sample"
    shutil.copytree(public_sample, target)
    for path in target.rglob("*"):
        path.chmod(0o644 if path.is_file() else 0o755)
    return target


def tool(name: str, description: str = "", **strings: str) -> dict:
    """A tool definition whose parameters are all required strings (name -> description)."""
    return {
        "name": name,
        "description": description or f"The {name} action.",
        "parameters": {
            "type": "object",
            "required": list(strings),
            "properties": {k: {"type": "string", "description": v} for k, v in strings.items()},
        },
    }


def make_dataset(root: Path, tools: list[dict], task_ids=(1,), **task_fields) -> Path:
    """A dataset the test makes (release layout): one env with ``tools``, one task per id.

    The tasks have no checks (a judge decides) unless ``task_fields`` give some.
    """
    from occubench.dataset import EnvConfig, Scenario, TaskRecord, write_dataset

    env = EnvConfig(
        environment_name="env_test",
        world_model_system_prompt="You simulate the records system of an office.",
        action_set_definitions=tools,
        task_initial_state={"records": [{"id": "A-1", "balance": 5120}]},
        state_description={"records": "The office's records."},
    )
    fields = {
        "difficulty_level": 1,
        "task_scenario_name": "Office Clerk",
        "agent_instruction": "Report the balance of record A-1.",
        "env_name": env.environment_name,
        "verification_plan": "The agent looked the record up and reported its balance.",
        **task_fields,
    }
    tasks = [TaskRecord(task_id=i, **fields) for i in task_ids]
    scenario = Scenario(category="Office", domain="Records", task_scenario_name="Office Clerk")
    return write_dataset(root, tasks, [env], [scenario])


def rewrite_json(path: Path, change) -> None:
    """Load a JSON file, let ``change`` edit it, write it back."""
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def run_task(
    log_dir: Path, *, agent="occubench/schema-agent", roles=None, eval_args=None, **task_args
):
    """Run the occubench task on the fixture dataset with offline models; returns the EvalLog.

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

    task_args.setdefault("dataset", str(RELEASE_DIR))
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
    from occubench.results import SampleRow

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
