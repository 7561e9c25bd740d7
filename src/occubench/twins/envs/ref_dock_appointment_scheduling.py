"""Twin of ``ref_dock_appointment_scheduling``: the reference suite's dock scheduling system.

How it reads its config:
- The state holds one inbound load (``L-6620``), the free slots of one date
  (``2025-06-17``) and the rules of one site (rule set ``DC-1``). Any other load, date
  or site is NOT_FOUND in the suite's error shape ``{"error": {"code": "NOT_FOUND",
  ...}}``: the prompt says never to invent records.
- Another date is NOT_FOUND rather than an empty list of slots: the config says nothing
  of other dates, and "no free slot" would be a claim about them. A date written another
  way (``17/06/2025``) is another, unknown date: no format is converted.
- ``get_dock_rules`` is asked by site; the rule set's id is read as the site's code (the
  tool's parameter example and the canned call both use ``DC-1``).
- ``list_free_slots`` keeps the state's order, which the tool's description states (time
  order); nothing is free. The tools only read (nothing is booked): no call changes the
  state.
"""

from __future__ import annotations

from typing import Any

from occubench.twins._twin import Answer, tool
from occubench.twins.envs._suite import SuiteTwin


class DockSchedulingTwin(SuiteTwin):
    """The reference suite's dock appointment scheduling system (module doc)."""

    environment = "ref_dock_appointment_scheduling"

    @tool
    def get_load(self, arguments: dict[str, Any]) -> Answer:
        """The inbound load, when the state holds it."""
        load = arguments["load_id"]
        return self.record("load", load == self.state["load"]["load_id"], f"no load {load}")

    @tool
    def list_free_slots(self, arguments: dict[str, Any]) -> Answer:
        """The date's free slots in time order."""
        date = arguments["date"]
        named = date == self.state["free_slots"]["date"]
        return self.record("free_slots", named, f"no slot schedule for {date}")

    @tool
    def get_dock_rules(self, arguments: dict[str, Any]) -> Answer:
        """The rules of the site the state holds."""
        site = arguments["site"]
        named = site == self.state["dock_rules"]["rule_set"]
        return self.record("dock_rules", named, f"no dock rules for site {site}")
