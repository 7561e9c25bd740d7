"""The mine ventilation twin's readings of its config (module doc of the twin)."""

from __future__ import annotations

from occubench.twins import Outcome
from twin_envs import reference_twin

ENV = "ref_underground_airflow_and_gas_management"


def test_the_parameters_example_station_is_not_in_the_state() -> None:
    twin = reference_twin(ENV)
    assert twin.call("get_sensor_reading", {"station_id": "N4-S1"}).outcome is Outcome.ERROR
    reading = twin.call("get_sensor_reading", {"station_id": "N4-S2"}).observation
    assert reading["methane_pct"] == 0.62


def test_the_limits_belong_to_the_one_panel() -> None:
    twin = reference_twin(ENV)
    limits = twin.call("get_reentry_limits", {"panel": "North-4"}).observation
    assert limits["limit_id"] == "RL-N4"
    for panel in ("north-4", "N4", "South-2"):
        assert twin.call("get_reentry_limits", {"panel": panel}).outcome is Outcome.ERROR
        assert twin.call("list_fans", {"panel": panel}).outcome is Outcome.ERROR
