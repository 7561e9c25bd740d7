import json
from collections import Counter

import pytest
from inspect_ai.log import read_eval_log
from typer.testing import CliRunner

from conftest import SCRIPTED_ROLES, run_task
from occubench.cli import app
from occubench.dataset import TASKS_FILE
from occubench.errors import ExitCode
from occubench.grading import REGRADE_METADATA
from occubench.scripted import ScriptedAPI

runner = CliRunner()
ROLE_OF = {"schema-agent": "agent", "echo-simulator": "simulator", "rubric-judge": "verifier"}


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("logs")
    run_task(folder, roles=SCRIPTED_ROLES, task_ids="11,70")
    return folder


@pytest.fixture
def calls(monkeypatch):
    """Calls of each role's scripted model while the command runs."""
    seen: Counter[str] = Counter()
    answer = ScriptedAPI.generate

    async def counted(self, input, tools, tool_choice, config):
        seen[ROLE_OF[self.model_name]] += 1
        return await answer(self, input, tools, tool_choice, config)

    monkeypatch.setattr(ScriptedAPI, "generate", counted)
    return seen


def test_regrade_then_report_both_gradings(logs, tmp_path, calls):
    out = tmp_path / "regraded"
    result = runner.invoke(
        app,
        ["regrade", str(logs), "--verifier-model", "occubench/rubric-judge", "--log-dir", str(out)],
    )
    assert result.exit_code == ExitCode.OK, result.output
    # 2 samples x 3 votes, and the preflight's two turns; the agent and simulator: none
    assert dict(calls) == {"verifier": 8}
    row = next(line for line in result.output.splitlines() if ".eval" in line)
    assert [cell.strip() for cell in row.split("│")[2:-1]] == ["2", "2", "2", "0", "0", "0"]
    assert f"Regraded logs: {out}" in result.output
    report = runner.invoke(app, ["report", str(logs), str(out), "--resamples", "50"])
    assert report.exit_code == 0, report.output
    text = report.output
    assert "2 groups of runs that are not compared with each other" in text
    assert "1. 2 tasks (11, 70), occubench protocol, verifier occubench/scripted-judge" in text
    assert (
        "2. 2 tasks (11, 70), occubench protocol, verifier occubench/rubric-judge (regraded)"
        in text
    )
    boards = [
        line for line in text.splitlines() if "│ 1 " in line and "not measured" not in line
    ]  # the leaderboards' lines, not those of the table beside them
    assert len(boards) == 2
    assert "│   100.0 │" in boards[0] and "│     0.0 │" in boards[1]  # CR % E0 of each grading


def test_the_protocol_option_sets_the_layout(logs, tmp_path, calls):
    out = tmp_path / "paper"
    args = ["regrade", str(logs), "--verifier-model", "occubench/rubric-judge", "--votes", "1"]
    result = runner.invoke(app, [*args, "--protocol", "paper", "--log-dir", str(out)])
    assert result.exit_code == ExitCode.OK, result.output
    assert calls["verifier"] == 2 + 2  # the samples' votes, the preflight's two turns
    (log,) = out.glob("*.eval")
    record = read_eval_log(str(log)).eval.metadata[REGRADE_METADATA]
    assert (record["style"], record["max_tokens"], record["votes"]) == ("paper", 4096, 1)


def test_the_default_folder_is_beside_the_logs_and_the_same_again(logs, tmp_path, calls):
    first = runner.invoke(app, ["regrade", str(logs), "--verifier-model", "occubench/rubric-judge"])
    assert first.exit_code == ExitCode.OK, first.output
    (folder,) = logs.parent.glob(f"{logs.name}-regraded-*")
    assert f"Regraded logs: {folder}" in first.output
    again = runner.invoke(app, ["regrade", str(logs), "--verifier-model", "occubench/rubric-judge"])
    assert again.exit_code == ExitCode.OK, again.output
    assert len(list(folder.glob("*.eval"))) == 1  # written again, not twice


def test_a_log_that_cannot_be_read_is_one_line(logs, tmp_path, calls):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "x.eval").write_bytes(b"not a log")
    result = runner.invoke(
        app, ["regrade", str(logs), str(bad), "--verifier-model", "occubench/rubric-judge"]
    )
    assert result.exit_code == ExitCode.BAD_INPUT
    assert result.output.strip().splitlines() == [
        f"Error: {bad / 'x.eval'}: not a readable Inspect log (ValueError: EOCD not found)"
    ]
    assert calls["verifier"] <= 2  # the preflight's two turns at most: nothing graded


def test_a_task_missing_from_the_dataset_is_refused(logs, release_copy, tmp_path, calls):
    tasks = release_copy / TASKS_FILE
    kept = [line for line in tasks.read_text().splitlines() if json.loads(line)["task_id"] != 11]
    tasks.write_text("\n".join(kept) + "\n")
    result = runner.invoke(
        app,
        [
            "regrade",
            str(logs),
            "--verifier-model",
            "occubench/rubric-judge",
            "--dataset",
            str(release_copy),
            "--log-dir",
            str(tmp_path / "out"),
        ],
    )
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "task(s) 11 are not in the dataset" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "out").exists()


def test_a_failing_judge_exits_3(logs, tmp_path, monkeypatch):
    async def no_verdict(self, input, tools, tool_choice, config):
        from inspect_ai.model import ModelOutput

        return ModelOutput.from_content(model="occubench/rubric-judge", content="No comment.")

    monkeypatch.setattr(ScriptedAPI, "generate", no_verdict)
    out = tmp_path / "out"
    result = runner.invoke(
        app,
        ["regrade", str(logs), "--verifier-model", "occubench/rubric-judge", "--log-dir", str(out)],
    )
    assert result.exit_code == ExitCode.SAMPLE_ERRORS, result.output
    assert "2 sample(s) could not be graded: the verifier failed" in result.output
    row = next(line for line in result.output.splitlines() if ".eval" in line)
    assert [cell.strip() for cell in row.split("│")[2:-1]] == ["2", "2", "2", "0", "2", "0"]
