"""The water treatment twin's readings of its config (module doc of the twin)."""

from __future__ import annotations

from occubench.dataset import load_env, reference_suite_dir
from occubench.twins import Outcome, Twin, twin_for

ENV = "ref_drinking_water_treatment_operation"


def _twin() -> Twin:
    twin = twin_for(load_env(reference_suite_dir(), ENV))
    assert twin is not None
    return twin


def test_every_tool_is_asked_by_the_plant() -> None:
    twin = _twin()
    assert twin.call("get_permit_limits", {"plant_id": "WTP-2"}).observation["permit_id"] == "PWS-2"
    assert twin.call("get_permit_limits", {"plant_id": "PWS-2"}).outcome is Outcome.ERROR
    for tool in ("get_water_quality", "list_filters", "get_permit_limits"):
        answer = twin.call(tool, {"plant_id": "WTP-1"}).observation
        assert answer["error"] == {"code": "NOT_FOUND", "message": "no plant WTP-1"}


def test_filters_come_in_the_states_order() -> None:
    filters = _twin().call("list_filters", {"plant_id": "WTP-2"}).observation["filters"]
    assert [f["filter_id"] for f in filters] == ["F1", "F2", "F4"]
