"""The excavation search twin (``env_b53281819cc1``): shapes, errors, writes, task 46 on it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from occubench.twins import FieldKind, Outcome
from occubench.twins.envs.env_b53281819cc1 import ExcavationSearchTwin, signature_of
from twin_envs import assert_nothing_changed, changes, sample_twin, successes

SECTOR = {"start_coord": "N1020/E1020", "end_coord": "N1020/E1030"}
SECTOR_CELLS = ["N1020/E1020", "N1020/E1021", "N1020/E1022", "N1020/E1025", "N1020/E1028"]

PLAN: list[tuple[str, dict[str, Any]]] = [
    ("get_site_telemetry", {}),
    ("identify_sector_cells", SECTOR),
    *[
        (name, {"cell_id": cell})
        for cell in SECTOR_CELLS
        for name in ("apply_total_station_survey", "scan_electronic_signatures")
    ],
    ("verify_artifact_identity", {"sig_id": "SIG-771"}),
    ("verify_artifact_identity", {"sig_id": "SIG-772"}),
    ("verify_artifact_identity", {"sig_id": "SIG-774"}),
    ("get_site_telemetry", {}),
    ("log_mission_abort", {"reason": "Target Not Found"}),
]
"""Task 46 (its "verified absence" path): read the telemetry, list the sector's cells, map each
with the Total Station and scan it, verify every signature found, read the telemetry again,
and abort citing the target's absence."""

STABILITY_FLOOR = 0.50
REDUNDANCY_FLOOR = 3.0
TARGET = "FDR-X-109"
FRAGMENTS = {"FRAG-771", "FRAG-772", "FRAG-774"}
"""Task 46's figures and names, as its verification plan states them."""


@pytest.fixture
def twin(public_sample: Path) -> ExcavationSearchTwin:
    return sample_twin(public_sample, ExcavationSearchTwin)


def test_every_success_fits_its_tools_example_output(twin: ExcavationSearchTwin) -> None:
    steps = successes(
        twin,
        [*PLAN, ("execute_precision_recovery", {"sig_id": "SIG-772", "cell_id": "N1020/E1022"})],
    )
    assert {step.tool for step in steps} == set(twin.specs)


def test_undefined_ids_get_the_configs_error(twin: ExcavationSearchTwin) -> None:
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("apply_total_station_survey", {"cell_id": "B4"}, "Undefined grid cell: B4"),
        ("scan_electronic_signatures", {"cell_id": "B4"}, "Undefined grid cell: B4"),
        ("identify_sector_cells", {**SECTOR, "end_coord": "B4"}, "Invalid grid coordinate: B4"),
        ("verify_artifact_identity", {"sig_id": "SIG-882"}, "Unknown signature: SIG-882"),
        (
            "execute_precision_recovery",
            {"sig_id": "SIG-771", "cell_id": "B4"},
            "Undefined grid cell: B4",
        ),
        (
            "execute_precision_recovery",
            {"sig_id": "SIG-771", "cell_id": "N1020/E1022"},
            "Signature SIG-771 not found in N1020/E1022",
        ),
        ("excavate_grid", {"grid_id": "B4"}, "Unknown action: excavate_grid"),
    ]
    for name, arguments, message in cases:
        assert twin.call(name, arguments).observation == {"error": message}
    assert twin.call("apply_total_station_survey", {}).outcome is Outcome.ERROR
    assert_nothing_changed(twin)


def test_operations_refuse_without_charge_or_a_working_total_station(
    twin: ExcavationSearchTwin,
) -> None:
    equipment = twin.state["resource_pool"]["equipment_integrity"]
    equipment["Optical_Total_Station"] = 0
    worn = twin.call("apply_total_station_survey", {"cell_id": "N1020/E1021"})
    assert worn.observation == {"error": "Optical Total Station out of service"}
    for key in ("Power_Station_Alpha_Charge", "Power_Station_Beta_Charge"):
        equipment[key] = 0
    equipment["Power_Station_Gamma_Charge"] = 2
    drained = twin.call(
        "execute_precision_recovery", {"sig_id": "SIG-771", "cell_id": "N1020/E1020"}
    )
    assert drained.observation == {"error": "Insufficient power station charge"}
    assert not worn.changes and not drained.changes


def test_each_write_changes_the_state_as_the_config_says(twin: ExcavationSearchTwin) -> None:
    survey = twin.call("apply_total_station_survey", {"cell_id": "N1020/E1021"})
    assert survey.observation == {"mapping_accuracy_m": 0.0245, "provenience_recorded": True}
    assert changes(survey) == {
        "/grid_map/N1020~1E1021/status": ("unexplored", "surveyed"),
        "/resource_pool/equipment_integrity/Optical_Total_Station": (92, 91),
        "/resource_pool/equipment_integrity/Power_Station_Beta_Charge": (40, 39),
        "/site_conditions/stability_index": (0.62, 0.61),
    }
    equipment = "/resource_pool/equipment_integrity"
    assert survey.free_state == [  # the cell's status is determined
        f"{equipment}/Optical_Total_Station",
        f"{equipment}/Power_Station_Beta_Charge",
        "/site_conditions/stability_index",
    ]
    scan = twin.call("scan_electronic_signatures", {"cell_id": "N1020/E1025"})
    assert scan.marking() == {
        "/found_signatures/0/sig_id": FieldKind.FREE,
        "/found_signatures/0/description": FieldKind.FREE,
    }
    assert changes(scan) == {
        "/resource_pool/equipment_integrity/Power_Station_Beta_Charge": (39, 38),
        "/site_conditions/stability_index": (0.61, 0.6),
    }
    sig = scan.observation["found_signatures"][0]["sig_id"]
    recovery = twin.call("execute_precision_recovery", {"sig_id": sig, "cell_id": "N1020/E1025"})
    assert recovery.observation == {
        "status": "Success",
        "item_recovered": "FDR-X-109-Mounting-Bracket",
    }
    assert changes(recovery) == {
        "/grid_map/N1020~1E1025/status": ("surveyed", "excavated"),
        "/resource_pool/equipment_integrity/Power_Station_Beta_Charge": (38, 35),
        "/discovered_artifacts/3/recovered": (None, True),
        "/site_conditions/stability_index": (0.6, 0.57),
    }
    assert scan.free_state == survey.free_state
    assert recovery.free_state == ["/discovered_artifacts/3/recovered", *survey.free_state]
    again = twin.call("execute_precision_recovery", {"sig_id": sig, "cell_id": "N1020/E1025"})
    assert again.observation == {"error": "Signature SIG-774 already recovered"}
    assert not again.changes
    telemetry = twin.call("get_site_telemetry", {})
    assert telemetry.marking()["/stability_index"] is FieldKind.FREE


def test_the_reference_plan_solves_task_46(twin: ExcavationSearchTwin) -> None:
    steps = successes(twin, PLAN)
    first = steps[0]
    assert first.observation["stability_index"] == 0.62
    assert first.marking()["/stability_index"] is FieldKind.DETERMINED
    assert steps[1].observation == {"cell_ids": SECTOR_CELLS}
    assert steps[1].marking() == {f"/cell_ids/{i}": FieldKind.DETERMINED for i in range(5)}
    surveyed = [s.arguments["cell_id"] for s in steps if s.tool == "apply_total_station_survey"]
    scanned = [s.arguments["cell_id"] for s in steps if s.tool == "scan_electronic_signatures"]
    assert surveyed == scanned == SECTOR_CELLS
    assert all(
        s.observation["provenience_recorded"] is True and s.observation["mapping_accuracy_m"] < 0.03
        for s in steps
        if s.tool == "apply_total_station_survey"
    )
    found = [
        sig["sig_id"]
        for s in steps
        if s.tool == "scan_electronic_signatures"
        for sig in s.observation["found_signatures"]
    ]
    assert found == ["SIG-771", "SIG-772", "SIG-774"]
    verdicts = [s.observation for s in steps if s.tool == "verify_artifact_identity"]
    assert [v["is_intact"] for v in verdicts] == [False, False, False]
    assert all(v["serial_number"] != TARGET for v in verdicts)
    artifacts = twin.state["discovered_artifacts"]
    assert {a["id"] for a in artifacts if signature_of(a["id"]) in found} == FRAGMENTS
    telemetry = steps[-2].observation
    assert telemetry == {
        "stability_index": 0.52,
        "power_stations": [
            {"station_id": "Power_Station_Alpha", "redundancy_ratio": 3.2},
            {"station_id": "Power_Station_Beta", "redundancy_ratio": 3.3},
            {"station_id": "Power_Station_Gamma", "redundancy_ratio": 3.0},
        ],
    }
    assert telemetry["stability_index"] >= STABILITY_FLOOR
    assert all(p["redundancy_ratio"] >= REDUNDANCY_FLOOR for p in telemetry["power_stations"])
    assert steps[-1].observation == {} and not steps[-1].changes
    grid = twin.state["grid_map"]
    assert [cid for cid, cell in grid.items() if cell["status"] == "unexplored"] == [
        "N1020.5/E1020.5"
    ]
    equipment = twin.state["resource_pool"]["equipment_integrity"]
    assert equipment["RTK_GNSS_Rover"] == 85 and equipment["Optical_Total_Station"] == 87
