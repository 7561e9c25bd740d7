"""Twin of ``ref_laboratory_instrument_calibration``: the reference suite's calibration lab.

How it reads its config:
- The state holds one instrument's status and calibration points (``INS-5802``) and one
  set of acceptance criteria (``AC-RT``). Any other instrument or class is NOT_FOUND in
  the suite's error shape ``{"error": {"code": "NOT_FOUND", ...}}``: the prompt says
  never to invent records.
- The state names no instrument class anywhere. The criteria are read as those of the
  class ``reference-thermometer`` (``INSTRUMENT_CLASS``): the tool's parameter gives it
  as its example, the config's canned call asks for it and gets these criteria, and
  ``AC-RT`` abbreviates it. The instrument's own class is not stated, so
  ``get_instrument_status`` does not report one.
- ``list_calibration_points`` keeps the state's order, which the tool's description
  states (ascending); nothing is free, and no pass/fail verdict is computed.
- Ids match exactly (case and spacing count). The tools only read (nothing is
  calibrated): no call changes the state.
"""

from __future__ import annotations

from typing import Any

from occubench.twins._twin import Answer, tool
from occubench.twins.envs._suite import SuiteTwin

INSTRUMENT_CLASS = "reference-thermometer"
"""The class the state's acceptance criteria belong to (module doc)."""


class CalibrationTwin(SuiteTwin):
    """The reference suite's instrument calibration system (module doc)."""

    environment = "ref_laboratory_instrument_calibration"

    def _instrument(self, arguments: dict[str, Any]) -> tuple[bool, str]:
        instrument: str = arguments["instrument_id"]
        held = self.state["instrument_status"]["instrument_id"]
        return instrument == held, f"no instrument {instrument}"

    @tool
    def get_instrument_status(self, arguments: dict[str, Any]) -> Answer:
        """The instrument's latest measured error and uncertainty."""
        return self.record("instrument_status", *self._instrument(arguments))

    @tool
    def list_calibration_points(self, arguments: dict[str, Any]) -> Answer:
        """The instrument's calibration points, ascending."""
        return self.record("calibration_points", *self._instrument(arguments))

    @tool
    def get_acceptance_criteria(self, arguments: dict[str, Any]) -> Answer:
        """The criteria of the one class the config names."""
        wanted = arguments["instrument_class"]
        named = wanted == INSTRUMENT_CLASS
        return self.record("acceptance_criteria", named, f"no acceptance criteria for {wanted}")
