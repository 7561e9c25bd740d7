import json
from collections import Counter

import pytest
from inspect_ai.log import read_eval_log, resolve_sample_attachments
from typer.testing import CliRunner

from conftest import SCRIPTED_ROLES, make_dataset, run_task, tool
from occubench.analysis import comparable_groups, user_errors
from occubench.cli import app
from occubench.dataset import TASKS_FILE
from occubench.errors import ExitCode
from occubench.grading import REGRADE_METADATA
from occubench.results import read_runs
from occubench.scripted import ScriptedAPI
from user_fixtures import BRIEF, OPENING

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


@pytest.mark.parametrize("protocol", ["occubench", "paper"])
def test_a_conversational_run_regrades_to_the_same_verdicts_with_user_errors_apart(
    tmp_path, monkeypatch, protocol
):
    """The judge reads the same conversation (the user's turns too); the user is not asked."""
    data = make_dataset(  # no checks: the judge decides
        tmp_path / "data",
        [tool("file_claim", invoice_number="The invoice.", shipment_id="The shipment.")],
        agent_instruction=OPENING,
        user=BRIEF,
        verification_plan="The claim was filed with the invoice and shipment the user gave.",
    )
    source = tmp_path / "logs"
    for agent, user in [("asking", "user-cooperative"), ("asking", "user-goal-leaking")]:
        run_task(
            source / user,
            agent=f"occubench/{agent}",
            roles={**SCRIPTED_ROLES, "user": f"occubench/{user}"},
            dataset=str(data),
            protocol=protocol,
        )
    seen: Counter[str] = Counter()
    answer = ScriptedAPI.generate

    async def counted(self, input, tools, tool_choice, config):
        seen[self.model_name] += 1
        return await answer(self, input, tools, tool_choice, config)

    monkeypatch.setattr(ScriptedAPI, "generate", counted)
    out = tmp_path / "regraded"
    args = ["regrade", str(source), "--verifier-model", "occubench/scripted-judge"]
    result = runner.invoke(app, [*args, "--protocol", protocol, "--log-dir", str(out)])
    assert result.exit_code == ExitCode.OK, result.output
    assert set(seen) == {"scripted-judge"}  # the agent, simulator and user: never asked

    def rows(folder):
        return {r.user_model: r for r in read_runs([str(folder)])}

    before, after = rows(source), rows(out)
    assert sorted(after) == ["occubench/user-cooperative", "occubench/user-goal-leaking"]
    for user, row in after.items():
        was = before[user]
        assert row.regraded_from is not None and row.passed == was.passed is not None
        assert (row.votes_yes, row.votes_total) == (was.votes_yes, was.votes_total)
        fields = ("user_turns", "user_errors", "user_ended")
        assert [getattr(row, f) for f in fields] == [getattr(was, f) for f in fields]
    assert after["occubench/user-goal-leaking"].user_errors == 1  # the user's, kept apart
    assert after["occubench/user-cooperative"].user_errors == 0
    groups = comparable_groups(list(after.values()))  # one user model a group, as reported
    counted_apart = {g.user: [u.user_errors for u in user_errors(g.rows)] for g in groups}
    assert counted_apart == {"occubench/user-cooperative": [0], "occubench/user-goal-leaking": [1]}

    def judged(folder, user):
        """The judge's requests of the sample whose run talked to ``user``."""
        log = next(
            p
            for p in folder.rglob("*.eval")
            if read_eval_log(str(p), header_only=True).eval.model_roles["user"].model
            == f"occubench/{user}"
        )
        (sample,) = read_eval_log(str(log)).samples
        sample = resolve_sample_attachments(sample)
        return [
            [m.text for m in e.input]
            for e in sample.events
            if e.event == "model" and e.model == "occubench/scripted-judge"
        ]

    for user in ("user-cooperative", "user-goal-leaking"):
        requests = judged(source, user)
        assert requests and requests == judged(out, user)
        assert any(BRIEF["facts"][0]["value"] in text for text in requests[0])  # the user said it
