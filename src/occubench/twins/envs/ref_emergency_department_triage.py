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

from occubench.twins._twin import Answer, tool
from occubench.twins.envs._suite import SuiteTwin


class EmergencyTriageTwin(SuiteTwin):
    """The reference suite's ED triage board (module doc)."""

    environment = "ref_emergency_department_triage"

    @tool
    def get_patient_vitals(self, arguments: dict[str, Any]) -> Answer:
        """The patient's vitals, when the state holds that patient."""
        patient = arguments["patient_id"]
        named = patient == self.state["patient_vitals"]["patient_id"]
        return self.record("patient_vitals", named, f"no patient {patient}")

    @tool
    def list_open_beds(self, arguments: dict[str, Any]) -> Answer:
        """The unit's open beds, least recently cleaned first."""
        unit = arguments["unit"]
        return self.record("open_beds", unit == self.state["open_beds"]["unit"], f"no unit {unit}")

    @tool
    def get_triage_protocol(self, arguments: dict[str, Any]) -> Answer:
        """The protocol of the ESI level the state holds."""
        level = arguments["esi_level"]
        named = self.state["triage_protocol"]["protocol_id"] == f"ESI-{level}"
        return self.record("triage_protocol", named, f"no protocol for ESI level {level}")
