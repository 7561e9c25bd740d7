"""``new_env``: a skeleton in the release layout, and every placeholder left in it reported."""

from __future__ import annotations

import json

import pytest

from authoring.permit_env import ENV, fill
from occubench.authoring import FIELDS_FILE, check_envs, new_env
from occubench.authoring._skeleton import TWINS_DIR
from occubench.dataset import (
    CONFIGS_DIR,
    SCENARIOS_FILE,
    TASKS_FILE,
    example_arguments,
    load_dataset,
    load_env,
)
from occubench.errors import UsageError
from occubench.scripted import check_twin_run
from occubench.twins import load_twins


def test_the_skeleton_loads_and_the_check_lists_exactly_its_placeholders(tmp_path):
    made = new_env(tmp_path / "ds", ENV, industry="Public Administration", domain="Permits")
    root = made.root
    assert made.task_id == 1 and made.scenario == "Wastewater Permit Review"
    assert sorted(p.name for p in made.written) == sorted(
        [f"{ENV}.json", f"{ENV}.py", TASKS_FILE, SCENARIOS_FILE, FIELDS_FILE]
    )
    loaded = load_dataset(root)  # valid as it stands: the loader reads it
    assert loaded.industry(loaded.tasks[0]) == "Public Administration"
    found = check_envs(root)
    assert {(p.field, "TODO" in p.message) for p in found.problems} == {
        ("agent_instruction", True),
        ("verification_plan", True),
        ("solution_plan", True),
        ("world_model_system_prompt", True),
        ("action_set_definitions[0].description", True),
        ("action_set_definitions[0].parameters.properties.record_id.description", True),
        ("action_set_definitions[0].example_output.status", True),
        ("task_initial_state.records[0].status", True),
        ("state_description.records", True),
    }
    assert all(p.line for p in found.problems)
    fields = (root / FIELDS_FILE).read_text()
    for field in (
        "agent_instruction",
        "world_model_system_prompt",
        "state_description",
        "`answer_contains`",
        "example_output",
    ):
        assert field in fields
    fill(root)
    assert check_envs(root).ok


def test_a_second_env_joins_the_folder_with_the_next_task_id(tmp_path):
    new_env(tmp_path, "first_env", industry="A", domain="B", scenario="Shared Role")
    made = new_env(tmp_path, "second_env", industry="A", domain="B", scenario="Shared Role")
    assert made.task_id == 2 and SCENARIOS_FILE not in {p.name for p in made.written}
    tasks = (tmp_path / TASKS_FILE).read_text().splitlines()
    assert [json.loads(line)["env_name"] for line in tasks] == ["first_env", "second_env"]
    assert len((tmp_path / SCENARIOS_FILE).read_text().splitlines()) == 1


@pytest.mark.parametrize(
    ("name", "options", "problem"),
    [
        ("Bad-Name", {}, "env name 'Bad-Name'"),
        ("../escape", {}, "env name"),
        ("ok_name", {"industry": "a\x1b[2J"}, "--industry"),
        ("ok_name", {"domain": ""}, "--domain"),
    ],
)
def test_a_bad_name_is_refused_and_nothing_is_written(tmp_path, name, options, problem):
    with pytest.raises(UsageError, match=problem):
        new_env(tmp_path, name, **{"industry": "I", "domain": "D", **options})
    assert list(tmp_path.iterdir()) == []


def test_an_existing_env_is_never_overwritten(tmp_path):
    new_env(tmp_path, ENV, industry="I", domain="D")
    config = tmp_path / CONFIGS_DIR / f"{ENV}.json"
    config.write_text("{}")
    with pytest.raises(UsageError, match="exists already"):
        new_env(tmp_path, ENV, industry="I", domain="D")
    assert config.read_text() == "{}"


def test_a_fields_file_of_the_users_own_is_kept(tmp_path):
    (tmp_path / FIELDS_FILE).write_text("# my notes on the fields\n")
    made = new_env(tmp_path, "permit", industry="Government", domain="Permits")
    assert (tmp_path / FIELDS_FILE).read_text() == "# my notes on the fields\n"
    assert made.kept == [tmp_path / FIELDS_FILE] and tmp_path / FIELDS_FILE not in made.written
    (tmp_path / FIELDS_FILE).unlink()
    new_env(tmp_path, "other", industry="Government", domain="Permits")
    renewed = (tmp_path / FIELDS_FILE).read_text()
    new_env(tmp_path, "third", industry="Government", domain="Permits")  # ours: renewed
    assert (tmp_path / FIELDS_FILE).read_text() == renewed


def test_a_full_disk_writes_nothing_and_the_same_command_then_works(tmp_path, monkeypatch):
    import os

    new_env(tmp_path, "first", industry="Government", domain="Permits")
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    calls = []

    def full_at_the_third_file(fd):
        calls.append(fd)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(os, "fsync", full_at_the_third_file)
        with pytest.raises(UsageError, match="nothing was written.*No space left"):
            new_env(tmp_path, "permit", industry="Government", domain="Permits")
    after = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert after == before  # no env file, no task line, no partial file
    made = new_env(tmp_path, "permit", industry="Government", domain="Permits")
    assert made.task_id == 2


def test_the_skeleton_twin_loads_from_its_named_folder_and_answers_the_examples(tmp_path):
    made = new_env(tmp_path, ENV, industry="Public Administration", domain="Permits")
    folder = tmp_path / TWINS_DIR
    twin_file = folder / f"{ENV}.py"
    assert twin_file in made.written and "TODO" in twin_file.read_text()
    assert "## Twin (twins/ENV.py)" in (tmp_path / FIELDS_FILE).read_text()
    found = load_twins(folder)
    assert list(found) == [ENV]
    env = load_env(tmp_path, ENV)
    twin = found[ENV](env)
    for spec in env.action_set_definitions:
        arguments = example_arguments(spec.parameters)
        assert twin.call(spec.name, arguments).observation == spec.example_output
    check_twin_run("occubench/twin", folder, [env], simulator_places_faults=False)
    fill(tmp_path)  # the config filled in with tools of its own: the stub must follow
    assert check_envs(tmp_path).ok
    with pytest.raises(UsageError, match="lacks tools"):
        check_twin_run(
            "occubench/twin", folder, [load_env(tmp_path, ENV)], simulator_places_faults=False
        )
