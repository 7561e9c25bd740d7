"""Twin of ``ref_underground_airflow_and_gas_management``: the suite's mine ventilation system.

How it reads its config:
- The state holds one sensor station's readings (``N4-S2``), the fans of one panel
  (``North-4``) and one set of re-entry limits (``RL-N4``). Any other station or panel
  is NOT_FOUND in the suite's error shape ``{"error": {"code": "NOT_FOUND", ...}}``:
  the prompt says never to invent records. ``N4-S1``, the parameter's example, is not in
  the state, so it is NOT_FOUND too (a gas reading is never made up).
- The re-entry limits name no panel; they are read as the limits of the one panel the
  state holds (their id ``RL-N4`` abbreviates it, and the canned call asks by
  ``North-4``). Panel names match exactly (``north-4``, ``N4`` are other names).
- ``list_fans`` keeps the state's order, which the tool's description states (duty
  order); nothing is free. The tools only read (no fan is started or stopped): no call
  changes the state.
"""

from __future__ import annotations

from typing import Any

from occubench.twins._twin import Answer, tool
from occubench.twins.envs._suite import SuiteTwin


class MineVentilationTwin(SuiteTwin):
    """The reference suite's mine ventilation monitoring system (module doc)."""

    environment = "ref_underground_airflow_and_gas_management"

    def _panel(self, arguments: dict[str, Any]) -> tuple[bool, str]:
        panel: str = arguments["panel"]
        return panel == self.state["fans"]["panel"], f"no panel {panel}"

    @tool
    def get_sensor_reading(self, arguments: dict[str, Any]) -> Answer:
        """The station's latest gas and airflow readings."""
        station = arguments["station_id"]
        named = station == self.state["sensor_reading"]["station_id"]
        return self.record("sensor_reading", named, f"no sensor station {station}")

    @tool
    def list_fans(self, arguments: dict[str, Any]) -> Answer:
        """The panel's fans in duty order."""
        return self.record("fans", *self._panel(arguments))

    @tool
    def get_reentry_limits(self, arguments: dict[str, Any]) -> Answer:
        """The re-entry limits of the one panel the state holds."""
        return self.record("reentry_limits", *self._panel(arguments))
