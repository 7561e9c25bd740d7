"""The permit processing twin: shapes, errors, the final review's write, the HazMat task."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from occubench.twins import ChangeKind, FieldKind, Outcome, Twin
from occubench.twins.envs.env_f0ad9bbe4f86 import PermitProcessingTwin
from twin_envs import assert_fits, sample_twin, successes

VIOLATIONS = [
    "Secondary containment 1050 gal for a 1000 gal vessel is 105%, below the 110% minimum",
    "NFPA 55: pyrophoric Silane gas cabinet on the interior production floor, "
    "not at an exterior wall",
    "MAQ exceeded for pyrophoric gas: occupancy must be High-Hazard Group H, not F-1",
]

# The task: find the battery plant in the queue, check the clock against its submission,
# read the standards, and deny it with every violation documented.
HAZMAT_PLAN: list[tuple[str, dict[str, Any]]] = [
    ("get_system_context", {}),
    ("get_application_queue", {}),
    ("get_application_details", {"application_id": "APP-2025-042"}),
    ("get_application_details", {"application_id": "APP-2025-001"}),
    ("get_application_details", {"application_id": "APP-2025-089"}),
    ("get_regulatory_standards", {"standard_category": "MAQ_TABLES"}),
    ("get_regulatory_standards", {"standard_category": "CONTAINMENT_RATIOS"}),
    ("get_regulatory_standards", {"standard_category": "NFPA_55_GAS"}),
    (
        "finalize_application_review",
        {
            "application_id": "APP-2025-042",
            "status": "DENIED",
            "violations": VIOLATIONS,
            "case_notes": "Shotgun clock expired (36 days > 30). " + "; ".join(VIOLATIONS),
        },
    ),
]


@pytest.fixture
def twin(public_sample: Path) -> Twin:
    return sample_twin(public_sample, PermitProcessingTwin)


def test_every_success_fits_its_example_output(twin: Twin) -> None:
    steps = successes(twin, HAZMAT_PLAN)
    details = steps[2]
    assert details.observation["gas_cabinets"] == [
        {"id": "GC-1", "gas": "Silane Gas", "placement": "Interior Production Floor"}
    ]
    assert details.marking()["/gas_cabinets/0/id"] is FieldKind.FREE
    assert details.marking()["/gas_cabinets/0/placement"] is FieldKind.DETERMINED
    assert steps[3].marking()["/solvent_storage/volume"] is FieldKind.FREE
    assert steps[5].marking()["/standard_name"] is FieldKind.DETERMINED
    assert {p for p, kind in steps[5].marking().items() if kind is FieldKind.FREE} == {
        p for p in steps[5].marking() if p.startswith("/data/")
    }


def test_unknown_ids_get_the_configs_error(twin: Twin) -> None:
    for name, arguments in (
        ("get_application_details", {"application_id": "APP-2099-999"}),
        (
            "finalize_application_review",
            {
                "application_id": "APP-2099-999",
                "status": "APPROVED",
                "violations": [],
                "case_notes": "",
            },
        ),
    ):
        step = twin.call(name, arguments)
        assert step.observation == {"error": "Application ID not found"}
        assert step.marking() == {"/error": FieldKind.DETERMINED} and not step.changes
    bad = twin.call("get_regulatory_standards", {"standard_category": "OSHA"})
    assert bad.outcome is Outcome.ERROR and bad.marking() == {"/error": FieldKind.FREE}
    assert twin.call("approve_permit", {"application_id": "APP-2025-001"}).outcome is (
        Outcome.ERROR
    )
    assert twin.state == twin.env.task_initial_state


def test_the_final_review_writes_status_findings_and_closes_the_queue_entry(twin: Twin) -> None:
    arguments = {
        "application_id": "APP-2025-001",
        "status": "APPROVED",
        "violations": [],
        "case_notes": "Class IV commodities within S-1 limits.",
    }
    step = assert_fits(twin, twin.call("finalize_application_review", arguments))
    assert step.marking() == dict.fromkeys(["/transaction_id", "/timestamp"], FieldKind.FREE)
    assert [(c.path, c.kind, c.after) for c in step.changes] == [
        ("/applications/APP-2025-001/status", ChangeKind.CHANGED, "APPROVED"),
        ("/applications/APP-2025-001/violations", ChangeKind.ADDED, []),
        ("/applications/APP-2025-001/case_notes", ChangeKind.ADDED, arguments["case_notes"]),
        ("/processing_queue/1", ChangeKind.CHANGED, "APP-2025-089"),
        ("/processing_queue/2", ChangeKind.REMOVED, None),
    ]
    assert step.free_state == [
        "/applications/APP-2025-001/case_notes",
        "/applications/APP-2025-001/violations",
        "/system_clock",
    ]
    again = twin.call("finalize_application_review", arguments | {"status": "DENIED"})
    assert again.outcome is Outcome.ERROR and not again.changes
    assert twin.state["applications"]["APP-2025-001"]["status"] == "APPROVED"


def test_the_reference_plan_solves_the_hazmat_task(twin: Twin) -> None:
    steps = successes(twin, HAZMAT_PLAN)
    context, queue, plant = steps[0], steps[1], steps[2]
    assert "APP-2025-042" in queue.observation["queue"]
    assert plant.observation["applicant"] == "Apex Battery Manufacturing"
    clock = datetime.fromisoformat(context.observation["system_clock"])
    submitted = datetime.fromisoformat(plant.observation["submission_date"])
    assert (clock.date(), submitted.date()) == (
        datetime(2025, 2, 15).date(),
        datetime(2025, 1, 10).date(),
    )
    assert (clock - submitted).days > 30
    storage = plant.observation["solvent_storage"]
    assert storage == {"volume": 1000, "containment_capacity": 1050}
    assert storage["containment_capacity"] / storage["volume"] < 1.10
    materials = {m["chemical"]: m for m in plant.observation["materials_inventory"]}
    assert materials["Silane Gas"]["hazard"] == "Pyrophoric"
    assert materials["Silane Gas"]["quantity"] == 100
    assert materials["N-Methyl-2-pyrrolidone (NMP)"]["quantity"] == 5000
    assert plant.observation["gas_cabinets"][0]["placement"] == "Interior Production Floor"
    assert all(
        s.marking().get(p) is FieldKind.DETERMINED
        for s, p in (
            (plant, "/solvent_storage/volume"),
            (plant, "/solvent_storage/containment_capacity"),
            (plant, "/gas_cabinets/0/placement"),
            (context, "/system_clock"),
            (plant, "/submission_date"),
        )
    )
    record = twin.state["applications"]["APP-2025-042"]
    assert record["status"] == "DENIED" and record["violations"] == VIOLATIONS
    assert "110%" in record["case_notes"] and "NFPA 55" in record["case_notes"]
    assert "APP-2025-042" not in twin.state["processing_queue"]
