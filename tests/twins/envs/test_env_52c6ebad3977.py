"""The vehicle diagnostics twin (``env_52c6ebad3977``): shapes, errors, writes, task 24."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from occubench.twins import ChangeKind, Outcome
from occubench.twins.envs.env_52c6ebad3977 import VehicleDiagnosticsTwin
from twin_envs import (
    assert_error_fits,
    assert_nothing_changed,
    assert_task_on,
    sample_twin,
    successes,
)

TASK = 24
U_CODES = ["U0073", "U0110", "U0101"]

PLAN: list[tuple[str, dict[str, Any]]] = [
    ("get_vehicle_status", {}),
    ("get_power_system_health", {}),
    ("get_component_integrity_report", {}),
    ("get_active_dtcs", {}),
    ("measure_pt_can_metrics", {}),
    ("repair_component", {"component_id": "battery"}),
    ("repair_component", {"component_id": "on_board_charger"}),
    ("clear_fault_codes", {}),
    ("set_ignition_position", {"position": "START"}),
    ("measure_pt_can_metrics", {}),
    ("get_active_dtcs", {}),
]
"""Task 24: check power, find the flooding module, repair, clear, drive cycle, re-measure."""


@pytest.fixture
def twin(public_sample: Path) -> VehicleDiagnosticsTwin:
    return sample_twin(public_sample, VehicleDiagnosticsTwin)


def test_every_success_fits_its_tools_example_output(twin: VehicleDiagnosticsTwin) -> None:
    isolate = ("isolate_node_power", {"node_id": "traction_inverter", "is_isolated": True})
    steps = successes(twin, [*PLAN, isolate])
    assert {step.tool for step in steps} == set(twin.specs)


def test_unknown_ids_and_tools_get_the_configs_errors(twin: VehicleDiagnosticsTwin) -> None:
    assert twin.call("check_fuel_trim", {}).observation == {
        "error": "Action 'check_fuel_trim' not found"
    }
    assert twin.call("repair_component", {"component_id": "ECM"}).observation == {
        "error": "Component 'ECM' not found"
    }
    for node in ("ECM", "battery"):
        step = twin.call("isolate_node_power", {"node_id": node, "is_isolated": True})
        assert step.observation == {"error": f"Node '{node}' not found"}
    bad = twin.call("set_ignition_position", {"position": "RUN"})
    assert_error_fits(twin, bad)
    assert "position" in bad.observation["error"]
    assert_nothing_changed(twin)


def test_reads_report_the_state_and_free_what_it_lacks(twin: VehicleDiagnosticsTwin) -> None:
    power = twin.call("get_power_system_health", {})
    assert power.observation["battery_integrity"] == 42
    assert power.free == ["/voltage_v", "/alternator_integrity"]
    report = twin.call("get_component_integrity_report", {})
    assert report.observation["integrity_map"] == twin.env.task_initial_state["component_integrity"]
    assert report.free == []
    bus = twin.call("measure_pt_can_metrics", {})
    assert bus.observation["termination_resistance_ohms"] == 60.1
    assert bus.free == ["/bus_load_percent"] and bus.observation["bus_load_percent"] > 40


def test_the_bus_needs_the_ignition_and_the_gateway(twin: VehicleDiagnosticsTwin) -> None:
    off = twin.call("set_ignition_position", {"position": "OFF"})
    assert [(c.path, c.before, c.after) for c in off.changes] == [("/ignition_status", "ON", "OFF")]
    for name in ("get_active_dtcs", "measure_pt_can_metrics", "clear_fault_codes"):
        assert twin.call(name, {}).observation == {"error": "No signal: ignition is OFF"}
    assert twin.call("get_power_system_health", {}).outcome is Outcome.SUCCESS
    twin.call("set_ignition_position", {"position": "ON"})
    cut = twin.call("isolate_node_power", {"node_id": "gateway_module", "is_isolated": True})
    assert [(c.path, c.kind, c.after) for c in cut.changes] == [
        ("/isolated_nodes", ChangeKind.ADDED, ["gateway_module"])
    ]
    assert "gateway_module" in twin.call("get_active_dtcs", {}).observation["error"]
    back = twin.call("isolate_node_power", {"node_id": "gateway_module", "is_isolated": False})
    assert twin.state["isolated_nodes"] == [] and back.outcome is Outcome.SUCCESS
    assert cut.free_state == back.free_state == ["/isolated_nodes"]  # the twin's own key
    assert off.free_state == []  # the ignition and the codes are the config's
    assert twin.call("get_active_dtcs", {}).observation == {"dtc_list": U_CODES}


def test_cleared_codes_come_back_after_a_drive_cycle_while_a_fault_remains(
    twin: VehicleDiagnosticsTwin,
) -> None:
    cleared = twin.call("clear_fault_codes", {})
    assert twin.state["active_dtcs"] == [] and cleared.changes
    start = twin.call("set_ignition_position", {"position": "START"})
    assert twin.state["active_dtcs"] == U_CODES
    assert twin.state["engine_running"] is False  # no fuel, weak battery
    assert ("/ignition_status", "START") in {(c.path, c.after) for c in start.changes}
    fixed = twin.call("repair_component", {"component_id": "battery"})
    assert [(c.path, c.before, c.after) for c in fixed.changes] == [
        ("/component_integrity/battery", 42, 100)
    ]
    twin.call("isolate_node_power", {"node_id": "on_board_charger", "is_isolated": True})
    assert twin.call("measure_pt_can_metrics", {}).observation["bus_load_percent"] < 40
    twin.call("clear_fault_codes", {})
    twin.call("set_ignition_position", {"position": "START"})
    assert twin.state["active_dtcs"] == []


def test_the_reference_plan_solves_task_24(
    public_sample: Path, twin: VehicleDiagnosticsTwin
) -> None:
    assert_task_on(public_sample, TASK, twin)
    steps = successes(twin, PLAN)
    assert steps[1].observation["battery_integrity"] == 42
    assert steps[2].observation["integrity_map"]["on_board_charger"] == 5
    assert steps[3].observation["dtc_list"] == U_CODES
    assert steps[4].observation["bus_load_percent"] > 40.0
    assert 15.0 <= steps[9].observation["bus_load_percent"] <= 40.0
    assert not [code for code in steps[10].observation["dtc_list"] if code.startswith("U")]
    assert "isolated_nodes" not in twin.state  # the gateway was never cut
    assert twin.state["component_integrity"]["battery"] == 100
    assert twin.state["component_integrity"]["on_board_charger"] == 100
