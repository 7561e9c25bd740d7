"""Twin of ``ref_emergency_department_triage``: the ED tracking board of the reference suite.

How it reads its config:
- The state holds one patient's vitals, one unit's open beds and one protocol; the
  config's prompt says unknown identifiers get ``{"error": {"code": "NOT_FOUND", ...}}``
  and records must never be invented, so any other patient, unit or ESI level is
  NOT_FOUND (the config determines nothing about them).
- ``list_open_beds`` returns the beds in the state's order, which the tool's description
  states (least to most recently cleaned); nothing is free.
- The tools only read: no call changes the state.
"""

from __future__ import annotations

from typing import Any

from occubench.twins._twin import Answer, Twin, tool


class EmergencyTriageTwin(Twin):
    """The reference suite's ED triage board (module doc)."""

    environment = "ref_emergency_department_triage"

    def error(self, message: str, code: str | None = None) -> Answer:
        """The config's error shape: ``{"error": {"code": ..., "message": ...}}``."""
        return Answer(observation={"error": {"code": code or "NOT_FOUND", "message": message}})

    @tool
    def get_patient_vitals(self, arguments: dict[str, Any]) -> Answer:
        """The patient's vitals, when the state holds that patient."""
        vitals = self.state["patient_vitals"]
        if arguments["patient_id"] != vitals["patient_id"]:
            return self.error(f"no patient {arguments['patient_id']}")
        return Answer(observation=dict(vitals))

    @tool
    def list_open_beds(self, arguments: dict[str, Any]) -> Answer:
        """The unit's open beds, least recently cleaned first."""
        beds = self.state["open_beds"]
        if arguments["unit"] != beds["unit"]:
            return self.error(f"no unit {arguments['unit']}")
        return Answer(observation={"unit": beds["unit"], "beds": list(beds["beds"])})

    @tool
    def get_triage_protocol(self, arguments: dict[str, Any]) -> Answer:
        """The protocol of the ESI level the state holds."""
        protocol = self.state["triage_protocol"]
        if protocol["protocol_id"] != f"ESI-{arguments['esi_level']}":
            return self.error(f"no protocol for ESI level {arguments['esi_level']}")
        return Answer(observation=dict(protocol))
