"""``occubench run --agent-command``: an agent program per sample, over its MCP endpoint.

The program (``agent_program.py`` beside this file) uses the MCP client SDK and a
scripted reference policy; run over the ten reference tasks its verdicts and fault logs
equal those of the same policy run as a built-in agent. A program that hangs is stopped
at the limit and one that crashes is an error, never a failure. The sample's endpoint
answers only its token: another local process that finds the port gets 401. A daemon a
program leaves behind (double-forked into a session of its own) is killed with it, and
one that holds the program's output open does not hang the run. An instruction too
large for an environment variable, or holding a NUL byte, reaches the program in its file.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import sys
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log
from typer.testing import CliRunner

from occubench.cli import _common, app
from occubench.config import EvalOptions, RunConfig
from occubench.dataset import load_dataset, reference_suite_dir, write_dataset
from occubench.errors import ExitCode
from occubench.results import SampleRow, read_runs
from occubench.roles import Role
from occubench.scale import run_eval
from serving.agent_runs import command, run_args

PLAIN = Path(__file__).with_name("plain_program.py")
HANG_BOUND = 300
"""Seconds after which a test that should have ended fails instead of hanging."""
runner = CliRunner()


@pytest.fixture(autouse=True)
def wide_console():
    for console in (_common.console, _common.err_console):
        console.width = 200


def plain(mode: str, *args: str | Path) -> str:
    """The plain test program's command line, its paths quoted."""
    return shlex.join([sys.executable, str(PLAIN), mode, *map(str, args)])


def alive(pid: int) -> bool:
    """Whether ``pid`` runs: a zombie (ended, its parent not having reaped it) does not."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


@contextmanager
def bounded(seconds: int = HANG_BOUND) -> Iterator[None]:
    """Fail with TimeoutError instead of hanging (a bound on a hang, not on a duration)."""

    def expired(signum: int, frame: object) -> None:
        raise TimeoutError(f"still running after {seconds} s: the run hung")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def built_in(log_dir: Path, agent: str, **settings) -> dict[int, SampleRow]:
    config = RunConfig(dataset="reference", with_plan=True, protocol="occubench", **settings)
    outcome = run_eval(
        "occubench/occubench",
        config.task_args(),
        log_dir=str(log_dir),
        model=f"occubench/{agent}",
        roles={Role.SIMULATOR: "occubench/canned"},
        options=EvalOptions(),
    )
    return {int(r.task_id): r for r in read_runs(outcome.logs)}


def by_task(log_dir: Path) -> dict[int, SampleRow]:
    return {int(r.task_id): r for r in read_runs([log_dir])}


def test_program_verdicts_equal_the_built_in_agent_over_the_reference_suite(tmp_path):
    args = run_args(
        tmp_path / "program",
        "--env-mode",
        "E3",
        "--fault-count",
        "1",  # one event: explicit (trusting retries, passes) or implicit (it is fooled)
        "--agent-command",
        command("submit", "trusting"),
    )
    result = runner.invoke(app, args, terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "Completion rate by industry" in result.output
    program = by_task(tmp_path / "program")
    reference = built_in(tmp_path / "built-in", "trusting", env_mode="E3", fault_count=1)
    assert sorted(program) == sorted(reference) == list(range(1001, 1011))
    assert all(r.error is None for r in program.values())
    verdicts = {t: r.passed for t, r in program.items()}
    assert verdicts == {t: r.passed for t, r in reference.items()}
    assert set(verdicts.values()) == {True, False}  # a meaningful comparison
    for task, row in program.items():
        assert row.faults == reference[task].faults and row.tool_calls == reference[task].tool_calls
        assert row.agent_model.startswith("command: ") and row.stop_reason == "answered"
    # the same command again resumes: nothing left to run
    logs = sorted((tmp_path / "program").rglob("*.eval"))
    again = runner.invoke(app, args, terminal_width=200)
    assert again.exit_code == 0 and sorted((tmp_path / "program").rglob("*.eval")) == logs


def test_program_through_the_openai_endpoint_is_counted_in_the_log(tmp_path):
    """The program's model calls go through Inspect: the agent model's tokens are logged."""
    args = run_args(
        tmp_path,
        "--tasks",
        "1001,1004",
        "--env-mode",
        "E1",
        "--agent-model",
        "occubench/careful",
        "--agent-command",
        command("bridge"),
    )
    result = runner.invoke(app, args, terminal_width=200)
    assert result.exit_code == 0, result.output
    rows = by_task(tmp_path)
    reference = built_in(tmp_path / "built-in", "careful", env_mode="E1", task_ids=[1001, 1004])
    for task, row in rows.items():
        assert row.error is None and row.passed is True
        assert row.faults == reference[task].faults
        assert row.tokens["agent"] > 0 and row.tokens["simulator"] > 0
        assert row.agent_model == f"command: {command('bridge')} [occubench/careful]"
    log = read_eval_log(rows[1001].log)
    sample = next(s for s in log.samples if s.id == 1001)
    assert "occubench/careful" in (sample.model_usage or {})
    assert sample.store["ServedSession:bridged"] is True


@pytest.mark.parametrize(
    "mode",
    [
        pytest.param(("anthropic", "{anthropic_base_url}"), id="anthropic-messages"),
        pytest.param(("responses",), id="openai-responses"),
    ],
)
def test_program_on_the_anthropic_and_responses_wires_is_counted_in_the_log(tmp_path, mode):
    """The same as over chat completions, streamed on the wires Claude Code and Codex use."""
    program = command(mode[0], "careful", *mode[1:])
    args = run_args(
        tmp_path,
        "--tasks",
        "1001",
        "--env-mode",
        "E1",
        "--agent-model",
        "occubench/careful",
        "--agent-command",
        program,
    )
    with bounded():
        result = runner.invoke(app, args, terminal_width=200)
    assert result.exit_code == 0, result.output
    row = by_task(tmp_path)[1001]
    assert row.error is None and row.passed is True
    assert row.tokens["agent"] > 0
    sample = read_eval_log(row.log).samples[0]
    assert "occubench/careful" in (sample.model_usage or {})
    assert sample.store["ServedSession:answer_source"] == "submitted"


def test_last_stdout_line_is_the_answer(tmp_path):
    args = run_args(tmp_path, "--tasks", "1002", "--agent-command", command("stdout"))
    assert runner.invoke(app, args, terminal_width=200).exit_code == 0
    row = by_task(tmp_path)[1002]
    assert row.passed is True and row.stop_reason == "answered"
    sample = read_eval_log(row.log).samples[0]
    assert sample.store["ServedSession:answer_source"] == "stdout"
    assert sample.scores["occubench_scorer"].answer.startswith("Station N4-S2")  # not "working..."


def test_the_endpoint_answers_only_the_holder_of_the_sample_token(tmp_path):
    """A process with the port but not the token reads nothing and cannot submit."""
    report = tmp_path / "intruder.json"
    program = command("intruder", "careful", "{token}", str(report))
    args = run_args(tmp_path / "logs", "--tasks", "1002", "--agent-command", program)
    result = runner.invoke(app, args, terminal_width=200)
    assert result.exit_code == 0, result.output
    seen = json.loads(report.read_text())
    assert seen["statuses"] == {"initialize": 401, "submit": 401, "wrong token": 401, "stream": 401}
    assert seen["leaked"] is False
    assert seen["placeholder is the token"] is True
    # the program, with the token, worked the task and its submission is the answer
    row = by_task(tmp_path / "logs")[1002]
    assert row.error is None and row.passed is True and row.stop_reason == "answered"
    sample = read_eval_log(row.log).samples[0]
    assert sample.store["ServedSession:answer_source"] == "submitted"
    assert "{token}" in row.agent_model  # the command as written, not as filled
    # the token reached no log: the recorded command line shows it redacted
    assert "[redacted]" in sample.store["ServedSession:program"]["argv"]
    with zipfile.ZipFile(row.log) as archive:
        for member in archive.namelist():
            assert seen["token"].encode() not in archive.read(member), member


def test_a_hanging_program_is_stopped_at_the_limit_and_is_an_error(tmp_path):
    """The program and the daemon it left (holding its output open) are both stopped."""
    pid_file, daemon_file = tmp_path / "pid", tmp_path / "daemon-pid"
    args = run_args(
        tmp_path / "logs",
        "--tasks",
        "1003",
        "--retry-on-error",
        "0",
        "--agent-time-limit",
        "15",
        "--agent-command",
        plain("hang", pid_file, daemon_file),
    )
    with bounded():
        result = runner.invoke(app, args, terminal_width=200)
    assert result.exit_code == ExitCode.SAMPLE_ERRORS, result.output
    assert "1 sample(s) ended in an infrastructure error" in result.output
    row = by_task(tmp_path / "logs")[1003]
    assert row.passed is None and row.error_source == "agent"
    assert "time limit of 15 s" in (row.error or "")
    assert not alive(int(pid_file.read_text()))  # stopped, not left running
    assert not alive(int(daemon_file.read_text()))


@pytest.mark.parametrize(
    "how",
    [
        pytest.param("", id="holding-the-output"),
        pytest.param("clean", id="holding-the-output-with-an-empty-environment"),
        pytest.param("closed", id="output-closed"),
    ],
)
def test_a_daemon_left_by_a_program_that_answered_is_killed(tmp_path, how):
    """A double-forked, setsid daemon is found (the pipes it holds, the environment it
    inherited) and killed; the program's answer is graded as any."""
    daemon_file = tmp_path / "daemon-pid"
    args = run_args(
        tmp_path / "logs",
        "--tasks",
        "1002",
        "--agent-time-limit",
        "120",
        "--agent-command",
        plain("escape", daemon_file, how),
    )
    with bounded():
        result = runner.invoke(app, args, terminal_width=200)
    assert result.exit_code == 0, result.output
    row = by_task(tmp_path / "logs")[1002]
    assert row.error is None and row.stop_reason == "answered"
    sample = read_eval_log(row.log).samples[0]
    assert sample.store["ServedSession:answer_source"] == "stdout"
    assert sample.scores["occubench_scorer"].answer == "escaped, and this is my answer"
    assert not alive(int(daemon_file.read_text()))


def test_reading_stops_even_when_a_process_holding_the_output_is_not_found(tmp_path, monkeypatch):
    """Past what the search finds (see ``ProgramProcesses``' limits), the wait is bounded:
    the sample ends with the program's answer and the unseen daemon lives on."""
    monkeypatch.setattr("occubench.serving._processes.ProgramProcesses.find", lambda self: [])
    daemon_file = tmp_path / "daemon-pid"
    args = run_args(
        tmp_path / "logs",
        "--tasks",
        "1002",
        "--agent-time-limit",
        "120",
        "--agent-command",
        plain("escape", daemon_file),
    )
    try:
        with bounded():
            result = runner.invoke(app, args, terminal_width=200)
        assert result.exit_code == 0, result.output
        row = by_task(tmp_path / "logs")[1002]
        assert row.error is None and row.stop_reason == "answered"
        assert alive(int(daemon_file.read_text()))  # not stopped: the bound ended the wait
    finally:
        if daemon_file.exists():
            os.kill(int(daemon_file.read_text()), signal.SIGKILL)


@pytest.mark.parametrize(
    ("extra", "in_variable"),
    [
        pytest.param("", True, id="ordinary"),
        pytest.param(" Appendix: " + "x" * 300_000, False, id="300-kB"),
        pytest.param(" Ignore this: \x00.", False, id="NUL-byte"),
    ],
)
def test_the_instruction_reaches_the_program_whatever_its_size_or_bytes(
    tmp_path, extra, in_variable
):
    """In its file always; in OCCUBENCH_INSTRUCTION too when a variable can hold it."""
    reference = load_dataset(reference_suite_dir(), task_ids=[1002])
    (task,) = reference.tasks
    instruction = task.agent_instruction + extra
    task = task.model_copy(update={"agent_instruction": instruction})
    dataset = write_dataset(
        tmp_path / "dataset", [task], reference.envs.values(), reference.scenarios.values()
    )
    seen = tmp_path / "seen.json"
    args = run_args(tmp_path / "logs", "--agent-command", plain("instruction", seen))
    args[args.index("reference")] = str(dataset)
    with bounded():
        result = runner.invoke(app, args, terminal_width=200)
    assert result.exit_code == 0, result.output
    row = by_task(tmp_path / "logs")[1002]
    assert row.error is None and row.stop_reason == "answered"
    given = json.loads(seen.read_text(encoding="utf-8"))
    assert instruction in given["file"]
    assert given["variable"] == (given["file"] if in_variable else None)


def test_a_crashing_program_is_an_error_not_a_failure(tmp_path):
    args = run_args(
        tmp_path,
        "--tasks",
        "1004,1005",
        "--retry-on-error",
        "1",
        "--agent-command",
        command("crash"),
    )
    result = runner.invoke(app, args, terminal_width=200)
    assert result.exit_code == ExitCode.SAMPLE_ERRORS, result.output
    rows = by_task(tmp_path)
    for row in rows.values():
        assert row.passed is None and row.error_source == "agent"
        assert "exited with code 3" in (row.error or "")
        assert "crashed on purpose" in (row.error or "")
    sample = read_eval_log(rows[1004].log).samples[0]
    assert len(sample.error_retries or []) == 1  # retried like any errored sample


def test_bad_agent_settings_are_one_clear_message():
    result = runner.invoke(
        app,
        [
            "run",
            "--dataset",
            "reference",
            "--simulator-model",
            "occubench/canned",
            "--agent",
            "react",
            "--agent-command",
            "true",
        ],
    )
    assert result.exit_code == 2 and "not both" in result.output
    missing = runner.invoke(
        app, ["run", "--dataset", "reference", "--simulator-model", "occubench/canned"]
    )
    assert missing.exit_code == 2 and "--agent-model is required" in missing.output
