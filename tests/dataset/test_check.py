"""``check_dataset``: every problem of a folder at once, each with its file, line and field."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from occubench.dataset import (
    CONFIGS_DIR,
    MAX_TOOLS,
    TASKS_FILE,
    DatasetError,
    check_dataset,
    load_env,
    reference_suite_dir,
)
from occubench.dataset._errors import json_lines


@pytest.fixture
def suite(tmp_path) -> Path:
    return Path(shutil.copytree(reference_suite_dir(), tmp_path / "suite"))


def edit_task(root: Path, task_id: int, change) -> None:
    path = root / TASKS_FILE
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):
        record = json.loads(line)
        if record["task_id"] == task_id:
            change(record)
            lines[i] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n")


def edit_env(root: Path, name: str, change, rename: str | None = None) -> Path:
    path = root / CONFIGS_DIR / f"{name}.json"
    config = json.loads(path.read_text())
    change(config)
    target = path.with_name(f"{rename}.json") if rename else path
    path.unlink()
    target.write_text(json.dumps(config, indent=2))
    return target


def test_the_reference_suite_and_the_release_layout_have_no_problem(release_dir):
    for root in (reference_suite_dir(), release_dir):
        found = check_dataset(root)
        assert found.issues == [] and len(found.tasks) == 10 and len(found.envs) == 10


def test_every_planted_mistake_is_reported_at_once_with_file_line_and_field(suite):
    def step_tool(task):
        task["reference_plan"]["steps"][1]["tool"] = "list_beds"
        task["reference_plan"]["steps"][0]["arguments"] = {"patient_id": 7}
        task["verification_plan"] = "TODO: say how it is judged"

    edit_task(suite, 1001, step_tool)
    edit_task(suite, 1002, lambda t: t["checks"][1].update(tool="get_sensor"))

    def dock(config):
        del config["state_description"]["dock_rules"]
        config["state_description"]["gate_log"] = "Gate entries."
        config["canned_observations"][0]["arguments"] = {"load_id": 5}

    dock_file = edit_env(suite, "ref_dock_appointment_scheduling", dock)

    def unusable(config):
        schema = config["action_set_definitions"][0]["parameters"]["properties"]
        schema["extra"] = {"type": "array", "items": True, "description": "x"}

    water = edit_env(suite, "ref_drinking_water_treatment_operation", unusable)
    moved = edit_env(suite, "ref_financial_aid_packaging", lambda c: None, rename="aid_copy")

    found = check_dataset(suite)
    seen = {(Path(i.file).name, i.line, i.field) for i in found.issues}
    lines = json_lines(dock_file.read_text())
    items = ("action_set_definitions", 0, "parameters", "properties", "extra", "items")
    items_line = json_lines(water.read_text())[items]
    tasks = [json.loads(line) for line in (suite / TASKS_FILE).read_text().splitlines()]
    aid_line = 1 + next(
        i for i, t in enumerate(tasks) if t["env_name"] == "ref_financial_aid_packaging"
    )
    assert seen == {
        (TASKS_FILE, 1, "verification_plan"),
        (TASKS_FILE, 1, "reference_plan.steps[0].arguments.patient_id"),
        (TASKS_FILE, 1, "reference_plan.steps[1].tool"),
        (TASKS_FILE, 2, "checks[1].tool"),
        (
            dock_file.name,
            lines[("task_initial_state", "dock_rules")],
            "task_initial_state.dock_rules",
        ),
        (dock_file.name, lines[("state_description", "gate_log")], "state_description.gate_log"),
        (
            dock_file.name,
            lines[("canned_observations", 0, "arguments", "load_id")],
            "canned_observations[0].arguments.load_id",
        ),
        (water.name, items_line, "action_set_definitions[0].parameters.properties.extra.items"),
        (moved.name, 2, "environment_name"),
        # the task of the renamed env names a config that is no longer there
        (TASKS_FILE, aid_line, "env_name"),
    }
    messages = "\n".join(str(i) for i in found.issues)
    assert (
        "names tool 'list_beds', which env 'ref_emergency_department_triage' does not" in messages
    )
    assert "7 is not of type 'string'" in messages and "still a placeholder (TODO)" in messages
    assert "not usable as a tool schema" in messages
    assert [Path(w.file).name for w in found.warnings] == ["aid_copy.json"]  # no task uses it


def test_an_env_with_no_tool_or_too_many_is_a_problem(suite):
    edit_env(
        suite, "ref_dock_appointment_scheduling", lambda c: c.update(action_set_definitions=[])
    )

    def many(config):
        tool = config["action_set_definitions"][0]
        config["action_set_definitions"] = [
            {**tool, "name": f"tool_{i}"} for i in range(MAX_TOOLS + 1)
        ]

    edit_env(suite, "ref_emergency_department_triage", many)
    messages = [i.message for i in check_dataset(suite).issues]
    assert "an environment needs at least one tool" in messages
    assert f"{MAX_TOOLS + 1} tools: a model request may offer at most {MAX_TOOLS}" in messages


def test_one_env_is_read_as_the_loader_reads_it(suite, tmp_path):
    assert load_env(suite, "ref_dock_appointment_scheduling").environment_name.startswith("ref_")
    outside = tmp_path / "outside.json"
    outside.write_text("{}")
    (suite / CONFIGS_DIR / "linked.json").symlink_to(outside)
    for name, problem in [("missing", "not found"), ("linked", "outside the dataset folder")]:
        with pytest.raises(DatasetError, match=problem):
            load_env(suite, name)


def test_json_lines_places_every_key_and_item():
    text = json.dumps({"a": [1, {"b": 'x\n"}', "c": []}], "d": {"e": None}}, indent=2)
    assert json_lines(text) == {
        (): 1,
        ("a",): 2,
        ("a", 0): 3,
        ("a", 1): 4,
        ("a", 1, "b"): 5,
        ("a", 1, "c"): 6,
        ("d",): 9,
        ("d", "e"): 10,
    }
