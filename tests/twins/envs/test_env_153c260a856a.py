"""The property valuation twin (``env_153c260a856a``): shapes, errors, and task 11 solved on it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from occubench.twins import Outcome
from occubench.twins.envs.env_153c260a856a import PropertyValuationTwin
from twin_envs import assert_nothing_changed, assert_task_on, sample_twin, successes

TASK = 11

PLAN: list[tuple[str, dict[str, Any]]] = [
    ("get_property_metadata", {"property_id": "OAK-88"}),
    ("get_current_date", {}),
    ("fetch_unit_level_records", {"property_id": "OAK-88"}),
]
"""Task 11: confirm the property, read today's date, then the unit-level rent roll."""

ANNUAL_OPEX = 142_000
MONTHLY_DEBT_SERVICE = 17_500
DSCR_COVENANT = 1.20
"""The figures task 11's instruction gives the agent."""


@pytest.fixture
def twin(public_sample: Path) -> PropertyValuationTwin:
    return sample_twin(public_sample, PropertyValuationTwin)


def test_every_success_fits_its_tools_example_output(twin: PropertyValuationTwin) -> None:
    successes(twin, PLAN)


def test_unknown_ids_and_tools_get_the_configs_error(twin: PropertyValuationTwin) -> None:
    for name in ("fetch_unit_level_records", "get_property_metadata"):
        step = twin.call(name, {"property_id": "ELM-1"})
        assert step.observation == {"error": "Property record not found"}
    assert twin.call("appraise", {}).outcome is Outcome.ERROR
    assert twin.call("get_property_metadata", {}).outcome is Outcome.ERROR
    assert_nothing_changed(twin)


def test_units_are_listed_one_per_unit_with_only_their_ids_and_dates_free(
    twin: PropertyValuationTwin,
) -> None:
    step = twin.call("fetch_unit_level_records", {"property_id": "OAK-88"})
    units = step.observation["units"]
    assert len(units) == 15
    surcharged = [i for i, unit in enumerate(units) if unit["mci_surcharge"]]
    assert surcharged == [10, 11, 12, 13, 14]
    assert {units[i]["monthly_base_rent"] for i in surcharged} == {1450}
    assert step.free == [
        p
        for i in range(15)
        for p in [f"/units/{i}/unit_id"]
        + ([f"/units/{i}/mci_expiration_date"] if i in surcharged else [])
    ]
    assert all(units[i]["mci_expiration_date"] is None for i in range(10))
    meta = twin.call("get_property_metadata", {"property_id": "OAK-88"})
    assert meta.observation["total_units"] == 15 and meta.free == ["/property_name", "/status"]


def _months_between(start: str, end: str) -> int:
    (y0, m0, _), (y1, m1, _) = (map(int, d.split("-")) for d in (start, end))
    return (y1 - y0) * 12 + m1 - m0


def test_the_reference_plan_solves_task_11(
    public_sample: Path, twin: PropertyValuationTwin
) -> None:
    assert_task_on(public_sample, TASK, twin)
    steps = successes(twin, PLAN)
    assert all(not step.changes and step.free_state == [] for step in steps)  # reads only
    today = steps[1].observation["current_date"]
    revenue = 0
    for unit in steps[2].observation["units"]:
        revenue += unit["monthly_base_rent"] * 12
        if unit["mci_surcharge"]:
            months = min(12, _months_between(today, unit["mci_expiration_date"]))
            assert months == 4
            revenue += unit["mci_surcharge"] * months
    noi = revenue - ANNUAL_OPEX
    dscr = noi / (MONTHLY_DEBT_SERVICE * 12)
    assert (revenue, noi, round(dscr, 2)) == (392_000, 250_000, 1.19)
    assert ("Pass" if dscr >= DSCR_COVENANT else "Fail") == "Fail"
