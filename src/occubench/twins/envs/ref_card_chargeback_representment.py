"""Twin of ``ref_card_chargeback_representment``: the reference suite's dispute console.

How it reads its config:
- The state holds one chargeback (``CB-3391``), the scan events of one order
  (``O-88410``) and one proof of delivery (``POD-88410``). Any other chargeback or order
  is NOT_FOUND in the suite's error shape ``{"error": {"code": "NOT_FOUND", ...}}``: the
  prompt says never to invent records.
- The proof of delivery names no order; it is read as the proof of the one order the
  state holds (its id carries that order's number, and the config's canned call asks for
  it by ``O-88410``), so ``get_delivery_confirmation`` answers it for that order only.
- The chargeback does not name its order either; nothing links them beyond the task, so
  the twin adds no link (the two lookups are independent).
- ``list_shipment_events`` keeps the state's order, which the tool's description states
  (oldest first) even though the scan hours are hours of different days; nothing is free.
- Ids match exactly (case and spacing count). The tools only read: no call changes the
  state.
"""

from __future__ import annotations

from typing import Any

from occubench.twins._twin import Answer, tool
from occubench.twins.envs._suite import SuiteTwin


class ChargebackTwin(SuiteTwin):
    """The reference suite's chargeback representment console (module doc)."""

    environment = "ref_card_chargeback_representment"

    def _order(self) -> str:
        order: str = self.state["shipment_events"]["order_id"]
        return order

    @tool
    def get_chargeback(self, arguments: dict[str, Any]) -> Answer:
        """The chargeback case, when the state holds it."""
        case = arguments["chargeback_id"]
        named = case == self.state["chargeback"]["chargeback_id"]
        return self.record("chargeback", named, f"no chargeback {case}")

    @tool
    def list_shipment_events(self, arguments: dict[str, Any]) -> Answer:
        """The order's carrier scans, oldest first."""
        order = arguments["order_id"]
        return self.record("shipment_events", order == self._order(), f"no order {order}")

    @tool
    def get_delivery_confirmation(self, arguments: dict[str, Any]) -> Answer:
        """The proof of delivery of the one order the state holds."""
        order = arguments["order_id"]
        named = order == self._order()
        return self.record("delivery_confirmation", named, f"no delivery confirmation for {order}")
