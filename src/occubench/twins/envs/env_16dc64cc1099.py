"""Twin of ``env_16dc64cc1099``: a pharmacy prescription verification queue.

How it reads its config (one ambiguity a line):
- Errors: ``{"error": "<message>"}``; an undefined action is "Action not found" (the prompt's).
- Missing or mistyped parameters, unknown ids: a descriptive message in that shape.
- ``system_status`` is only reported: no rule of the config ties the other tools to it.
- A pending order's ``dosage`` is the state's text as written (determined).
- ``scheduled_time`` is the ``HH:MM`` that dosage text names (free null when it names none).
- ``lab_results``: one entry per value of the record's ``labs``, dated by ``collection_date``.
- The records hold no allergies: ``allergies`` is free (an empty list).
- A patient a prescription names but no record holds is not found (never invented).
- ``check_inventory`` needs the inventory's own name (any case); a bare drug name is not found.
- Notes must be non-empty for REJECTED and FLAGGED (the parameter's description).
- APPROVED needs an entry "<drug> <strength>" with stock > 0, else "Insufficient inventory for".
- The config gives no quantity dispensed: approval leaves the inventory unchanged.
- Each decision appends ``{prescription_id, decision, notes, timestamp}`` to the log.
- APPROVED and REJECTED leave ``pending_prescriptions``; FLAGGED holds the order in the queue.
- A rejected (or approved) order cannot be decided again "without a re-submission".
- The timestamp is free (no clock): a fixed day at 08:00Z plus a minute per logged decision.
- Free state: each logged decision's ``timestamp`` (``/verification_log/<n>/timestamp``).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from occubench.twins._twin import Answer, Twin, tool

START = dt.datetime(2024, 1, 15, 8, 0, tzinfo=dt.UTC)
"""The time of the session's first decision (the config holds no clock; free)."""

_TIME = re.compile(r"\b([01]\d|2[0-3]):[0-5]\d\b")
_FINAL = {"APPROVED": "approved", "REJECTED": "rejected"}


class PharmacyVerificationTwin(Twin):
    """The prescription verification queue (module doc)."""

    environment = "env_16dc64cc1099"

    def error(self, message: str, code: str | None = None) -> Answer:
        """The config's error shape: ``{"error": "<message>"}``."""
        return Answer(observation={"error": message})

    def unknown_tool(self, tool_name: str) -> Answer:
        """The prompt's words for an undefined action."""
        return self.error("Action not found")

    @tool
    def get_system_status(self, arguments: dict[str, Any]) -> Answer:
        """The verification system's status as the state holds it."""
        return Answer(observation={"status": self.state["system_status"]})

    @tool
    def list_pending_orders(self, arguments: dict[str, Any]) -> Answer:
        """Every prescription awaiting verification, in the queue's order."""
        out: list[dict[str, Any]] = []
        free: list[str] = []
        for index, rx in enumerate(self.state["pending_prescriptions"]):
            time = _TIME.search(str(rx.get("dosage", "")))
            if time is None:
                free.append(f"/prescriptions/{index}/scheduled_time")
            out.append(
                {
                    "prescription_id": rx["prescription_id"],
                    "patient_id": rx["patient_id"],
                    "drug_name": rx["drug_name"],
                    "dosage": rx["dosage"],
                    "scheduled_time": time.group(0) if time else None,
                }
            )
        return Answer(observation={"prescriptions": out}, free=free)

    @tool
    def get_patient_clinical_data(self, arguments: dict[str, Any]) -> Answer:
        """The patient's medications and labs; allergies are not on record (free)."""
        record = self.state["patient_health_records"].get(arguments["patient_id"])
        if record is None:
            return self.error(f"Patient {arguments['patient_id']} not found")
        labs = dict(record.get("labs") or {})
        date = labs.pop("collection_date", None)
        return Answer(
            observation={
                "active_medications": list(record.get("active_medications", [])),
                "allergies": [],
                "lab_results": [
                    {"test": test, "value": value, "date": date} for test, value in labs.items()
                ],
            },
            free=["/allergies"],
        )

    @tool
    def check_inventory(self, arguments: dict[str, Any]) -> Answer:
        """The stock of one inventory entry, named as the inventory names it."""
        wanted = arguments["drug_name"].strip().lower()
        for name, stock in self.state["inventory"].items():
            if name.lower() == wanted:
                return Answer(observation={"drug_name": name, "stock_level": stock})
        return self.error(f"Drug {arguments['drug_name']} not found in inventory")

    @tool
    def submit_prescription_action(self, arguments: dict[str, Any]) -> Answer:
        """Approve, reject or flag a prescription (module doc for each rule)."""
        rx_id, decision, notes = (
            arguments["prescription_id"],
            arguments["decision"],
            arguments["notes"],
        )
        pending = self.state["pending_prescriptions"]
        index = next((i for i, rx in enumerate(pending) if rx["prescription_id"] == rx_id), None)
        if index is None:
            done = [e for e in self.state["verification_log"] if e["prescription_id"] == rx_id]
            final = [e["decision"] for e in done if e["decision"] in _FINAL]
            if final:
                return self.error(
                    f"Prescription {rx_id} has already been {_FINAL[final[-1]]}; "
                    "it cannot be processed again without a re-submission"
                )
            return self.error(f"Prescription {rx_id} not found")
        if decision != "APPROVED" and not notes.strip():
            return self.error(f"Notes are mandatory for a {decision} decision")
        rx = pending[index]
        if decision == "APPROVED":
            words = str(rx.get("dosage", "")).split()
            product = " ".join([rx["drug_name"], *words[:1]])
            stock = sum(
                quantity
                for name, quantity in self.state["inventory"].items()
                if name.lower() == product.lower() or name.lower().startswith(product.lower() + " ")
            )
            if stock <= 0:
                return self.error(f"Insufficient inventory for {product}")
        log = self.state["verification_log"]
        stamp = (START + dt.timedelta(minutes=len(log))).strftime("%Y-%m-%dT%H:%M:%SZ")
        log.append(
            {"prescription_id": rx_id, "decision": decision, "notes": notes, "timestamp": stamp}
        )
        if decision in _FINAL:
            del pending[index]
        return Answer(
            observation={"status": "success", "timestamp": stamp},
            free=["/timestamp"],
            free_state=[f"/verification_log/{len(log) - 1}/timestamp"],
        )
