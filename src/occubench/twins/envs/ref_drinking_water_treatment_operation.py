"""Twin of ``ref_drinking_water_treatment_operation``: the reference suite's SCADA historian.

How it reads its config:
- The state holds one plant's water quality and filters (``WTP-2``) and one permit
  (``PWS-2``). Any other plant is NOT_FOUND in the suite's error shape
  ``{"error": {"code": "NOT_FOUND", ...}}``: the prompt says never to invent records.
- The permit names no plant; it is read as the permit of the one plant the state holds
  (the canned call asks for it by ``WTP-2``), so ``get_permit_limits`` answers it for
  that plant only. Asking by the permit's own id (``PWS-2``) is NOT_FOUND: the tool
  takes a plant id.
- ``list_filters`` keeps the state's order, which the tool's description states (by
  filter number; ``F3`` is not in service, so it is not listed); nothing is free.
- Ids match exactly (case and spacing count). The tools only read: no call changes the
  state.
"""

from __future__ import annotations

from typing import Any

from occubench.twins._twin import Answer, tool
from occubench.twins.envs._suite import SuiteTwin


class WaterTreatmentTwin(SuiteTwin):
    """The reference suite's water treatment historian (module doc)."""

    environment = "ref_drinking_water_treatment_operation"

    def _plant(self, arguments: dict[str, Any]) -> tuple[bool, str]:
        plant: str = arguments["plant_id"]
        return plant == self.state["water_quality"]["plant_id"], f"no plant {plant}"

    @tool
    def get_water_quality(self, arguments: dict[str, Any]) -> Answer:
        """The plant's latest finished-water readings."""
        return self.record("water_quality", *self._plant(arguments))

    @tool
    def list_filters(self, arguments: dict[str, Any]) -> Answer:
        """The plant's filters in service, by filter number."""
        return self.record("filters", *self._plant(arguments))

    @tool
    def get_permit_limits(self, arguments: dict[str, Any]) -> Answer:
        """The permit of the one plant the state holds."""
        return self.record("permit_limits", *self._plant(arguments))
