"""Shared fixtures: a dataset in the release layout, the public sample, offline models.

The default suite reads ``RELEASE_DIR``, a dataset written in the public release's layout
from the project's own reference suite (``release_layout.py``), so a bare clone's test
command needs nothing beside it. Compatibility tests on the public OccuBench sample take
the ``public_sample`` fixture: it is ``$OCCUBENCH_SAMPLE`` or ``../shared/occubench-sample``
when present, and those tests are skipped, saying so, otherwise.

The suite holds on a busy machine and leaves nothing behind (CONTRIBUTING.md, "Tests that
hold under load"): waits are bounded by ``HANG_BOUND``, never timed; the session fails when
the checkout gained files; logs that several files read are built once (``shared_folder``).
"""

from __future__ import annotations

import atexit
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from release_layout import RELEASE_IDS, fixture_release_dir, write_release_dataset

RELEASE_DIR = fixture_release_dir()
"""The fixture dataset (release layout), written once per test process."""

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
REFERENCE_MODEL_ARGS = [
    "--agent-model",
    "occubench/careful",
    "--simulator-model",
    "occubench/canned",
    "--verifier-model",
    "occubench/scripted-judge",
]
"""The same for the careful reference agent under the canned simulator."""
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
HANG_LIMIT = 60
"""``--attempt-timeout`` of a run whose server hangs on purpose, where the client must give
up: far beyond any answer of the local server however busy the machine (20 s was reached
once, at a load of 20 on two cores). A run without a hang takes ``HANG_BOUND``."""

__all__ = ["RELEASE_IDS"]

settings.register_profile(
    "suite",
    deadline=None,  # no time limit per example: a busy machine runs one slowly
    database=None,  # no example database: each run of the suite starts afresh
    suppress_health_check=[HealthCheck.too_slow],  # nor on generating them
)
settings.load_profile("suite")

PARALLEL = 4
"""Parallel workers of the default run: most tests wait on subprocesses and local servers,
so more workers than cores pay (four on two cores)."""


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """Run in parallel by default: ``PARALLEL`` workers, each file whole on one worker.

    Unless ``-n`` is given (``-n 0``: in this process), pytest-xdist is left out
    (``-p no:xdist``) or absent, or ``--pdb`` asks for one process.
    """
    if not config.pluginmanager.has_plugin("xdist") or hasattr(config, "workerinput"):
        return
    if config.option.numprocesses is None and not config.getoption("usepdb", False):
        config.option.numprocesses = PARALLEL
        if config.option.dist == "no":
            config.option.dist = "loadfile"


CHECKOUT = Path(__file__).resolve().parents[1]
CACHES = {"__pycache__", ".pytest_cache"}
"""Folders Python and pytest keep beside the code: not written by a test."""
_LEFT_BEFORE = pytest.StashKey[set[str] | None]()
_LEFT_NEW = pytest.StashKey[list[str]]()


def checkout_leftovers() -> set[str] | None:
    """Untracked and ignored paths of the checkout (caches aside); None outside a git clone.

    Untracked files are listed one by one; ignored ones by their topmost ignored folder.
    """

    def listed(*args: str) -> list[str] | None:
        try:
            done = subprocess.run(["git", *args], cwd=CHECKOUT, capture_output=True, check=False)
        except OSError:
            return None
        return done.stdout.decode().split("\0") if done.returncode == 0 else None

    untracked = listed("ls-files", "-z", "--others", "--exclude-standard")
    ignored = listed("ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory")
    if untracked is None or ignored is None:
        return None
    return {p for p in untracked + ignored if p and not CACHES.intersection(Path(p).parts)}


def pytest_configure(config: pytest.Config) -> None:
    """What the tools keep between runs goes to a tmp folder, removed at the process's end.

    Inspect's per-user data (traces, sample buffers: ``~/.local/share``) and Hypothesis's
    folder (``.hypothesis/`` in the current folder), for this process and the commands it
    starts.
    """
    folder = Path(tempfile.mkdtemp(prefix="occubench-test-state-"))
    patch = pytest.MonkeyPatch()
    patch.setenv("XDG_DATA_HOME", str(folder / "data"))
    patch.setenv("HYPOTHESIS_STORAGE_DIRECTORY", str(folder / "hypothesis"))
    config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))
    config.add_cleanup(patch.undo)
    # and again at exit: Inspect's exit handlers (registered later, so run earlier) make
    # its folders anew there
    atexit.register(shutil.rmtree, folder, ignore_errors=True)


def _controller(config: pytest.Config) -> bool:
    """Whether this process runs the session (not one of its parallel workers)."""
    return not hasattr(config, "workerinput")


def pytest_sessionstart(session: pytest.Session) -> None:
    if _controller(session.config):
        session.config.stash[_LEFT_BEFORE] = checkout_leftovers()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Fail the session when the tests left files in the checkout (they write to tmp folders)."""
    before = session.config.stash.get(_LEFT_BEFORE, None)
    after = checkout_leftovers() if before is not None else None
    new = sorted(after - before) if before is not None and after is not None else []
    session.config.stash[_LEFT_NEW] = new
    if new:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    new = config.stash.get(_LEFT_NEW, [])
    if new:
        terminalreporter.section("files left in the checkout", red=True)
        terminalreporter.write_line(
            "The tests wrote these outside their tmp folders (give the command a tmp_path):"
        )
        for path in new:
            terminalreporter.write_line(f"  {path}")


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


def shared_folder(
    factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]
) -> Path:
    """A folder of this session's tmp folder, built once for all its parallel workers.

    The first worker to ask builds it (``build(folder)``) while it holds a lock; the others
    wait on the lock, then find it built. It is read-only by convention: a test that
    changes it copies it first.
    """
    base = factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # the session's
    folder, done = root / f"shared-{name}", root / f"shared-{name}.done"
    with open(root / f"shared-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            build(folder)
            done.touch()
    return folder


@pytest.fixture(scope="session")
def demo_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The logs of ``occubench demo``: three reference agents, ten tasks, E0-E3 (120 samples).

    Run once per session, whatever the number of workers; their rows are read once (the
    tables cached beside the logs), so that the tests only read the folder.
    """
    from typer.testing import CliRunner

    from occubench.cli import app
    from occubench.results import read_runs

    def build(folder: Path) -> None:
        result = CliRunner().invoke(app, ["demo", "--log-dir", str(folder)], terminal_width=200)
        assert result.exit_code == 0, result.output
        assert len(read_runs([folder])) == 120

    return shared_folder(tmp_path_factory, "demo", build)


REFERENCE_AGENTS = ["occubench/careful", "occubench/no-retry", "occubench/trusting"]
SIMULATORS = ["occubench/canned", "occubench/inconsistent", "occubench/omitting"]


@pytest.fixture(scope="session")
def simulator_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reference agents on reference tasks 1001-1002 (E0, with the plan) under each of
    ``SIMULATORS``: one folder of logs per simulator, named after it (``canned``...).

    Every agent passes both tasks under canned. The inconsistent simulator shifts a
    repeated read, which careful (three alike reads) never gets while the others take the
    first read; omitting drops the last bed (1001) or fan (1002), which every agent needs.
    Run once per session, whatever the number of workers.
    """
    from occubench.dataset import reference_suite_dir

    def build(folder: Path) -> None:
        for simulator in SIMULATORS:
            run_task(
                folder / simulator.split("/")[1],
                agent=REFERENCE_AGENTS,
                roles={"simulator": simulator},
                dataset=str(reference_suite_dir()),
                task_ids="1001,1002",
                env_mode="E0",
                with_plan=True,
                eval_args={"max_tasks": 3},
            )

    return shared_folder(tmp_path_factory, "simulators", build)


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


@pytest.fixture
def attacker():
    """A page server elsewhere, for cross-site attacks on the local apps.

    ``serve(html)`` puts a page up and returns its port.
    """
    pages: list[bytes] = []

    class Page(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(pages[-1])

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def serve(html: str) -> int:
        pages.append(html.encode())
        return server.server_address[1]

    yield serve
    server.shutdown()
    thread.join()
