"""The pharmacy verification twin (``env_16dc64cc1099``): shapes, errors, writes, task 119."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from occubench.twins import ChangeKind, Outcome
from occubench.twins.envs.env_16dc64cc1099 import PharmacyVerificationTwin
from twin_envs import (
    assert_error_fits,
    assert_nothing_changed,
    assert_task_on,
    sample_twin,
    successes,
)

TASK = 119

PLAN: list[tuple[str, dict[str, Any]]] = [
    ("get_system_status", {}),
    ("list_pending_orders", {}),
    ("get_patient_clinical_data", {"patient_id": "PAT-777"}),
    ("check_inventory", {"drug_name": "Warfarin 5mg Tab"}),
    (
        "submit_prescription_action",
        {
            "prescription_id": "RX-8801",
            "decision": "FLAGGED",
            "notes": "Hold warfarin 5mg: INR 4.2 (2023-11-15) is above range; on amiodarone.",
        },
    ),
    (
        "submit_prescription_action",
        {
            "prescription_id": "RX-8804",
            "decision": "REJECTED",
            "notes": "Duplicate: Lisinopril 10mg QD is already an active medication.",
        },
    ),
]
"""Task 119: the queue, PAT-777's record, then flag the warfarin, reject the duplicate."""


@pytest.fixture
def twin(public_sample: Path) -> PharmacyVerificationTwin:
    return sample_twin(public_sample, PharmacyVerificationTwin)


def _pending(twin: PharmacyVerificationTwin) -> list[str]:
    return [rx["prescription_id"] for rx in twin.state["pending_prescriptions"]]


def test_every_success_fits_its_tools_example_output(twin: PharmacyVerificationTwin) -> None:
    steps = successes(twin, PLAN)
    assert {step.tool for step in steps} == set(twin.specs)


def test_unknown_ids_and_tools_get_the_configs_errors(twin: PharmacyVerificationTwin) -> None:
    assert twin.call("dispense", {}).observation == {"error": "Action not found"}
    errors = {
        "get_patient_clinical_data": {"patient_id": "PAT-787"},  # prescribed, no record
        "check_inventory": {"drug_name": "Warfarin"},  # several strengths: not guessed
        "submit_prescription_action": {
            "prescription_id": "RX-9999",
            "decision": "APPROVED",
            "notes": "",
        },
    }
    for name, arguments in errors.items():
        assert_error_fits(twin, twin.call(name, arguments))
    missing = twin.call("submit_prescription_action", {"prescription_id": "RX-8801"})
    assert "notes" in missing.observation["error"] or "decision" in missing.observation["error"]
    assert_nothing_changed(twin)


def test_reads_report_the_state_and_free_only_what_it_lacks(
    twin: PharmacyVerificationTwin,
) -> None:
    queue = twin.call("list_pending_orders", {})
    assert queue.free == []
    assert queue.observation["prescriptions"][0] == {
        "prescription_id": "RX-8801",
        "patient_id": "PAT-777",
        "drug_name": "Warfarin",
        "dosage": "5mg Daily at 08:00",
        "scheduled_time": "08:00",
    }
    record = twin.call("get_patient_clinical_data", {"patient_id": "PAT-778"})
    assert record.observation["lab_results"] == [
        {"test": "INR", "value": 2.1, "date": "2023-11-14"}
    ]
    assert record.free == ["/allergies"]
    stock = twin.call("check_inventory", {"drug_name": "warfarin 5MG tab"})
    assert stock.observation == {"drug_name": "Warfarin 5mg Tab", "stock_level": 500}


def test_approval_removes_the_order_logs_it_and_leaves_the_stock(
    twin: PharmacyVerificationTwin,
) -> None:
    step = twin.call(
        "submit_prescription_action",
        {"prescription_id": "RX-8803", "decision": "APPROVED", "notes": ""},
    )
    assert step.outcome is Outcome.SUCCESS and step.free == ["/timestamp"]
    assert _pending(twin) == ["RX-8801", "RX-8802", "RX-8804", "RX-8805"]
    assert twin.state["verification_log"] == [
        {
            "prescription_id": "RX-8803",
            "decision": "APPROVED",
            "notes": "",
            "timestamp": step.observation["timestamp"],
        }
    ]
    assert twin.state["inventory"] == twin.env.task_initial_state["inventory"]
    assert ("/verification_log/0", ChangeKind.ADDED) in {(c.path, c.kind) for c in step.changes}
    again = twin.call(
        "submit_prescription_action",
        {"prescription_id": "RX-8803", "decision": "REJECTED", "notes": "second thoughts"},
    )
    assert again.outcome is Outcome.ERROR and not again.changes
    assert again.free_state == step.free_state == ["/verification_log/0/timestamp"]


def test_only_the_logged_timestamps_are_free_state(twin: PharmacyVerificationTwin) -> None:
    for rx in ("RX-8801", "RX-8802"):
        step = twin.call(
            "submit_prescription_action",
            {"prescription_id": rx, "decision": "FLAGGED", "notes": "check INR"},
        )
    assert step.free_state == ["/verification_log/0/timestamp", "/verification_log/1/timestamp"]
    assert twin.call("get_system_status", {}).free_state == step.free_state


def test_a_rejection_is_final_and_a_flag_holds_the_order(twin: PharmacyVerificationTwin) -> None:
    def submit(rx: str, decision: str, notes: str = "reason") -> Any:
        arguments = {"prescription_id": rx, "decision": decision, "notes": notes}
        return twin.call("submit_prescription_action", arguments)

    assert submit("RX-8802", "REJECTED", "  ").outcome is Outcome.ERROR  # notes mandatory
    assert submit("RX-8802", "REJECTED").outcome is Outcome.SUCCESS
    refused = submit("RX-8802", "APPROVED")
    assert refused.outcome is Outcome.ERROR and "re-submission" in refused.observation["error"]
    assert submit("RX-8805", "FLAGGED").outcome is Outcome.SUCCESS
    assert "RX-8805" in _pending(twin)
    assert submit("RX-8805", "APPROVED", "").outcome is Outcome.SUCCESS
    assert [(e["prescription_id"], e["decision"]) for e in twin.state["verification_log"]] == [
        ("RX-8802", "REJECTED"),
        ("RX-8805", "FLAGGED"),
        ("RX-8805", "APPROVED"),
    ]
    assert _pending(twin) == ["RX-8801", "RX-8803", "RX-8804"]


def test_no_stock_refuses_an_approval(twin: PharmacyVerificationTwin) -> None:
    state = copy.deepcopy(twin.env.task_initial_state)
    state["inventory"]["Lisinopril 10mg Tab"] = 0
    twin.reset(state)
    step = twin.call(
        "submit_prescription_action",
        {"prescription_id": "RX-8804", "decision": "APPROVED", "notes": ""},
    )
    assert step.observation == {"error": "Insufficient inventory for Lisinopril 10mg"}
    assert not step.changes


def test_the_reference_plan_solves_task_119(
    public_sample: Path, twin: PharmacyVerificationTwin
) -> None:
    assert_task_on(public_sample, TASK, twin)
    steps = successes(twin, PLAN)
    orders = steps[1].observation["prescriptions"]
    mine = [(o["prescription_id"], o["drug_name"]) for o in orders if o["patient_id"] == "PAT-777"]
    assert mine == [("RX-8801", "Warfarin"), ("RX-8804", "Lisinopril")]
    record = steps[2].observation
    assert {"test": "INR", "value": 4.2, "date": "2023-11-15"} in record["lab_results"]
    assert "Lisinopril 10mg QD" in record["active_medications"]
    decisions = {e["prescription_id"]: e["decision"] for e in twin.state["verification_log"]}
    assert decisions == {"RX-8801": "FLAGGED", "RX-8804": "REJECTED"}
    assert _pending(twin) == ["RX-8801", "RX-8802", "RX-8803", "RX-8805"]
