"""Standard or custom: the rule on records made by hand, then a paper-protocol run end to end.

The pinned release is not on a test machine, so the end-to-end test states the standard
with the fixture dataset's digest and task count (``Standard``): the same rule, another
release.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bundle.scripted import changed, edit_json, resign, rezip
from conftest import RELEASE_DIR, RELEASE_IDS, run_task
from occubench.bundle import (
    STANDARD,
    BundleClass,
    DatasetRecord,
    Outcome,
    RunRecord,
    Standard,
    WorldRef,
    departures,
    make_bundle,
    verify_bundle,
)
from occubench.config import RunConfig, protocol_points
from occubench.dataset import content_digest, load_dataset, write_dataset
from occubench.errors import ExitCode

IDS = [str(i) for i in range(1, 383)]
RELEASE = DatasetRecord(
    location="data", name="occubench", digest=STANDARD.dataset_digest, task_ids=IDS
)


def record(**changes) -> RunRecord:
    """A run of the paper protocol with every default, on the whole release, in E0."""
    config = RunConfig.model_validate({"protocol": "paper", **changes.pop("config", {})})
    fields = dict(
        log="logs/001-x.eval",
        eval_id="x",
        task="occubench/occubench",
        agent="openai/gpt-5",
        model="openai/gpt-5",
        simulator="google/gemini-3-flash",
        verifier="google/gemini-3-flash",
        env_mode=config.env_mode.value,
        config=config.model_dump(mode="json"),
        points=protocol_points(config).model_dump(mode="json"),
        dataset="data",
        sample_ids=IDS,
        epochs=1,
    )
    return RunRecord(**(fields | changes))


def test_the_paper_protocol_with_defaults_on_the_whole_release_is_standard():
    assert departures([record()], [RELEASE]) == []
    e3 = record(config={"env_mode": "E3", "seed": 7})  # a fault seed is a replicate
    assert departures([e3], [RELEASE]) == []
    cached = record(config={"cache": True, "prompts_from": "/clone"})
    assert departures([cached], [RELEASE]) == []


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"config": {"max_turns": 50}}, "protocol point max_turns = 50 (paper: 200)"),
        ({"config": {"votes": 5}}, "setting votes = 5 (default: 3)"),
        ({"config": {"with_plan": True}}, "setting with_plan = True (default: False)"),
        ({"config": {"env_mode": "E2", "fault_count": 4}}, "setting fault_count = 4 (default: 2)"),
        ({"config": {"simulator_seed": 3}}, "setting simulator_seed = 3 (default: unset)"),
        ({"config": {"agent_command": "python agent.py {url}"}}, "setting agent_command ="),
        ({"config": {"state_mode": "explicit"}}, "setting state_mode = explicit"),
        ({"simulator_fallback": "openai/gpt-5-mini"}, "a fallback simulator (openai/gpt-5-mini)"),
        (
            {"world": WorldRef(digest="cd" * 32, mode="replay")},
            "simulator answers from a recorded world (digest cdcdcdcdcdcd, replay)",
        ),
        ({"sample_ids": IDS[:100]}, "task set: 100 of the release's 382 tasks (1 run)"),
    ],
)
def test_each_departure_is_named(changes, said):
    found = departures([record(**changes)], [RELEASE])
    assert any(line.startswith(said) for line in found), found


def test_a_fault_setting_counts_only_where_faults_are_injected():
    assert departures([record(config={"env_mode": "E0", "fault_count": 4})], [RELEASE]) == []


def test_the_occubench_protocol_is_one_departure_naming_its_points():
    (line,) = departures([record(config={"protocol": "occubench"})], [RELEASE])
    assert line.startswith("protocol occubench (standard: paper); its points differ")
    assert "fault_engine" in line and "sim_checks" in line


def test_another_dataset_or_an_unknown_one_is_named():
    other = RELEASE.model_copy(update={"digest": "0" * 64, "name": "mine"})
    assert departures([record()], [other]) == [
        f"dataset mine (digest 000000000000) is not the pinned public release (digest "
        f"{STANDARD.dataset_digest[:12]})"
    ]
    unknown = RELEASE.model_copy(update={"digest": None, "note": "not found here"})
    assert departures([record()], [unknown]) == [
        "dataset occubench: its digest is unknown (not found here)"
    ]


def test_shards_of_one_run_make_its_task_set_together():
    shards = [
        record(log="logs/001-a.eval", sample_ids=IDS[:191], config={"task_ids": IDS[:191]}),
        record(log="logs/002-b.eval", sample_ids=IDS[191:], config={"task_ids": IDS[191:]}),
    ]
    assert departures(shards, [RELEASE]) == []


@pytest.fixture(scope="module")
def paper_bundle(tmp_path_factory) -> Path:
    logs = tmp_path_factory.mktemp("paper")
    run_task(logs / "e0", protocol="paper")  # the fixture release, every task, E0
    out = tmp_path_factory.mktemp("bundle") / "paper.tar.gz"
    make_bundle([logs], out, resamples=50)
    return out


FIXTURE_STANDARD = Standard(dataset_digest=content_digest(RELEASE_DIR), release_tasks=10)
"""The standard rule with the fixture dataset standing for the public release."""


def test_a_paper_protocol_run_of_every_task_is_standard(paper_bundle):
    result = verify_bundle(paper_bundle, standard=FIXTURE_STANDARD)
    assert result.outcome is Outcome.VERIFIED
    assert result.bundle_class is BundleClass.STANDARD and result.departures == []
    assert result.runs[0].tasks == len(RELEASE_IDS)
    plain = verify_bundle(paper_bundle)  # the real rule: not the pinned release
    assert plain.bundle_class is BundleClass.CUSTOM
    assert "task set: 10 of the release's 382 tasks (1 run)" in plain.departures


def test_the_logged_task_records_are_checked_against_the_dataset(paper_bundle, tmp_path):
    result = verify_bundle(paper_bundle, dataset=RELEASE_DIR, standard=FIXTURE_STANDARD)
    assert result.outcome is Outcome.VERIFIED
    assert any("10 logged task and environment records match" in c for c in result.checked)
    assert not result.notes

    def edit(files):
        name = next(n for n in files if n.startswith("logs/"))

        def change(members):
            edit_json(
                members,
                "samples/11_epoch_1.json",
                lambda s: s["metadata"]["task"].update(agent_instruction="Do something else."),
            )

        files[name] = rezip(files[name], change)
        resign(files)

    edited = changed(paper_bundle, tmp_path / "edited.tar.gz", edit)
    result = verify_bundle(edited, dataset=RELEASE_DIR)
    assert result.outcome is Outcome.FAILED
    (problem,) = result.problems
    assert problem.member.startswith("logs/001-") and problem.member.endswith(".eval")
    assert problem.message.startswith("1 logged task(s) of dataset dataset differ from the ")
    assert "task 11: task.agent_instruction (1 sample(s), first samples/11_epoch_1.json)" in (
        problem.message
    )
    unchecked = verify_bundle(edited)  # without the dataset, said so
    assert any("not compared" in note for note in unchecked.notes)


def another_dataset(folder: Path, change) -> Path:
    """The fixture dataset written again into ``folder``, its tasks through ``change``."""
    loaded = load_dataset(RELEASE_DIR)
    return write_dataset(
        folder, change(loaded.tasks), loaded.envs.values(), loaded.scenarios.values()
    )


def test_runs_on_one_dataset_verified_against_another_fail_naming_tasks_and_fields(
    paper_bundle, tmp_path
):
    def edit_task_24(tasks):
        return [
            t.model_copy(
                update={"difficulty_level": t.difficulty_level + 1, "agent_instruction": "Other."}
            )
            if t.task_id == 24
            else t
            for t in tasks
        ]

    other = another_dataset(tmp_path / "other", edit_task_24)
    assert content_digest(other) != content_digest(RELEASE_DIR)
    result = verify_bundle(paper_bundle, dataset=other)
    assert result.outcome is Outcome.FAILED and result.exit_code is ExitCode.BAD_INPUT
    (problem,) = result.problems
    assert f"differ from the dataset at {other}: task 24: task.agent_instruction, " in (
        problem.message
    )
    assert "task.difficulty_level (1 sample(s)" in problem.message

    fewer = another_dataset(tmp_path / "fewer", lambda ts: [t for t in ts if t.task_id != 70])
    (problem,) = verify_bundle(paper_bundle, dataset=fewer).problems
    assert "1 logged task(s)" in problem.message
    assert "task 70: not in the dataset (1 sample(s), first samples/70_epoch_1.json)" in (
        problem.message
    )

    same = another_dataset(tmp_path / "same", list)  # its tasks as ran, other bytes on disk
    result = verify_bundle(paper_bundle, dataset=same, standard=FIXTURE_STANDARD)
    assert result.outcome is Outcome.VERIFIED, result.problems
    (line,) = [c for c in result.checked if c.startswith("dataset dataset:")]
    assert "10 logged task and environment records match" in line


def test_the_tasks_that_differ_are_named_up_to_a_bound_then_counted(
    paper_bundle, tmp_path, monkeypatch
):
    import occubench.bundle._verify as verify_module

    monkeypatch.setattr(verify_module, "SHOWN_DIFFERENCES", 3)

    def edit_all(tasks):
        return [t.model_copy(update={"verification_plan": "Another plan."}) for t in tasks]

    (problem,) = verify_bundle(
        paper_bundle, dataset=another_dataset(tmp_path / "all", edit_all)
    ).problems
    assert problem.message.startswith("10 logged task(s) of dataset dataset differ")
    assert problem.message.count("task.verification_plan") == 3
    assert problem.message.endswith(" (and 7 more)")
