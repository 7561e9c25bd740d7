"""Regrading: recorded trajectories graded again by another judge, no agent or simulator call."""

from __future__ import annotations

import json
import zipfile
from collections import Counter
from pathlib import Path

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log, write_eval_log
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, get_model

from conftest import SCRIPTED_ROLES, replay, run_task
from occubench.dataset import TASKS_FILE
from occubench.errors import ErrorSource, UsageError
from occubench.grading import (
    PAPER_VERIFIER_PROMPT,
    REGRADE_METADATA,
    SCORER_NAME,
    VERIFIER_SYSTEM_PROMPT,
    Grade,
    Regrade,
    VerifierLayout,
    regrade_logs,
)
from occubench.protocols import MessageStyle
from occubench.results import read_runs
from occubench.scripted import ScriptedAPI

TASKS = "11,70"
ROLE_OF = {
    "schema-agent": "agent",
    "replay": "agent",
    "echo-simulator": "simulator",
    "scripted-judge": "verifier",
    "rubric-judge": "verifier",
}
"""The role each scripted model plays in these runs."""
PAPER_HEAD = PAPER_VERIFIER_PROMPT.split("\n", 1)[0]


class Calls:
    """Every call a scripted model answers: by role, and the judge's requests."""

    def __init__(self) -> None:
        self.roles: Counter[str] = Counter()
        self.requests: list[tuple[list, object]] = []

    def by_role(self) -> dict[str, int]:
        return {role: self.roles[role] for role in ("agent", "simulator", "verifier")}


@pytest.fixture
def calls(monkeypatch):
    """Count the calls of every scripted model (the provider's own generate)."""
    seen = Calls()
    answer = ScriptedAPI.generate

    async def counted(self, input, tools, tool_choice, config):
        role = ROLE_OF[self.model_name]
        seen.roles[role] += 1
        if role == "verifier":
            seen.requests.append((list(input), config))
        return await answer(self, input, tools, tool_choice, config)

    monkeypatch.setattr(ScriptedAPI, "generate", counted)
    return seen


@pytest.fixture(scope="module")
def occubench_log(tmp_path_factory) -> Path:
    log = run_task(tmp_path_factory.mktemp("occubench"), roles=SCRIPTED_ROLES, task_ids=TASKS)
    return Path(log.location)


@pytest.fixture(scope="module")
def paper_log(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("paper")
    log = run_task(folder, roles=SCRIPTED_ROLES, task_ids=TASKS, protocol="paper")
    return Path(log.location)


def verdicts(path: str | Path) -> dict[int, bool | None]:
    return {r.task_id: r.passed for r in read_runs([path], cache=False)}


def grades(path: str | Path) -> dict[int, Grade]:
    log = read_eval_log(str(path))
    return {
        s.id: Grade.of(s.scores[SCORER_NAME].metadata, s.scores[SCORER_NAME].value == "C")
        for s in log.samples
    }


def test_a_new_judge_grades_again_and_nothing_else_is_called(occubench_log, tmp_path, calls):
    assert verdicts(occubench_log) == {11: True, 70: True}  # scripted-judge passed both
    (done,) = regrade_logs([occubench_log], "occubench/rubric-judge", log_dir=tmp_path / "out")
    assert calls.by_role() == {"agent": 0, "simulator": 0, "verifier": 2 * 3}
    assert (done.samples, done.graded, done.passed_before, done.passed_after) == (2, 2, 2, 0)
    for grade in grades(done.log).values():  # the rubric's values are not in the answer
        assert [v.is_correct for v in grade.votes] == [False] * 3
        assert "the answer lacks" in grade.votes[0].feedback
    rows = read_runs([occubench_log, done.log], cache=False)
    old = [r for r in rows if r.regraded_from is None]
    new = [r for r in rows if r.regraded_from is not None]
    assert {r.verifier_model for r in old} == {"occubench/scripted-judge"}
    assert {r.verifier_model for r in new} == {"occubench/rubric-judge"}
    assert {r.regraded_from for r in new} == {str(occubench_log.resolve())}
    assert [r.passed for r in old] == [True, True] and [r.passed for r in new] == [False, False]
    assert {r.simulator_model for r in new} == {"occubench/echo-simulator"}
    assert all(r.tokens["verifier"] > 0 for r in new)
    # an ordinary log: listed and read by Inspect, the trajectories as they ran
    assert [info.name for info in list_eval_logs(str(tmp_path / "out"))] == [f"file://{done.log}"]
    source, regraded = read_eval_log(str(occubench_log)), read_eval_log(done.log)
    assert regraded.eval.eval_id != source.eval.eval_id
    for before, after in zip(source.samples, regraded.samples, strict=True):
        assert after.messages == before.messages and after.store == before.store
    record = Regrade.model_validate(regraded.eval.metadata[REGRADE_METADATA])
    assert record.source_eval_id == source.eval.eval_id
    assert (record.source_verifier, record.verifier) == (
        "occubench/scripted-judge",
        "occubench/rubric-judge",
    )
    assert (record.votes, record.style, record.dataset) == (3, MessageStyle.OCCUBENCH, None)
    assert regraded.results.scores[0].metrics["accuracy"].value == 0.0


def test_usage_is_the_new_judges(occubench_log, tmp_path):
    (done,) = regrade_logs([occubench_log], "occubench/rubric-judge", log_dir=tmp_path)
    source, regraded = read_eval_log(str(occubench_log)), read_eval_log(done.log)
    for before, after in zip(source.samples, regraded.samples, strict=True):
        assert set(after.model_usage) == {
            "occubench/schema-agent",
            "occubench/echo-simulator",
            "occubench/rubric-judge",
        }
        for model in ("occubench/schema-agent", "occubench/echo-simulator"):
            assert after.model_usage[model] == before.model_usage[model]
        assert after.role_usage["simulator"] == before.role_usage["simulator"]
        assert after.role_usage["verifier"] == after.model_usage["occubench/rubric-judge"]
    assert "occubench/scripted-judge" not in regraded.stats.model_usage


def test_votes_are_the_ones_asked_for(occubench_log, tmp_path, calls):
    (done,) = regrade_logs([occubench_log], "occubench/scripted-judge", log_dir=tmp_path, votes=1)
    assert calls.by_role() == {"agent": 0, "simulator": 0, "verifier": 2}
    assert (done.passed_before, done.passed_after) == (2, 2)
    assert all(len(g.votes) == 1 for g in grades(done.log).values())


def test_a_paper_log_is_regraded_with_the_paper_layout(paper_log, tmp_path, calls):
    (done,) = regrade_logs([paper_log], "occubench/rubric-judge", log_dir=tmp_path)
    assert calls.by_role() == {"agent": 0, "simulator": 0, "verifier": 2 * 3}
    for messages, config in calls.requests:  # one user message, the release's wording
        assert len(messages) == 1 and isinstance(messages[0], ChatMessageUser)
        assert messages[0].text.startswith(PAPER_HEAD)
        assert config.max_tokens == 4096  # the paper's verifier_max_tokens
    assert (done.passed_before, done.passed_after) == (2, 0)
    record = Regrade.model_validate(read_eval_log(done.log).eval.metadata[REGRADE_METADATA])
    assert (record.style, record.max_tokens) == (MessageStyle.PAPER, 4096)
    assert {r.protocol for r in read_runs([done.log], cache=False)} == {"paper"}


def test_the_layout_asked_for_wins(occubench_log, paper_log, tmp_path, calls):
    paper = VerifierLayout(style=MessageStyle.PAPER, max_tokens=4096)
    regrade_logs([occubench_log], "occubench/scripted-judge", log_dir=tmp_path / "p", layout=paper)
    assert all(m[0].text.startswith(PAPER_HEAD) for m, _ in calls.requests)
    calls.requests.clear()
    ours = VerifierLayout(style=MessageStyle.OCCUBENCH)
    (done,) = regrade_logs(
        [paper_log], "occubench/scripted-judge", log_dir=tmp_path / "o", layout=ours
    )
    for messages, config in calls.requests:
        assert isinstance(messages[0], ChatMessageSystem)
        assert messages[0].text == VERIFIER_SYSTEM_PROMPT and config.max_tokens is None
    assert done.passed_after == 2


def test_a_failing_judge_is_an_infrastructure_error_then_graded_again(occubench_log, tmp_path):
    unreadable = replay("I would rather not say.")  # never a verdict: every vote invalid
    (failed,) = regrade_logs([occubench_log], unreadable, log_dir=tmp_path / "failed")
    assert (failed.graded, failed.verifier_errors, failed.passed_after) == (2, 2, 0)
    rows = read_runs([failed.log], cache=False)
    assert [(r.passed, r.error_source) for r in rows] == [(None, ErrorSource.VERIFIER)] * 2
    assert all("judge votes were invalid" in r.error for r in rows)
    # the trajectories are whole: a working judge grades them (the errors go)
    (again,) = regrade_logs([failed.log], "occubench/scripted-judge", log_dir=tmp_path / "again")
    assert (again.graded, again.verifier_errors, again.passed_after) == (2, 0, 2)
    assert [r.error for r in read_runs([again.log], cache=False)] == [None, None]


def test_a_judge_that_raises_is_an_infrastructure_error(occubench_log, tmp_path, monkeypatch):
    async def broken(self, input, tools, tool_choice, config):
        raise RuntimeError("the judge's server went away")

    monkeypatch.setattr(ScriptedAPI, "generate", broken)
    (done,) = regrade_logs([occubench_log], "occubench/scripted-judge", log_dir=tmp_path)
    assert done.verifier_errors == 2
    for row in read_runs([done.log], cache=False):
        assert row.error_source is ErrorSource.VERIFIER and row.passed is None
        assert "the judge failed: RuntimeError: the judge's server went away" in row.error


def test_samples_that_errored_before_grading_are_kept(tmp_path, calls):
    source = run_task(
        tmp_path / "run",
        agent=replay({"tool": "get_patient_vitals", "arguments": {"patient_id": "P-2231"}}),
        roles={**SCRIPTED_ROLES, "simulator": replay("not an observation")},
        task_ids="11",
        simulator_retries=0,
    )
    (row,) = read_runs([source.location], cache=False)
    assert row.error_source is ErrorSource.SIMULATOR
    calls.roles.clear()
    (done,) = regrade_logs([source.location], "occubench/rubric-judge", log_dir=tmp_path / "out")
    assert (done.graded, done.kept_errors, done.verifier_errors) == (0, 1, 0)
    assert calls.by_role()["verifier"] == 0
    (kept,) = read_runs([done.log], cache=False)
    assert (kept.error, kept.error_source) == (row.error, ErrorSource.SIMULATOR)
    assert kept.verifier_model == "occubench/rubric-judge"


def test_a_newer_dataset_gives_the_rubric(occubench_log, release_copy, tmp_path, calls):
    plan = "The agent looked the patient's vitals and the open beds up and reported them."

    def correct(tasks_file: Path) -> None:
        lines = [json.loads(line) for line in tasks_file.read_text().splitlines()]
        for task in lines:
            if task["task_id"] == 11:
                task["verification_plan"] = plan
        tasks_file.write_text("".join(json.dumps(t) + "\n" for t in lines))

    correct(release_copy / TASKS_FILE)
    (done,) = regrade_logs(
        [occubench_log], "occubench/rubric-judge", log_dir=tmp_path / "out", dataset=release_copy
    )
    assert verdicts(done.log) == {11: True, 70: False}  # no number to report in 11's now
    sample = read_eval_log(done.log, header_only=False).samples[0]
    assert sample.id == 11 and sample.target == plan
    assert sample.metadata["task"]["verification_plan"] == plan
    record = Regrade.model_validate(read_eval_log(done.log).eval.metadata[REGRADE_METADATA])
    assert record.dataset == str(release_copy)


def test_a_task_missing_from_the_dataset_is_refused(occubench_log, release_copy, tmp_path, calls):
    tasks = release_copy / TASKS_FILE
    kept = [line for line in tasks.read_text().splitlines() if json.loads(line)["task_id"] != 70]
    tasks.write_text("\n".join(kept) + "\n")
    out = tmp_path / "out"
    with pytest.raises(UsageError, match=rf"{occubench_log}: task\(s\) 70 are not in the dataset"):
        regrade_logs([occubench_log], "occubench/rubric-judge", log_dir=out, dataset=release_copy)
    assert calls.by_role()["verifier"] == 0 and not out.exists()


def test_a_log_that_cannot_be_read_is_refused(occubench_log, tmp_path, calls):
    (tmp_path / "bad").mkdir()
    broken = tmp_path / "bad" / "broken.eval"
    broken.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(UsageError, match=rf"^{broken}: not a readable Inspect log"):
        regrade_logs([occubench_log, broken], "occubench/rubric-judge", log_dir=tmp_path / "o")
    not_a_log = tmp_path / "bad" / "other.eval"
    with zipfile.ZipFile(not_a_log, "w") as archive:
        archive.writestr("header.json", '{"version": 2}')
    with pytest.raises(UsageError, match=rf"^{not_a_log}: not a readable Inspect log"):
        regrade_logs([not_a_log], "occubench/rubric-judge", log_dir=tmp_path / "o")
    hollow = read_eval_log(str(occubench_log))  # a sample whose task record is gone
    del hollow.samples[1].metadata["task"]
    write_eval_log(hollow, str(tmp_path / "bad" / "hollow.eval"))
    with pytest.raises(
        UsageError, match=r"hollow.eval: sample 70 \(epoch 1\) has no readable task"
    ):
        regrade_logs(
            [tmp_path / "bad" / "hollow.eval"], "occubench/rubric-judge", log_dir=tmp_path / "o"
        )
    with pytest.raises(UsageError, match="unpacks to .* bytes, over the 1000"):
        regrade_logs(
            [occubench_log], "occubench/rubric-judge", log_dir=tmp_path / "o", max_log_bytes=1000
        )
    assert calls.by_role()["verifier"] == 0 and not (tmp_path / "o").exists()


def test_the_new_logs_go_outside_the_runs_folder(occubench_log, calls):
    for inside in (occubench_log.parent, occubench_log.parent / "regraded"):
        with pytest.raises(UsageError, match="inside the folder of"):
            regrade_logs([occubench_log], "occubench/rubric-judge", log_dir=inside)
    with pytest.raises(UsageError, match="is a file, not a folder"):
        regrade_logs([occubench_log], "occubench/rubric-judge", log_dir=occubench_log)
    assert calls.by_role()["verifier"] == 0


def test_secrets_never_reach_the_new_log(tmp_path, monkeypatch):
    key = "sk-regrade-FAKE-0123456789abcdef0123456789"
    token = "judge-token-0123456789abcdef"
    monkeypatch.setenv("REGRADE_TEST_API_KEY", key)
    source = run_task(
        tmp_path / "run",
        agent=replay(f"Done; my key is {key}."),
        roles=SCRIPTED_ROLES,
        task_ids="11",
    )
    with zipfile.ZipFile(source.location) as archive:  # the attack: the source holds it
        assert any(key.encode() in archive.read(name) for name in archive.namelist())
    judge = get_model("occubench/scripted-judge", memoize=False, api_token=token)
    (done,) = regrade_logs([source.location], judge, log_dir=tmp_path / "out")
    with zipfile.ZipFile(done.log) as archive:
        for name in archive.namelist():
            data = archive.read(name)
            assert key.encode() not in data and token.encode() not in data, name
    roles = read_eval_log(done.log).eval.model_roles
    assert roles["verifier"].args == {"api_token": "[redacted]"}
