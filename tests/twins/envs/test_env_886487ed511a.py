"""The travel itinerary twin (``env_886487ed511a``): shapes, errors, writes, task 70."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from occubench.twins import ChangeKind, Outcome
from occubench.twins.envs.env_886487ed511a import TravelItineraryTwin
from twin_envs import assert_nothing_changed, assert_task_on, sample_twin, successes

TASK = 70
TOUR = "ACT-20250105-1300"
"""The id the twin gives the Colosseum tour (the state lists it without one)."""
DRIVER = "DRV-20250105-ROME"
WALK = "ACT-20250105-ROME"

PLAN: list[tuple[str, dict[str, Any]]] = [
    ("get_travel_status", {}),
    (
        "search_services",
        {
            "category": "transportation",
            "location": "Rome",
            "date": "2025-01-05",
            "query": "private driver to Civitavecchia pier",
        },
    ),
    ("cancel_booking", {"item_id": TOUR}),
    ("search_services", {"category": "activity", "location": "Rome", "date": "2025-01-05"}),
    ("book_service", {"service_id": WALK, "scheduled_time": "10:00", "cost": 120.0}),
    ("book_service", {"service_id": DRIVER, "scheduled_time": "16:15", "cost": 260.0}),
    ("get_travel_status", {}),
]
"""Task 70: the tour ending 17:15 breaks the 16:20 departure; replace it, book the driver."""

ALL_ABOARD, GANGWAY, TRANSIT, BZT = "18:30", 30, 80, 1.25
"""The ship's figures task 70's instruction gives the agent."""


def _minutes(clock: str) -> int:
    return int(clock[:2]) * 60 + int(clock[3:])


@pytest.fixture
def twin(public_sample: Path) -> TravelItineraryTwin:
    return sample_twin(public_sample, TravelItineraryTwin)


def test_every_success_fits_its_tools_example_output(twin: TravelItineraryTwin) -> None:
    steps = successes(twin, PLAN)
    assert {step.tool for step in steps} == set(twin.specs)


def test_unknown_ids_and_tools_get_the_configs_errors(twin: TravelItineraryTwin) -> None:
    assert twin.call("book_flight", {}).observation == {
        "error": "Undefined Action: no action 'book_flight'"
    }
    cancel = twin.call("cancel_booking", {"item_id": "ITIN-999"})
    assert cancel.observation == {"error": "Not Found: no itinerary item 'ITIN-999'"}
    booked = twin.call(
        "book_service", {"service_id": "HTL-1", "scheduled_time": "10:00", "cost": 1}
    )
    assert booked.observation["error"].startswith("Invalid Parameters: unknown service")
    searches = [("Rome", "2025-02-05"), ("Rome", "5 January"), ("Rome", "2025-01-32")]
    searches += [("Paris", "2025-01-05"), ("-", "2025-01-05")]
    for place, date in searches:
        search = {"category": "activity", "location": place, "date": date}
        assert (
            twin.call("search_services", search)
            .observation["error"]
            .startswith("Invalid Parameters:")
        )
    odd = {"service_id": DRIVER, "scheduled_time": "16:20", "cost": 260.0}
    assert twin.call("book_service", odd).outcome is Outcome.ERROR  # not an offered time
    assert_nothing_changed(twin)


def test_the_status_shows_the_state_with_only_made_up_ids_free(twin: TravelItineraryTwin) -> None:
    step = twin.call("get_travel_status", {})
    assert step.observation["current_itinerary"] == [
        {
            "item_id": TOUR,
            "type": "Activity",
            "description": "Exclusive After-Hours Colosseum Underground Tour",
            "start_time": "13:00",
            "end_time": "17:15",
            "cost": 1400.0,
            "date": "2025-01-05",
        }
    ]
    assert step.observation["travel_dates"] == {"start": "2025-01-01", "end": "2025-01-07"}
    assert step.free == ["/current_itinerary/0/item_id"]
    search = twin.call(
        "search_services", {"category": "transportation", "location": "Rome", "date": "2025-01-05"}
    )
    assert search.free == ["/results"]
    pier = {"category": "transportation", "location": "Civitavecchia pier", "date": "2025-01-07"}
    assert twin.call("search_services", pier).outcome is Outcome.SUCCESS


def test_bookings_check_budget_and_schedule_then_add_and_refund(
    twin: TravelItineraryTwin,
) -> None:
    def book(time: str, cost: float) -> Any:
        arguments = {"service_id": DRIVER, "scheduled_time": time, "cost": cost}
        return twin.call("book_service", arguments)

    conflict = book("16:15", 260.0)  # 16:15-17:35 overlaps the tour until 17:15
    assert conflict.observation["error"].startswith("Conflict:") and not conflict.changes
    over = book("17:30", 1600.01)
    assert over.observation["error"].startswith("Insufficient Budget:") and not over.changes
    done = book("17:30", 1600.0)
    assert done.observation == {
        "status": "confirmed",
        "itinerary_item_id": "ITIN-001",
        "new_total_spent": 3000.0,
    }
    assert done.free == ["/itinerary_item_id"]
    assert twin.state["current_itinerary"][1] == {
        "item_id": "ITIN-001",
        "name": "Private Driver",
        "type": "Transportation",
        "date": "2025-01-05",
        "time_slot": "17:30-18:50",
        "location": "Rome",
        "cost": 1600.0,
    }
    assert [(c.path, c.kind) for c in done.changes] == [
        ("/total_spent", ChangeKind.CHANGED),
        ("/current_itinerary/1", ChangeKind.ADDED),
    ]
    chosen = ["item_id", "location", "name", "time_slot", "type"]  # not date, cost
    assert done.free_state == [f"/current_itinerary/1/{key}" for key in chosen]
    refund = twin.call("cancel_booking", {"item_id": TOUR})
    assert refund.observation == {
        "status": "cancelled",
        "refunded_amount": 1400.0,
        "new_total_spent": 1600.0,
    }
    assert twin.state["total_spent"] == 1600.0
    assert [item["item_id"] for item in twin.state["current_itinerary"]] == ["ITIN-001"]
    assert refund.free_state == [f"/current_itinerary/0/{key}" for key in chosen]  # moved up
    assert twin.state["current_location"] == twin.env.task_initial_state["current_location"]
    assert twin.call("cancel_booking", {"item_id": "ITIN-001"}).free_state == []


def test_the_reference_plan_solves_task_70(public_sample: Path, twin: TravelItineraryTwin) -> None:
    assert_task_on(public_sample, TASK, twin)
    steps = successes(twin, PLAN)
    latest = _minutes(ALL_ABOARD) - GANGWAY - round(TRANSIT * BZT)
    assert latest == _minutes("16:20")
    tour = steps[0].observation["current_itinerary"][0]
    assert tour["item_id"] == TOUR and _minutes(tour["end_time"]) > latest  # the conflict
    offer = steps[1].observation["results"][0]
    assert offer["service_id"] == DRIVER and "16:15" in offer["pickup_windows"]
    assert steps[2].observation["refunded_amount"] == 1400.0
    assert steps[5].observation["new_total_spent"] == 120.0 + offer["cost"]
    final = steps[6].observation
    assert final["total_spent"] == 380.0 <= final["budget_limit"] == 3000.0
    day = [item for item in final["current_itinerary"] if item["date"] == "2025-01-05"]
    driver = [item for item in day if item["type"] == "Transportation"]
    assert [d["start_time"] for d in driver] == ["16:15"] and _minutes("16:15") <= latest
    assert all(_minutes(i["end_time"]) <= _minutes("16:15") for i in day if i not in driver)
