"""The heavy-lift loading twin (``env_b3a9a1fdeaef``): shapes, errors, writes, task 26 on it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from occubench.twins import FieldKind
from occubench.twins.envs.env_b3a9a1fdeaef import HeavyLiftTwin
from twin_envs import assert_error_fits, assert_nothing_changed, changes, sample_twin, successes

UNIT = "Deepsea-Manifold-A"
TANDEM = ["CR-01", "CR-02"]
LIFT = {"weight_mt": 460, "start_outreach_m": 24, "end_position": "H1", "crane_ids": TANDEM}

PLAN: list[tuple[str, dict[str, Any]]] = [
    ("get_cargo_details", {"cargo_id": UNIT}),
    ("get_vessel_operational_limits", {}),
    ("get_hatch_details", {"hatch_id": "H1"}),
    ("get_crane_inventory", {"outreach_m": 24}),
    ("get_stability_status", {}),
    ("get_ballast_inventory", {}),
    ("configure_hatch_reinforcement", {"hatch_id": "H1", "target_area_sqm": 50}),
    ("simulate_dynamic_lift", LIFT),
    ("execute_ballast_transfer", {"adjustments": [{"tank_id": "WingTank_Port", "delta_mt": 300}]}),
    ("simulate_dynamic_lift", LIFT),
    (
        "execute_heavy_lift_operation",
        {"cargo_id": UNIT, "crane_ids": TANDEM, "destination_hatch": "H1"},
    ),
    ("execute_ballast_transfer", {"adjustments": [{"tank_id": "WingTank_Port", "delta_mt": -300}]}),
    ("get_stability_status", {}),
]
"""Task 26: read the unit, limits, hatch, cranes at 24 m, stability and tanks; spread the load
over 50 m2 of the H1 cover; simulate the tandem lift; counter-ballast the port wing tank until
the simulated list is within limits; lift; take the ballast back out; read the stability."""

MIN_GM = 2.2
MAX_LIST = 1.0
UNIT_WEIGHT = 460
"""Task 26's figures, as its verification plan states them."""


@pytest.fixture
def twin(public_sample: Path) -> HeavyLiftTwin:
    return sample_twin(public_sample, HeavyLiftTwin)


def test_every_success_fits_its_tools_example_output(twin: HeavyLiftTwin) -> None:
    steps = successes(twin, PLAN)
    assert {step.tool for step in steps} == set(twin.specs)


def test_unknown_ids_and_invalid_parameters_get_the_configs_error(twin: HeavyLiftTwin) -> None:
    lift = {"cargo_id": UNIT, "crane_ids": TANDEM, "destination_hatch": "H1"}
    cases: list[tuple[str, dict[str, Any], str | None]] = [
        ("get_cargo_details", {"cargo_id": "Reactor-9"}, "Unknown cargo_id"),
        ("get_hatch_details", {"hatch_id": "H7"}, "Invalid hatch_id"),
        ("configure_hatch_reinforcement", {"hatch_id": "H7", "target_area_sqm": 50}, None),
        ("configure_hatch_reinforcement", {"hatch_id": "H1", "target_area_sqm": 500}, None),
        ("get_crane_inventory", {"outreach_m": -3}, None),
        ("simulate_dynamic_lift", {**LIFT, "weight_mt": -460}, None),
        ("simulate_dynamic_lift", {**LIFT, "end_position": "H9"}, "Invalid end_position"),
        ("simulate_dynamic_lift", {**LIFT, "crane_ids": ["CR-09"]}, "Invalid crane_id: CR-09"),
        ("execute_heavy_lift_operation", {**lift, "cargo_id": "Reactor-9"}, "Unknown cargo_id"),
        ("execute_heavy_lift_operation", {**lift, "destination_hatch": "H7"}, "Invalid hatch_id"),
        ("execute_ballast_transfer", {"adjustments": [{"tank_id": "Deep", "delta_mt": 5}]}, None),
        ("load_cargo", {"hold_id": "H1"}, "Unknown action: load_cargo"),
    ]
    for name, arguments, message in cases:
        step = twin.call(name, arguments)
        assert_error_fits(twin, step)
        if message is not None:
            assert step.observation == {"error": message}
    assert_nothing_changed(twin)


def test_a_lift_breaking_a_limit_is_refused_and_changes_nothing(twin: HeavyLiftTwin) -> None:
    lift = {"cargo_id": UNIT, "crane_ids": TANDEM, "destination_hatch": "H1"}
    single = twin.call("execute_heavy_lift_operation", {**lift, "crane_ids": ["CR-01"]})
    assert single.observation["error"].startswith("Crane overloaded")
    unspread = twin.call("execute_heavy_lift_operation", lift)
    assert "UDL" in unspread.observation["error"]
    twin.call("configure_hatch_reinforcement", {"hatch_id": "H1", "target_area_sqm": 50})
    unballasted = twin.call("execute_heavy_lift_operation", lift)
    assert unballasted.observation == {"error": "Stability limit exceeded: lift aborted"}
    drain = twin.call(
        "execute_ballast_transfer",
        {
            "adjustments": [
                {"tank_id": "WingTank_Port", "delta_mt": 100},
                {"tank_id": "WingTank_Stbd", "delta_mt": -16},
            ]
        },
    )
    assert drain.observation == {"error": "Insufficient ballast in tank: WingTank_Stbd"}
    brim = twin.call(
        "execute_ballast_transfer",
        {"adjustments": [{"tank_id": "AftPeak", "delta_mt": 456}]},
    )
    assert brim.observation == {"error": "Exceeds tank capacity limit: AftPeak"}
    assert not any(s.changes for s in (single, unspread, unballasted, drain, brim))


def test_a_full_hold_or_ship_refuses_the_unit(twin: HeavyLiftTwin) -> None:
    lift = {"cargo_id": UNIT, "crane_ids": TANDEM, "destination_hatch": "H1"}
    twin.call("configure_hatch_reinforcement", {"hatch_id": "H1", "target_area_sqm": 50})
    twin.state["cargo_holds"][0]["current_load"] = 9_700
    full = twin.call("execute_heavy_lift_operation", lift)
    assert full.observation == {"error": "Exceeds hold capacity limit"}
    twin.state["cargo_holds"][0]["current_load"] = 0
    twin.state["vessel_metrics"]["max_deadweight"] = 5_000
    laden = twin.call("execute_heavy_lift_operation", lift)
    assert laden.observation == {"error": "Exceeds maximum permissible draft"}
    assert not full.changes and not laden.changes


def test_each_write_changes_the_state_as_the_config_says(twin: HeavyLiftTwin) -> None:
    spread = twin.call("configure_hatch_reinforcement", {"hatch_id": "H1", "target_area_sqm": 50})
    assert spread.observation == {"status": "configured", "effective_udl_t_per_m2": 9.2}
    assert changes(spread) == {"/cargo_holds/0/hatch_spread_area_sqm": (None, 50)}
    assert spread.free_state == ["/cargo_holds/0/hatch_spread_area_sqm"]  # a key of its own
    fill = twin.call(
        "execute_ballast_transfer",
        {"adjustments": [{"tank_id": "WingTank_Port", "delta_mt": 300}]},
    )
    assert fill.observation == {"success": True} and fill.marking() == {
        "/success": FieldKind.DETERMINED
    }
    assert changes(fill) == {
        "/ballast_tanks/2/current_fill_level": (15, 315),
        "/stability_status/metacentric_height_GM": (2.85, 2.88),
        "/stability_status/heel": (0.0, -0.3),
        "/stability_status/current_draft_mean": (8.2, 8.26),
    }
    model = [
        f"/stability_status/{field}"
        for field in ("current_draft_mean", "heel", "metacentric_height_GM", "trim")
    ]
    assert fill.free_state == [spread.free_state[0], *model]  # the tank levels are determined
    peaks = twin.call(
        "execute_ballast_transfer",
        {
            "adjustments": [
                {"tank_id": "AftPeak", "delta_mt": 50},
                {"tank_id": "ForePeak", "delta_mt": -40},
            ]
        },
    )
    assert changes(peaks) == {
        "/ballast_tanks/0/current_fill_level": (45, 5),
        "/ballast_tanks/1/current_fill_level": (45, 95),
        "/stability_status/metacentric_height_GM": (2.88, 2.881),
        "/stability_status/current_draft_mean": (8.26, 8.262),
        "/stability_status/trim": (0.15, 0.24),
    }
    lift = twin.call(
        "execute_heavy_lift_operation",
        {"cargo_id": UNIT, "crane_ids": TANDEM, "destination_hatch": "H1"},
    )
    assert lift.observation == {"status": "completed", "final_list_deg": -0.34}
    assert lift.marking() == {"/status": FieldKind.DETERMINED, "/final_list_deg": FieldKind.FREE}
    stowed = changes(lift)
    assert stowed["/cargo_holds/0/current_load"] == (0, UNIT_WEIGHT)
    assert stowed["/cargo_holds/0/cargo_type"] == ("empty", UNIT)
    assert lift.free_state == [
        "/cargo_holds/0/cargo_type",
        "/cargo_holds/0/current_load",
        "/cargo_holds/0/hatch_spread_area_sqm",
        *model,
    ]
    again = twin.call(
        "execute_heavy_lift_operation",
        {"cargo_id": UNIT, "crane_ids": TANDEM, "destination_hatch": "H2"},
    )
    assert again.observation == {"error": "Cargo already stowed"} and not again.changes


def test_the_reference_plan_solves_task_26(twin: HeavyLiftTwin) -> None:
    steps = successes(twin, PLAN)
    unit, limits, hatch, cranes = (steps[i].observation for i in range(4))
    assert unit == {"weight_mt": UNIT_WEIGHT, "footprint_sqm": 20, "description": UNIT}
    assert limits["min_gm_m"] == MIN_GM and limits["max_list_deg"] == MAX_LIST
    assert unit["weight_mt"] / unit["footprint_sqm"] > hatch["max_udl_t_per_m2"]
    assert all(c["swl_mt"] < UNIT_WEIGHT for c in cranes["cranes"])
    assert sum(c["swl_mt"] for c in cranes["cranes"]) >= UNIT_WEIGHT
    spread = steps[6].observation["effective_udl_t_per_m2"]
    assert spread == 9.2 and spread <= hatch["max_udl_t_per_m2"]
    before, after = steps[7].observation, steps[9].observation
    assert before["max_encountered_list_deg"] > MAX_LIST  # why the ballast goes in
    assert after == {
        "min_encountered_gm_m": 2.42,
        "max_encountered_list_deg": 0.95,
        "max_list_swing_deg": 1.29,
    }
    assert after["min_encountered_gm_m"] > MIN_GM and after["max_encountered_list_deg"] <= MAX_LIST
    assert steps[10].observation == {"status": "completed", "final_list_deg": -0.34}
    assert [s.tool for s in steps].count("execute_ballast_transfer") == 2
    final = steps[-1].observation
    assert final == {"current_gm_m": 2.482, "current_list_deg": 0.0}
    assert final["current_gm_m"] > MIN_GM and final["current_list_deg"] == 0.0
    h1 = twin.state["cargo_holds"][0]
    assert (h1["hold_id"], h1["cargo_type"], h1["current_load"]) == ("H1", UNIT, UNIT_WEIGHT)
    assert twin.state["stability_status"]["heel"] == 0.0
