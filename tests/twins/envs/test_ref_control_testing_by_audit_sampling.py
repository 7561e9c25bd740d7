"""The audit sampling twin's readings of its config (module doc of the twin)."""

from __future__ import annotations

from occubench.dataset import load_env, reference_suite_dir
from occubench.twins import Outcome, Twin, twin_for

ENV = "ref_control_testing_by_audit_sampling"


def _twin() -> Twin:
    twin = twin_for(load_env(reference_suite_dir(), ENV))
    assert twin is not None
    return twin


def test_listed_samples_without_a_recorded_result_are_not_found() -> None:
    twin = _twin()
    listed = twin.call("list_samples", {"control_id": "C-310"}).observation["samples"]
    assert [s["sample_id"] for s in listed] == ["S-01", "S-02", "S-03"]
    for sample in ("S-01", "S-02"):
        answer = twin.call("get_test_result", {"sample_id": sample}).observation
        assert answer["error"]["code"] == "NOT_FOUND" and sample in answer["error"]["message"]
    assert twin.call("get_test_result", {"sample_id": "S-03"}).observation["exceptions"] == 1


def test_another_control_is_not_found_by_either_tool() -> None:
    twin = _twin()
    for tool in ("get_control", "list_samples"):
        assert twin.call(tool, {"control_id": "C-311"}).outcome is Outcome.ERROR
    assert all(not step.changes for step in twin.steps)
