"""The calibration twin's readings of its config (module doc of the twin)."""

from __future__ import annotations

from occubench.twins import Outcome
from twin_envs import reference_twin

ENV = "ref_laboratory_instrument_calibration"


def test_the_criteria_belong_to_the_class_the_config_names() -> None:
    twin = reference_twin(ENV)
    criteria = twin.call("get_acceptance_criteria", {"instrument_class": "reference-thermometer"})
    assert criteria.observation["criteria_id"] == "AC-RT"
    for other in ("AC-RT", "Reference-Thermometer", "thermocouple"):
        wrong = twin.call("get_acceptance_criteria", {"instrument_class": other})
        assert wrong.observation["error"]["code"] == "NOT_FOUND"


def test_the_status_reports_no_class_and_points_stay_ascending() -> None:
    twin = reference_twin(ENV)
    status = twin.call("get_instrument_status", {"instrument_id": "INS-5802"}).observation
    assert set(status) == {"instrument_id", "measured_error_c", "uncertainty_c"}
    points = twin.call("list_calibration_points", {"instrument_id": "INS-5802"}).observation
    assert [p["point_code"] for p in points["points"]] == ["P-0C", "P-50C", "P-100C"]
    unknown = twin.call("get_instrument_status", {"instrument_id": "INS-1000"})
    assert unknown.outcome is Outcome.ERROR
