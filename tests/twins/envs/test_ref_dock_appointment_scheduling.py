"""The dock scheduling twin's readings of its config (module doc of the twin)."""

from __future__ import annotations

from occubench.twins import Outcome
from twin_envs import reference_twin

ENV = "ref_dock_appointment_scheduling"


def test_another_date_is_not_found_not_an_empty_list() -> None:
    twin = reference_twin(ENV)
    for date in ("2025-06-18", "17/06/2025"):
        answer = twin.call("list_free_slots", {"date": date}).observation
        assert answer["error"]["code"] == "NOT_FOUND" and "slots" not in answer
    slots = twin.call("list_free_slots", {"date": "2025-06-17"}).observation["slots"]
    assert [s["slot_id"] for s in slots] == ["T08", "T11", "T15"]


def test_the_rule_set_is_the_sites_code() -> None:
    twin = reference_twin(ENV)
    assert twin.call("get_dock_rules", {"site": "DC-1"}).observation["max_pallets_per_slot"] == 30
    assert twin.call("get_dock_rules", {"site": "DC-2"}).outcome is Outcome.ERROR
