"""The audit sampling twin's readings of its config (module doc of the twin)."""

from __future__ import annotations

from occubench.twins import Outcome
from twin_envs import reference_twin

ENV = "ref_control_testing_by_audit_sampling"


def test_listed_samples_without_a_recorded_result_are_not_found() -> None:
    twin = reference_twin(ENV)
    listed = twin.call("list_samples", {"control_id": "C-310"}).observation["samples"]
    assert [s["sample_id"] for s in listed] == ["S-01", "S-02", "S-03"]
    for sample in ("S-01", "S-02"):
        answer = twin.call("get_test_result", {"sample_id": sample}).observation
        assert answer["error"]["code"] == "NOT_FOUND" and sample in answer["error"]["message"]
    assert twin.call("get_test_result", {"sample_id": "S-03"}).observation["exceptions"] == 1


def test_another_control_is_not_found_by_either_tool() -> None:
    twin = reference_twin(ENV)
    for tool in ("get_control", "list_samples"):
        assert twin.call(tool, {"control_id": "C-311"}).outcome is Outcome.ERROR
    assert all(not step.changes for step in twin.steps)
