import json
from pathlib import Path

import pytest

from conftest import PUBLIC_SAMPLE_IDS, RELEASE_IDS, rewrite_json
from occubench.dataset import (
    CONFIGS_DIR,
    TASKS_FILE,
    DatasetError,
    load_dataset,
    reference_suite_dir,
    tool_params,
    write_dataset,
)


def test_release_layout_loads(release_dir):
    ds = load_dataset(release_dir)
    assert sorted(t.task_id for t in ds.tasks) == RELEASE_IDS
    assert len(ds.envs) == 10 and len(ds.scenarios) == 12  # two scenarios without tasks
    assert len({ds.industry(t) for t in ds.tasks}) == 10
    assert ds.warnings == []
    for env in ds.envs.values():
        for tool in env.action_set_definitions:
            assert tool_params(tool).type == "object"


def test_public_sample_loads_unchanged(public_sample):
    ds = load_dataset(public_sample)
    assert sorted(t.task_id for t in ds.tasks) == PUBLIC_SAMPLE_IDS
    assert len(ds.envs) == 10 and len(ds.scenarios) == 100
    assert len({ds.industry(t) for t in ds.tasks}) == 10
    assert ds.warnings == []
    # every tool of the release becomes an Inspect tool schema
    for env in ds.envs.values():
        for tool in env.action_set_definitions:
            assert tool_params(tool).type == "object"


def test_public_sample_filters(public_sample):
    assert [t.task_id for t in load_dataset(public_sample, task_ids=[24, 11]).tasks] == [11, 24]
    ds = load_dataset(public_sample, categories=["Technology & IT", "Science & Research"])
    assert sorted(t.task_id for t in ds.tasks) == [46, 51]


def test_filters(release_dir):
    assert [t.task_id for t in load_dataset(release_dir, task_ids=[24, 11]).tasks] == [11, 24]
    ds = load_dataset(release_dir, categories=["Technology & IT", "Science & Research"])
    assert sorted(t.task_id for t in ds.tasks) == [46, 154]
    assert set(ds.envs) == {t.env_name for t in ds.tasks}
    by_level = load_dataset(release_dir, difficulties=[1])
    assert {t.difficulty_level for t in by_level.tasks} == {1} and len(by_level.tasks) == 3
    domain = load_dataset(release_dir).domain(load_dataset(release_dir, task_ids=[11]).tasks[0])
    assert [t.task_id for t in load_dataset(release_dir, domains=[domain]).tasks] == [11]


def test_unknown_filter_values_are_errors(release_dir):
    with pytest.raises(DatasetError) as e:
        load_dataset(release_dir, task_ids=[99999, 1000, 5], categories=["Space"])
    text = str(e.value)
    assert "3 unknown task ids: 5, 1000, 99999; the dataset has 10: 11, 24, 26, 32," in text
    assert "1 unknown industries: Space; the dataset has 11: Agriculture" in text


def test_unknown_ids_are_summed_up(tmp_path):
    records = [{"task_id": i} for i in range(1, 400)]
    with pytest.raises(DatasetError) as e:
        load_dataset(reference_suite_dir(), task_ids=[r["task_id"] for r in records])
    (issue,) = e.value.issues
    assert issue.message.startswith("399 unknown task ids: 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12")
    assert "... (387 more); the dataset has 10: 1001, 1002," in issue.message
    assert len(issue.message) < 200


def test_every_problem_reported_at_once(release_copy: Path):
    tasks = release_copy / TASKS_FILE
    lines = tasks.read_text().splitlines()
    lines[1] = lines[1][:40]  # bad JSON on line 2
    record = json.loads(lines[2])
    del record["verification_plan"]  # missing field on line 3
    lines[2] = json.dumps(record)
    tasks.write_text("\n".join(lines) + "\n")
    first_env = json.loads(lines[0])["env_name"]
    config = release_copy / CONFIGS_DIR / f"{first_env}.json"
    rewrite_json(
        config, lambda d: d["action_set_definitions"].append(d["action_set_definitions"][0])
    )
    last_env = json.loads(lines[-1])["env_name"]
    (release_copy / CONFIGS_DIR / f"{last_env}.json").unlink()

    with pytest.raises(DatasetError) as e:
        load_dataset(release_copy)
    issues = e.value.issues
    where = {(Path(i.file).name, i.line, i.field) for i in issues}
    assert (TASKS_FILE, 2, None) in where
    assert (TASKS_FILE, 3, "verification_plan") in where
    dup = next(i for i in issues if "duplicate tool name" in i.message)
    assert Path(dup.file).name == config.name and dup.line and dup.field.endswith(".name")
    assert any("not found" in i.message and last_env in i.file for i in issues)
    assert len(issues) == 4


def test_invalid_schema_and_wrong_types(release_copy: Path):
    env_name = json.loads((release_copy / TASKS_FILE).read_text().splitlines()[0])["env_name"]
    config = release_copy / CONFIGS_DIR / f"{env_name}.json"

    def breaks(d):
        d["action_set_definitions"][0]["parameters"]["properties"] = {"x": {"type": "int"}}
        d["task_initial_state"] = ["not", "an", "object"]

    rewrite_json(config, breaks)
    with pytest.raises(DatasetError) as e:
        load_dataset(release_copy, task_ids=[11])
    fields = {i.field for i in e.value.issues}
    assert "task_initial_state" in fields
    assert any(
        i.field and i.field.startswith("action_set_definitions[0].parameters")
        for i in e.value.issues
    )


def test_lossy_schema_keywords_warn(release_copy: Path, caplog):
    env_name = json.loads((release_copy / TASKS_FILE).read_text().splitlines()[0])["env_name"]
    config = release_copy / CONFIGS_DIR / f"{env_name}.json"

    def lossy(d):
        props = d["action_set_definitions"][0]["parameters"].setdefault("properties", {})
        props["mode"] = {"type": "string", "description": "m", "oneOf": [{"const": "a"}]}

    rewrite_json(config, lossy)
    ds = load_dataset(release_copy, task_ids=[11])
    assert len(ds.warnings) == 1
    assert "drop the JSON-Schema keywords $.properties.mode.oneOf" in ds.warnings[0].message
    assert "oneOf" in caplog.text


def test_a_stray_field_in_parameters_is_not_called_a_keyword(release_copy: Path):
    env_name = json.loads((release_copy / TASKS_FILE).read_text().splitlines()[0])["env_name"]
    config = release_copy / CONFIGS_DIR / f"{env_name}.json"
    rewrite_json(
        config, lambda d: d["action_set_definitions"][0]["parameters"].update(example_output={})
    )
    (warning,) = load_dataset(release_copy, task_ids=[11]).warnings
    assert "$.example_output in its parameters is not a JSON-Schema keyword" in warning.message
    assert "drop" not in warning.message


def test_missing_descriptions_are_filled(release_dir):
    from occubench.dataset import ToolSpec

    spec = ToolSpec(
        name="t",
        description="d",
        parameters={"type": "object", "properties": {"customer_name": {"type": "string"}}},
    )
    assert tool_params(spec).properties["customer_name"].description == "Customer name."


def test_missing_folder(tmp_path):
    with pytest.raises(DatasetError, match="dataset folder not found"):
        load_dataset(tmp_path / "nope")


def test_write_round_trip(release_dir, tmp_path):
    ds = load_dataset(release_dir)
    out = write_dataset(tmp_path / "copy", ds.tasks, ds.envs.values(), ds.scenarios.values())
    again = load_dataset(out)
    assert [t.model_dump() for t in again.tasks] == [t.model_dump() for t in ds.tasks]
    assert again.envs == ds.envs
