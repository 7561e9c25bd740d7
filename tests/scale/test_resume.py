"""A resume pays only for calls never answered (call journals, ``occubench.calls``).

Four release tasks, each agent stopped at its third turn by the test server (every
sample in flight, however fast the machine), then the run is interrupted (SIGINT) or its
shard workers killed (SIGKILL), and the same command run again. The resume must send
exactly the requests an uninterrupted run sends less those the journals answered, say
how many calls it saved, leave no journal behind, and give the verdicts of an
uninterrupted run. On the chat wire, and with the agent on the strict Anthropic server
with thinking on (its signed thinking blocks replayed byte for byte, or it refuses them).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import ModelOutput

import resume_runs
from conftest import HANG_BOUND, RELEASE_IDS
from occubench.calls import JOURNAL_FOLDER
from occubench.config import EvalOptions, RunConfig
from occubench.errors import ExitCode
from occubench.results import read_runs
from occubench.scale import Executor, RunSpec, execute, plan_shards, start_shard
from resume_runs import AGENT, CLAUDE, Servers, children
from scale.test_shards import needs_ray, ray_temp  # noqa: F401 - the fixture, used by name

PROGRAM = Path(__file__).parents[1] / "serving" / "agent_program.py"
"""The test agent program (``tests/serving``): its ``bridge`` mode asks the agent's model
through the endpoint occubench offers it."""
TASKS = RELEASE_IDS[:4]  # 11, 24, 26, 32
HOLD_TURN = 3


@contextmanager
def servers(wire: str, tmp_path: Path) -> Iterator[Servers]:
    """``resume_runs.servers`` holding each agent request at ``HOLD_TURN``; on the Anthropic
    wire, every replayed thinking block must have been accepted."""
    with resume_runs.servers(wire, HOLD_TURN, {"TMPDIR": str(tmp_path)}) as served:
        yield served
        assert served.refused() == []


def command(
    wire: str, release_dir: Path, logs: Path, workers: int = 1, extra: tuple[str, ...] = ()
) -> list[str]:
    return resume_runs.command(wire, release_dir, TASKS, logs, workers, extra)


def start_held(run_command: list[str], served: Servers) -> subprocess.Popen[bytes]:
    """The run started, each of its samples' agent held at its turn."""
    return resume_runs.start_held(run_command, served, len(TASKS), HANG_BOUND)


def interrupted(run_command: list[str], served: Servers) -> str:
    """The output of the run stopped by SIGINT once every sample is held (its exit: the
    interrupted run's)."""
    run = start_held(run_command, served)
    run.send_signal(signal.SIGINT)
    out, _ = run.communicate(timeout=HANG_BOUND)
    assert run.returncode == ExitCode.INTERRUPTED, out.decode()
    return out.decode()


def journals(logs: Path) -> list[Path]:
    return sorted(logs.rglob(f"{JOURNAL_FOLDER}/*/*.jsonl"))


def journaled(logs: Path) -> tuple[int, int]:
    """The calls the journals under ``logs`` hold: (all, the agent's)."""
    entries = [
        ModelOutput.model_validate_json(json.loads(line)["output"])
        for path in journals(logs)
        for line in path.read_text().splitlines()[1:]
    ]
    agent = sum(e.model in (AGENT, CLAUDE) or CLAUDE in e.model for e in entries)
    return len(entries), agent


def verdicts(logs: Path) -> list[tuple[Any, ...]]:
    rows = read_runs([logs])
    return sorted((r.task_id, r.passed, tuple(r.trajectory), r.error) for r in rows)


def finish(
    wire: str,
    release_dir: Path,
    tmp_path: Path,
    served: Servers,
    logs: Path,
    workers: int = 1,
    extra: tuple[str, ...] = (),
    clean_extra: tuple[str, ...] | None = None,
) -> None:
    """Resume the run in ``logs`` and check it against an uninterrupted run.

    ``extra``: the run's further options; ``clean_extra``: the uninterrupted run's (default:
    the same). With a world, the journaled simulator calls the world answers are not asked.
    """
    total, agent = journaled(logs)
    assert len(journals(logs)) == len(TASKS) and agent >= len(TASKS) * (HOLD_TURN - 1)
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in journals(logs))
    served.release()
    before = served.agent_requests()
    resumed = subprocess.run(
        command(wire, release_dir, logs, workers, extra),
        env=served.env,
        capture_output=True,
        text=True,
    )
    assert resumed.returncode == ExitCode.OK, resumed.stdout + resumed.stderr
    resume_requests = served.agent_requests() - before
    said = re.search(r"Resumed: (\d+) model call\(s\)", resumed.stdout)
    assert said is not None, resumed.stdout
    if "--world" in extra:  # the world answers what it recorded: those are not asked
        assert agent <= int(said.group(1)) <= total
    else:
        assert int(said.group(1)) == total
    assert journals(logs) == [] and not list(logs.rglob(JOURNAL_FOLDER))
    before = served.agent_requests()
    clean = tmp_path / "clean"
    whole = subprocess.run(
        command(wire, release_dir, clean, workers, extra if clean_extra is None else clean_extra),
        env=served.env,
        capture_output=True,
        text=True,
    )
    assert whole.returncode == ExitCode.OK, whole.stdout + whole.stderr
    uninterrupted = served.agent_requests() - before
    assert "Resumed:" not in whole.stdout
    assert resume_requests == uninterrupted - agent  # paid only for calls never answered
    assert verdicts(logs) == verdicts(clean)
    assert all(v[1] is not None for v in verdicts(logs))


@pytest.mark.parametrize("wire", ["chat", "anthropic"])
def test_a_resume_after_ctrl_c_pays_only_for_calls_never_answered(release_dir, tmp_path, wire):
    logs = tmp_path / "logs"
    with servers(wire, tmp_path) as served:
        out = interrupted(command(wire, release_dir, logs), served)
        assert f"0 of {len(TASKS)} samples finished" in out
        finish(wire, release_dir, tmp_path, served, logs)


def test_a_resume_after_its_shards_were_killed_pays_only_for_calls_never_answered(
    release_dir, tmp_path
):
    logs = tmp_path / "logs"
    with servers("chat", tmp_path) as served:
        run = start_held(command("chat", release_dir, logs, workers=2), served)
        workers = children(run.pid)
        assert len(workers) == 2
        for pid in workers:
            os.killpg(pid, signal.SIGKILL)  # each worker runs in its own process group
        out, _ = run.communicate(timeout=HANG_BOUND)
        assert run.returncode != ExitCode.OK, out.decode()
        finish("chat", release_dir, tmp_path, served, logs, workers=2)


def test_a_torn_or_edited_journal_is_ignored_and_its_sample_pays_again(release_dir, tmp_path):
    logs = tmp_path / "logs"
    with servers("chat", tmp_path) as served:
        interrupted(command("chat", release_dir, logs), served)
        torn, edited, *kept = journals(logs)
        torn.write_bytes(torn.read_bytes()[:-5])
        lines = edited.read_text().splitlines(keepends=True)
        lines[1] = lines[1].replace('"key":"', '"key":"0', 1)  # its checksum no longer holds
        edited.write_text("".join(lines))
        saved = sum(len(p.read_text().splitlines()) - 1 for p in kept)
        served.release()
        resumed = subprocess.run(
            command("chat", release_dir, logs), env=served.env, capture_output=True, text=True
        )
        clean = tmp_path / "clean"
        whole = subprocess.run(
            command("chat", release_dir, clean), env=served.env, capture_output=True, text=True
        )
    assert resumed.returncode == ExitCode.OK, resumed.stdout + resumed.stderr
    said = " ".join(resumed.stdout.split())
    assert f"Resumed: {saved} model call(s)" in said
    warned = [line for line in resumed.stderr.splitlines() if "call journal ignored" in line]
    assert sorted(warned) == sorted(
        [
            f"Warning: call journal ignored (its calls were asked again): {torn}: its last "
            "line is cut short (torn)",
            f"Warning: call journal ignored (its calls were asked again): {edited} line 2: its "
            "checksum does not match",
        ]
    )
    assert whole.returncode == ExitCode.OK
    assert verdicts(logs) == verdicts(clean)


@pytest.mark.parametrize("setup", ["world", "agent-command"])
def test_a_resume_replays_journals_with_a_world_and_with_an_agent_program(
    release_dir, tmp_path, setup
):
    """A world in record mode (its answers recorded before the interrupt are hits on
    resume), and an agent program whose calls go through the bridge (journaled alike)."""
    if setup == "world":
        extra: tuple[str, ...] = ("--world", str(tmp_path / "world"), "--world-mode", "record")
        clean: tuple[str, ...] = ("--world", str(tmp_path / "world2"), "--world-mode", "record")
    else:
        program = shlex.join([sys.executable, str(PROGRAM), "bridge", AGENT])
        extra = clean = ("--agent-command", program)
    logs = tmp_path / "logs"
    with servers("chat", tmp_path) as served:
        interrupted(command("chat", release_dir, logs, extra=extra), served)
        finish("chat", release_dir, tmp_path, served, logs, extra=extra, clean_extra=clean)


@needs_ray
@pytest.mark.usefixtures("ray_temp")
def test_a_shard_killed_locally_resumes_on_ray_from_its_journals(
    release_dir, tmp_path, monkeypatch
):
    import ray

    with servers("chat", tmp_path) as served:
        monkeypatch.setenv("LOCAL_BASE_URL", served.chat.base_url)  # inherited by the workers
        monkeypatch.setenv("LOCAL_API_KEY", "test-key")
        run = RunSpec(
            agent=f"openai-api/local/{AGENT}",
            roles={"simulator": "openai-api/local/canned"},
            config=RunConfig(dataset=str(release_dir), task_ids=TASKS),
            options=EvalOptions(log_buffer=1),
            log_dir=str(tmp_path / "logs"),
        )
        (shard,) = plan_shards(run, 1)
        victim = start_shard(shard, tmp_path / "victim")
        resume_runs.wait_held(victim, served, len(TASKS), HANG_BOUND)
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait()
        total, agent = journaled(tmp_path / "logs")
        assert agent >= len(TASKS) * (HOLD_TURN - 1)
        served.release()
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        try:
            (result,) = execute([shard], Executor.RAY)
        finally:
            ray.shutdown()
    assert result.success, result.error
    assert result.resumed_calls == total
    assert journals(tmp_path / "logs") == []
    assert sorted(r.task_id for r in result.rows) == TASKS and all(
        r.passed is not None for r in result.rows
    )
