"""The water treatment twin's readings of its config (module doc of the twin)."""

from __future__ import annotations

from occubench.twins import Outcome
from twin_envs import reference_twin

ENV = "ref_drinking_water_treatment_operation"


def test_every_tool_is_asked_by_the_plant() -> None:
    twin = reference_twin(ENV)
    assert twin.call("get_permit_limits", {"plant_id": "WTP-2"}).observation["permit_id"] == "PWS-2"
    assert twin.call("get_permit_limits", {"plant_id": "PWS-2"}).outcome is Outcome.ERROR
    for tool in ("get_water_quality", "list_filters", "get_permit_limits"):
        answer = twin.call(tool, {"plant_id": "WTP-1"}).observation
        assert answer["error"] == {"code": "NOT_FOUND", "message": "no plant WTP-1"}


def test_filters_come_in_the_states_order() -> None:
    filters = reference_twin(ENV).call("list_filters", {"plant_id": "WTP-2"}).observation["filters"]
    assert [f["filter_id"] for f in filters] == ["F1", "F2", "F4"]
