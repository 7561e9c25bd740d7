"""Twin of ``env_f0ad9bbe4f86``: permit application processing (queue, records, final review).

How it reads its config:
- Errors are ``{"error": ...}``. An unknown application id gets the prompt's
  ``Application ID not found`` (determined), for reads as for the final review; other
  errors (unknown tool, bad arguments, a logic error) have free wording.
- ``get_system_context``: ``system_clock`` and ``officer_id`` from the state (determined);
  the state lists no permissions, so ``permissions`` is free (chosen read and write).
  The officer's role and specialization have no field in the example and are left out.
- ``get_application_queue``: the state's ``processing_queue`` in its order.
- ``get_application_details`` answers in the example's fields. ``applicant``, ``type`` and
  ``submission_date`` come from the record. A record whose ``details`` hold an
  ``inventory`` list gives ``materials_inventory`` (each item's chemical, quantity, unit,
  hazard), ``solvent_storage`` (``volume`` the liquid's ``largest_vessel``,
  ``containment_capacity`` the ``containment_sump_capacity``) and ``gas_cabinets`` (each
  item measured in ``cu_ft``: its chemical as ``gas``, its ``location`` as
  ``placement``; the cabinet ``id`` is free, chosen ``GC-<n>``). A record without those
  facts (a single ``materials`` text) gets all three free (chosen empty, and zero volumes).
  Fields the example has no place for (status, occupancy, sprinklers) are not shown.
- ``get_regulatory_standards``: ``standard_name`` is the category asked; the state holds no
  statutory tables, so ``data`` is free (the twin chooses plain tables of its own).
- ``finalize_application_review`` sets the record's ``status`` to the one given, records
  ``violations`` and ``case_notes`` on it under those names and takes it off
  ``processing_queue`` (the review is closed). A record already holding one of the final
  statuses gets a logic error and nothing changes. ``transaction_id`` and ``timestamp``
  are free (chosen ``TXN_<n>`` by count of reviews closed, and the state's clock).
- The clock does not move: the prompt asks for timestamps that advance but says by how
  much nowhere, so ``system_clock`` is left as the state holds it, and from the first
  review on it is free state (a simulator that advances it is not wrong).
- Free state: ``/system_clock`` and a closed record's ``violations`` and ``case_notes``
  keys (the config's records have no such keys: a simulator may file the findings
  elsewhere); the status and the queue are determined.
"""

from __future__ import annotations

from typing import Any

from occubench.twins._twin import Answer, Twin, pointer_token, tool

_NOT_FOUND = "Application ID not found"
_GAS_UNIT = "cu_ft"
_FINDINGS = ("violations", "case_notes")
"""The keys a closed review adds to its record (the config's records have none)."""


class PermitProcessingTwin(Twin):
    """The permit application processing system (module doc)."""

    environment = "env_f0ad9bbe4f86"
    _closed: int

    def reset(self, state: dict[str, Any] | None = None) -> None:
        """Start again with no review closed."""
        super().reset(state)
        self._closed = 0

    # The config's errors.

    def error(self, message: str, code: str | None = None) -> Answer:
        """``{"error": message}`` with the wording free."""
        return Answer(observation={"error": message}, free=["/error"])

    def _not_found(self) -> Answer:
        return Answer(observation={"error": _NOT_FOUND})

    def _final_statuses(self) -> list[str]:
        spec = self.specs["finalize_application_review"].parameters or {}
        status = spec.get("properties", {}).get("status", {})
        return list(status.get("enum", []))

    # Reading the system.

    @tool
    def get_system_context(self, arguments: dict[str, Any]) -> Answer:
        """The clock and the officer logged in."""
        return Answer(
            observation={
                "system_clock": self.state["system_clock"],
                "officer_id": self.state["officer_metadata"]["officer_id"],
                "permissions": ["read", "write"],
            },
            free=["/permissions"],
        )

    @tool
    def get_application_queue(self, arguments: dict[str, Any]) -> Answer:
        """The ids awaiting review, by priority."""
        return Answer(observation={"queue": list(self.state["processing_queue"])})

    @tool
    def get_application_details(self, arguments: dict[str, Any]) -> Answer:
        """The record in the example's fields."""
        record = self.state["applications"].get(arguments["application_id"])
        if record is None:
            return self._not_found()
        observation: dict[str, Any] = {
            "applicant": record["applicant"],
            "type": record["type"],
            "submission_date": record["submission_date"],
        }
        details = record.get("details", {})
        inventory = details.get("inventory")
        if not isinstance(inventory, list):
            observation |= {
                "materials_inventory": [],
                "solvent_storage": {"volume": 0, "containment_capacity": 0},
                "gas_cabinets": [],
            }
            free = ["/materials_inventory", "/solvent_storage", "/gas_cabinets"]
            return Answer(observation=observation, free=free)
        observation["materials_inventory"] = [
            {key: item[key] for key in ("chemical", "quantity", "unit", "hazard") if key in item}
            for item in inventory
        ]
        vessels = [item["largest_vessel"] for item in inventory if "largest_vessel" in item]
        sump = details.get("engineering", {}).get("containment_sump_capacity")
        observation["solvent_storage"] = {
            "volume": max(vessels) if vessels else 0,
            "containment_capacity": sump if sump is not None else 0,
        }
        free = [] if vessels and sump is not None else ["/solvent_storage"]
        gases = [item for item in inventory if item.get("unit") == _GAS_UNIT]
        observation["gas_cabinets"] = [
            {"id": f"GC-{n}", "gas": item["chemical"], "placement": item.get("location", "")}
            for n, item in enumerate(gases, start=1)
        ]
        free += [f"/gas_cabinets/{n}/id" for n in range(len(gases))]
        return Answer(observation=observation, free=free)

    @tool
    def get_regulatory_standards(self, arguments: dict[str, Any]) -> Answer:
        """The category's tables: the state holds none, so they are the twin's own."""
        category = arguments["standard_category"]
        return Answer(
            observation={"standard_name": category, "data": _STANDARDS.get(category, {})},
            free=["/data"],
        )

    # The one write.

    @tool
    def finalize_application_review(self, arguments: dict[str, Any]) -> Answer:
        """Set the final status, record the violations and notes, close the review."""
        application_id = arguments["application_id"]
        record = self.state["applications"].get(application_id)
        if record is None:
            return self._not_found()
        if record.get("status") in self._final_statuses():
            return self.error(
                f"Application {application_id} is already finalized as {record['status']}"
            )
        record["status"] = arguments["status"]
        record["violations"] = list(arguments["violations"])
        record["case_notes"] = arguments["case_notes"]
        queue: list[str] = self.state["processing_queue"]
        self.state["processing_queue"] = [i for i in queue if i != application_id]
        self._closed += 1
        return Answer(
            observation={
                "transaction_id": f"TXN_{self._closed:05d}",
                "timestamp": self.state["system_clock"],
            },
            free=["/transaction_id", "/timestamp"],
            free_state=[
                "/system_clock",
                *(f"/applications/{pointer_token(application_id)}/{key}" for key in _FINDINGS),
            ],
        )


_STANDARDS: dict[str, dict[str, Any]] = {
    "MAQ_TABLES": {
        "Pyrophoric_Gas": {"max_qty": 10, "unit": "cu_ft"},
        "Class_IIIB_Combustible_Liquid": {"max_qty": 13200, "unit": "gallons"},
        "Over_MAQ": "reclassify the control area as a High-Hazard (Group H) occupancy",
    },
    "NFPA_55_GAS": {
        "Pyrophoric_Gas_Cabinet": {"max_distance_to_exterior_wall_ft": 5},
    },
    "CONTAINMENT_RATIOS": {
        "Secondary_Containment": {"min_ratio_of_largest_vessel": 1.1},
    },
}
"""The twin's own tables for each category (free: the config holds no statute)."""
