"""``occubench play`` in the terminal, driven through its standard input; the report after."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from occubench.cli import app
from occubench.results import log_files, read_runs

runner = CliRunner()
MODELS = [
    "--simulator-model",
    "occubench/canned",
    "--verifier-model",
    "occubench/scripted-judge",
]
E1 = ["--protocol", "occubench", "--env-mode", "E1", "--fault-count", "1", "--fault-duration", "1"]
SESSION = (
    "1\nN4-S2\n"  # the first call meets the fault
    "1\n\nN4-S2\n"  # a required field left empty is asked again
    'list_fans {"panel": "North-4"}\n'
    "get_reentry_limits\nNorth-4\n"
    "answer\nMethane 0.62%, airflow 41.5 m3/s; fan BF-7 at 1460 rpm; limit 1.0%.\n\n"
)


def play(tmp_path: Path, *options: str, lines: str = SESSION):
    command = ["play", "--name", "alice", "--dataset", "reference", *MODELS, *options]
    return runner.invoke(app, [*command, "--log-dir", str(tmp_path / "play")], input=lines)


def test_a_terminal_session_is_graded_logged_and_reported(tmp_path):
    result = play(tmp_path, "--task", "1002", *E1)
    assert result.exit_code == 0, result.output
    out = result.output
    assert "Task 1002: Underground Airflow and Gas Management" in out
    assert "E1, 1 fault(s) x 1 call(s), seed 0; protocol occubench" in out
    assert '"code": "ECONNREFUSED"' in out  # the fault, as the observation the person got
    assert "! required" in out
    assert "Verdict: PASSED" in out and "checks 4/4" in out
    assert "Faults you met (1):" in out and "call 1 (get_sensor_reading): connection_refused" in out
    (row,) = read_runs(log_files([str(tmp_path / "play")]))
    assert row.agent_model == "human/alice" and row.passed is True and row.tool_calls == 4

    report = runner.invoke(app, ["report", str(tmp_path / "play"), "--out", str(tmp_path / "r")])
    assert report.exit_code == 0, report.output
    assert "│ 1 │ human/alice │" in report.output


def test_a_task_drawn_from_a_filter_and_a_session_given_up(tmp_path):
    result = play(tmp_path, "--difficulty", "3", "--pick-seed", "1", lines="give up\n")
    assert result.exit_code == 0, result.output
    assert "difficulty 3" in result.output and "Verdict: FAILED" in result.output
    (row,) = read_runs(log_files([str(tmp_path / "play")]))
    assert row.difficulty == 3 and row.passed is False


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    for options, message in [
        (["--task", "99999"], "task 99999 is not in"),
        (["--task", "1002", "--env-mode", "E9"], "env_mode"),
        (["--difficulty", "9"], "no task in"),
    ]:
        result = play(tmp_path, *options)
        assert result.exit_code == 2 and message in result.output, result.output
        assert "Traceback" not in result.output
    result = runner.invoke(
        app, ["play", "--name", "no name", "--dataset", "reference", "--task", "1002", *MODELS]
    )
    assert result.exit_code == 2 and "player" in result.output
    assert not (tmp_path / "play").exists()  # nothing ran


USER_SEAT = [
    "play",
    "--as",
    "user",
    "--name",
    "bob",
    "--agent-model",
    "occubench/asking",
    "--simulator-model",
    "occubench/twin",
    "--verifier-model",
    "occubench/scripted-judge",
    "--protocol",
    "occubench",
]


def test_a_person_as_the_user_answers_the_agent_and_ends_the_conversation(tmp_path):
    command = [*USER_SEAT, "--dataset", "conversational", "--task", "2001", "--with-plan"]
    lines = "P-2231\n\nThanks, that is all.\n/end\n"
    result = runner.invoke(app, [*command, "--log-dir", str(tmp_path / "play")], input=lines)
    assert result.exit_code == 0, result.output
    out = result.output
    assert "you are the user, human/bob; the agent is occubench/asking" in out
    assert "patient_id: P-2231 (tell it when the agent asks" in out
    assert "What is your patient id?" in out and "You end the conversation." in out
    assert "Verdict: PASSED" in out and "checks 4/4" in out
    (row,) = read_runs(log_files([str(tmp_path / "play")]))
    assert row.agent_model == "occubench/asking" and row.user_model == "human/bob"
    assert row.passed is True and row.user_ended is True
    assert row.user_turns == 2 and row.user_errors == 0


def test_the_users_seat_needs_a_task_with_a_user_and_an_agent(tmp_path):
    for command, message in [
        ([*USER_SEAT, "--dataset", "reference", "--task", "1002"], "task 1002 has no user brief"),
        (
            [*USER_SEAT[:5], *USER_SEAT[7:], "--dataset", "conversational", "--task", "2001"],
            "--as user: name the agent you talk to with --agent-model",
        ),
    ]:
        result = runner.invoke(app, [*command, "--log-dir", str(tmp_path / "play")])
        assert result.exit_code == 2 and message in result.output, result.output
        assert "Traceback" not in result.output
    assert not (tmp_path / "play").exists()
