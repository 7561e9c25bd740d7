"""The twin interface: calls, errors, state changes, field marks, and where twins load from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from occubench.dataset import EnvConfig, load_env, reference_suite_dir
from occubench.errors import UsageError
from occubench.twins import (
    Answer,
    ChangeKind,
    FieldKind,
    Outcome,
    Twin,
    load_twins,
    package_twins,
    state_changes,
    tool,
    twin_for,
    twins,
)

TRIAGE = "ref_emergency_department_triage"


def _env(name: str = TRIAGE) -> EnvConfig:
    return load_env(reference_suite_dir(), name)


class _Counter(Twin):
    environment = TRIAGE

    @tool
    def get_patient_vitals(self, arguments: dict[str, Any]) -> Answer:
        self.state["patient_vitals"]["heart_rate"] += 1
        self.state.setdefault("seen", []).append(arguments["patient_id"])
        return Answer(observation={"ok": True, "note": "anything"}, free=["/note"])

    @tool
    def list_open_beds(self, arguments: dict[str, Any]) -> Answer:
        del self.state["open_beds"]
        return Answer(observation={"beds": []})

    @tool
    def get_triage_protocol(self, arguments: dict[str, Any]) -> Answer:
        return self.error("nothing here")


def test_a_call_reports_its_state_changes_and_free_fields() -> None:
    twin = _Counter(_env())
    step = twin.call("get_patient_vitals", {"patient_id": "P-1"})
    assert step.outcome is Outcome.SUCCESS
    assert [(c.path, c.kind, c.before, c.after) for c in step.changes] == [
        ("/patient_vitals/heart_rate", ChangeKind.CHANGED, 128, 129),
        ("/seen", ChangeKind.ADDED, None, ["P-1"]),
    ]
    assert step.marking() == {"/ok": FieldKind.DETERMINED, "/note": FieldKind.FREE}
    removed = twin.call("list_open_beds", {"unit": "ED"})
    assert [(c.path, c.kind) for c in removed.changes] == [("/open_beds", ChangeKind.REMOVED)]
    assert twin.call("get_triage_protocol", {"esi_level": 1}).outcome is Outcome.ERROR
    twin.reset()
    assert twin.state == _env().task_initial_state and twin.steps == []


def test_unknown_tools_and_bad_arguments_get_errors_and_change_nothing() -> None:
    twin = _Counter(_env())
    unknown = twin.call("launch_rocket", {})
    assert unknown.outcome is Outcome.ERROR and "launch_rocket" in unknown.observation["error"]
    bad = twin.call("get_patient_vitals", {"patient_id": 7})
    assert bad.outcome is Outcome.ERROR and "patient_id" in bad.observation["error"]
    missing = twin.call("get_triage_protocol", {})
    assert missing.outcome is Outcome.ERROR and "esi_level" in missing.observation["error"]
    assert all(not s.changes for s in twin.steps)


def test_a_twin_must_implement_every_tool_of_its_config() -> None:
    class Partial(Twin):
        environment = TRIAGE

        @tool
        def get_patient_vitals(self, arguments: dict[str, Any]) -> Answer:
            return Answer(observation={})

    with pytest.raises(TypeError, match="list_open_beds"):
        Partial(_env())
    with pytest.raises(ValueError, match="ref_dock"):
        _Counter(_env("ref_dock_appointment_scheduling"))


def test_state_changes_walk_lists_by_index() -> None:
    changes = state_changes({"a": [1, 2], "b": {"c": 1}}, {"a": [1, 3, 4], "b": {"c": 1}})
    assert [(c.path, c.kind) for c in changes] == [
        ("/a/1", ChangeKind.CHANGED),
        ("/a/2", ChangeKind.ADDED),
    ]
    assert state_changes({"x/y": 1}, {"x/y": 2})[0].path == "/x~1y"


def test_the_package_twin_answers_as_the_config_does() -> None:
    env = _env()
    twin = twin_for(env)
    assert twin is not None and TRIAGE in package_twins()
    for known in env.canned_observations or []:
        assert twin.call(known.tool, known.arguments).observation == known.observation
    lost = twin.call("get_patient_vitals", {"patient_id": "P-9999"})
    assert lost.observation["error"]["code"] == "NOT_FOUND"


TWIN_FILE = """
from typing import Any
from occubench.twins import Answer, Twin, tool

class Mine(Twin):
    environment = "ref_emergency_department_triage"

    @tool
    def get_patient_vitals(self, arguments: dict[str, Any]) -> Answer:
        return Answer(observation={"mine": True})

    @tool
    def list_open_beds(self, arguments: dict[str, Any]) -> Answer:
        return Answer(observation={})

    @tool
    def get_triage_protocol(self, arguments: dict[str, Any]) -> Answer:
        return Answer(observation={})
"""


def test_a_named_folder_of_twins_loads_over_the_package_ones(tmp_path: Path) -> None:
    (tmp_path / "mine.py").write_text(TWIN_FILE)
    assert set(load_twins(tmp_path)) == {TRIAGE}
    twin = twin_for(_env(), tmp_path)
    assert twin is not None
    assert twin.call("get_patient_vitals", {"patient_id": "P-2231"}).observation == {"mine": True}
    assert twins()[TRIAGE] is package_twins()[TRIAGE]


@pytest.mark.parametrize(
    ("files", "problem"),
    [
        ({"broken.py": "raise RuntimeError('boom')"}, "loading it failed: RuntimeError: boom"),
        ({"a.py": TWIN_FILE, "b.py": TWIN_FILE}, "two twins of environment"),
    ],
)
def test_a_bad_folder_of_twins_is_one_clear_error(
    tmp_path: Path, files: dict[str, str], problem: str
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    with pytest.raises(UsageError, match=problem):
        load_twins(tmp_path)
    with pytest.raises(UsageError, match="not a folder"):
        load_twins(tmp_path / "absent")


class _Chooser(_Counter):
    @tool
    def get_patient_vitals(self, arguments: dict[str, Any]) -> Answer:
        self.state["patient_vitals"]["heart_rate"] = 99  # a value the config leaves open
        return Answer(observation={}, free_state=["/patient_vitals/heart_rate"])

    @tool
    def get_triage_protocol(self, arguments: dict[str, Any]) -> Answer:
        self.state["patient_vitals"]["heart_rate"] = 128
        return Answer(observation={}, fixed_state=["/patient_vitals/heart_rate"])


def test_state_the_config_leaves_open_stays_free_until_set_from_the_config() -> None:
    twin = _Chooser(_env())
    assert twin.call("get_patient_vitals", {"patient_id": "P-1"}).free_state == [
        "/patient_vitals/heart_rate"
    ]
    assert twin.call("list_open_beds", {"unit": "ED"}).free_state == ["/patient_vitals/heart_rate"]
    assert twin.call("get_triage_protocol", {"esi_level": 2}).free_state == []
    twin.call("get_patient_vitals", {"patient_id": "P-1"})
    twin.reset()
    assert twin.free_state == set()
