"""Conversational variants of tasks: the generator's conversion, checked, written as a dataset."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inspect_ai.model import get_model

from occubench.dataset import (
    CONVERSATIONAL_DATASET,
    TaskRecord,
    UserBrief,
    load_dataset,
    resolve_dataset_dir,
)
from occubench.errors import UsageError
from occubench.synthesis import (
    CONVERSION_FILE,
    Conversion,
    ConversionManifest,
    Outcome,
    check_conversion,
    convert_dataset,
)

TASK = TaskRecord(
    task_id=7,
    difficulty_level=1,
    task_scenario_name="Dock Appointment Scheduling",
    agent_instruction="Book an unloading slot for load L-6620 on the 17th. Report the door.",
    env_name="docks",
    verification_plan="The answer names door 12.",
    solution_plan='1. Call get_load with {"load_id": "L-6620"}.\nAnswer: door 12.',
)


def conversion(opening: str, *facts: tuple[str, str]) -> Conversion:
    brief = {
        "persona": "A dispatcher.",
        "goal": "A slot for the load.",
        "facts": [{"name": n, "value": v, "reveal_when": "asked"} for n, v in facts],
        "ends_when": "the agent names the door",
    }
    return Conversion(opening=opening, user=UserBrief.model_validate(brief))


def test_a_valid_conversion_has_no_problem():
    assert (
        check_conversion(conversion("Book a slot for my load.", ("load_id", "L-6620")), TASK) == []
    )


@pytest.mark.parametrize(
    ("made", "problem"),
    [
        (conversion("Book a slot for my load."), "user.facts is empty"),
        (conversion("Book a slot for load l-6620.", ("load_id", "L-6620")), "opening: it still"),
        (conversion("Book a slot for my load.", ("load_id", "L-9999")), "not in the task's"),
        (
            conversion("Book a slot.", ("load", "L-6620"), ("load", "17th")),
            "'load' is used more than once",
        ),
        (
            conversion(
                TASK.agent_instruction.replace("L-6620", "my load") + " " * 20,
                ("load_id", "L-6620"),
            ),
            "not shorter",
        ),
    ],
)
def test_each_rule_names_its_problem(made: Conversion, problem: str):
    found = check_conversion(made, TASK)
    assert len(found) == 1 and problem in found[0]


def test_the_public_sample_converts_with_the_scripted_generator(public_sample: Path, tmp_path):
    source = load_dataset(public_sample)
    out = tmp_path / "conversational"
    model = get_model("occubench/scripted-generator")
    manifest = convert_dataset(source, model, out, retries=0, source="sample")
    assert [t.outcome for t in manifest.tasks] == [Outcome.CONVERTED] * len(source.tasks)
    assert len(source.tasks) == 10
    assert ConversionManifest.model_validate_json((out / CONVERSION_FILE).read_text()) == manifest
    written = load_dataset(out)  # the release layout, every task validated by the loader
    originals = {t.task_id: t for t in source.tasks}
    assert [t.task_id for t in written.tasks] == list(originals)
    for task in written.tasks:
        original = originals[task.task_id]
        assert task.user is not None and task.user.facts
        assert task.verification_plan == original.verification_plan
        assert len(task.agent_instruction) < len(original.agent_instruction)
        for fact in task.user.facts:
            assert fact.value in original.agent_instruction
            assert fact.value.casefold() not in task.agent_instruction.casefold()
        assert written.env(task) == source.env(original)
    assert manifest.tokens["generator"].total_tokens > 0


def test_an_invalid_answer_is_asked_again_then_dropped(tmp_path: Path):
    source = load_dataset(resolve_dataset_dir("reference")).tasks[0]
    data = load_dataset(resolve_dataset_dir("reference"), task_ids=[source.task_id])
    leaky = conversion(source.agent_instruction[:60], ("patient_id", "P-2231"))
    fixed = conversion("A patient just arrived: triage them.", ("patient_id", "P-2231"))
    replies = [f"<json>{c.model_dump_json()}</json>" for c in (leaky, fixed)]

    asked_again = convert_dataset(
        data, get_model("occubench/replay", outputs=replies), tmp_path / "a", retries=1
    )
    assert asked_again.tasks[0].outcome == Outcome.CONVERTED
    (task,) = load_dataset(tmp_path / "a").tasks
    assert task.agent_instruction == fixed.opening and task.solution_plan is None

    dropped = convert_dataset(
        data, get_model("occubench/replay", outputs=replies[:1]), tmp_path / "b", retries=0
    )
    (record,) = dropped.tasks
    assert record.outcome == Outcome.DROPPED
    assert any("P-2231" in p for p in record.problems)
    lines = (tmp_path / "b" / "eval_benchmark_solvable.jsonl").read_text()
    assert lines == ""


def test_tasks_that_have_a_user_are_kept_and_a_dataset_is_never_overwritten(tmp_path: Path):
    data = load_dataset(resolve_dataset_dir(CONVERSATIONAL_DATASET))
    model = get_model("occubench/replay", outputs=["unused"])
    manifest = convert_dataset(data, model, tmp_path / "out", retries=0)
    assert {t.outcome for t in manifest.tasks} == {Outcome.KEPT}
    assert manifest.tokens["generator"].total_tokens == 0
    kept = [json.loads(line) for line in (tmp_path / "out/eval_benchmark_solvable.jsonl").open()]
    assert [TaskRecord.model_validate(t) for t in kept] == data.tasks
    with pytest.raises(UsageError, match="already holds a dataset"):
        convert_dataset(data, model, tmp_path / "out", retries=0)
