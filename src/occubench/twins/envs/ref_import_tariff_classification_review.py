"""Twin of ``ref_import_tariff_classification_review``: the reference suite's entry system.

How it reads its config:
- The state holds one import entry (``E-77120``), its candidate headings and the duty
  rates of one heading (``8471.50``). Any other entry is NOT_FOUND in the suite's error
  shape ``{"error": {"code": "NOT_FOUND", ...}}``: the prompt says never to invent
  records.
- Headings ``8471.30`` and ``8471.41`` are candidates, but the state holds no rates for
  them; ``get_duty_rate`` answers NOT_FOUND for them as for any heading it does not
  hold: rates for them would be invented tariff data, not free fields.
- Heading codes match exactly: ``8471.5`` or ``8471.50.00`` are other headings (no
  tariff hierarchy is implied).
- ``list_candidate_headings`` keeps the state's order, which the tool's description
  states (broadest first); nothing is free. The tools only read (nothing is classified):
  no call changes the state.
"""

from __future__ import annotations

from typing import Any

from occubench.twins._twin import Answer, tool
from occubench.twins.envs._suite import SuiteTwin


class TariffReviewTwin(SuiteTwin):
    """The reference suite's tariff classification review system (module doc)."""

    environment = "ref_import_tariff_classification_review"

    def _entry(self, arguments: dict[str, Any]) -> tuple[bool, str]:
        entry: str = arguments["entry_id"]
        return entry == self.state["entry"]["entry_id"], f"no entry {entry}"

    @tool
    def get_entry(self, arguments: dict[str, Any]) -> Answer:
        """The entry's header data."""
        return self.record("entry", *self._entry(arguments))

    @tool
    def list_candidate_headings(self, arguments: dict[str, Any]) -> Answer:
        """The entry's candidate headings, broadest first."""
        return self.record("candidate_headings", *self._entry(arguments))

    @tool
    def get_duty_rate(self, arguments: dict[str, Any]) -> Answer:
        """The rates of the one heading the state holds rates for."""
        heading = arguments["heading_code"]
        named = heading == self.state["duty_rate"]["heading_code"]
        return self.record("duty_rate", named, f"no duty rate for heading {heading}")
