"""Twin of ``env_153c260a856a``: a rent-roll database for a property valuation assessment.

How it reads its config (one ambiguity a line):
- Errors: ``{"error": "<message>"}``, the prompt's example shape (no code), for every case.
- A property id other than the state's ``property_id``: "Property record not found".
- The state lists unit groups; "unit-by-unit" records: one per unit, group by group, in order.
- A unit's ``unit_id`` is free (the state names groups only): the twin answers ``<group>-<n>``.
- The state holds no date: ``get_current_date`` is free (one fixed date, ``TODAY``).
- An MCI expiry is that date plus the group's months to expiry: free; null without surcharge.
- ``total_units`` is the sum of the groups' unit counts (determined).
- The state holds no property name or status: both free (the property id, "Active").
- No tool writes: no call changes the state, so no state is ever free.
"""

from __future__ import annotations

import calendar
import datetime as dt
from typing import Any

from occubench.twins._twin import Answer, Twin, tool

TODAY = dt.date(2024, 1, 15)
"""The date the twin answers (the config holds none; free)."""


def _months_after(day: dt.date, months: int) -> dt.date:
    """The same day of the month ``months`` later (clamped to the month's last day)."""
    index = day.month - 1 + months
    year, month = day.year + index // 12, index % 12 + 1
    return dt.date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


class PropertyValuationTwin(Twin):
    """The property valuation rent roll (module doc)."""

    environment = "env_153c260a856a"

    def error(self, message: str, code: str | None = None) -> Answer:
        """The config's error shape: ``{"error": "<message>"}``."""
        return Answer(observation={"error": message})

    def _property(self, arguments: dict[str, Any]) -> bool:
        return bool(arguments["property_id"] == self.state["property_id"])

    @tool
    def get_current_date(self, arguments: dict[str, Any]) -> Answer:
        """The system date (free: the config holds none)."""
        return Answer(observation={"current_date": TODAY.isoformat()}, free=["/current_date"])

    @tool
    def fetch_unit_level_records(self, arguments: dict[str, Any]) -> Answer:
        """One record per unit of every group of the property."""
        if not self._property(arguments):
            return self.error("Property record not found")
        units: list[dict[str, Any]] = []
        free: list[str] = []
        for group in self.state["comparable_database"]:
            surcharge = group.get("surcharge_per_unit") or 0
            months = group.get("surcharge_expiry_months")
            expires = (
                _months_after(TODAY, int(months)).isoformat()
                if surcharge and months is not None
                else None
            )
            for number in range(1, int(group["unit_count"]) + 1):
                free.append(f"/units/{len(units)}/unit_id")
                if expires is not None:
                    free.append(f"/units/{len(units)}/mci_expiration_date")
                units.append(
                    {
                        "unit_id": f"{group['unit_id']}-{number}",
                        "monthly_base_rent": group["base_rent_per_unit"],
                        "mci_surcharge": surcharge,
                        "mci_expiration_date": expires,
                    }
                )
        return Answer(observation={"units": units}, free=free)

    @tool
    def get_property_metadata(self, arguments: dict[str, Any]) -> Answer:
        """The property's name, unit count and status."""
        if not self._property(arguments):
            return self.error("Property record not found")
        total = sum(int(group["unit_count"]) for group in self.state["comparable_database"])
        return Answer(
            observation={
                "property_name": self.state["property_id"],
                "total_units": total,
                "status": "Active",
            },
            free=["/property_name", "/status"],
        )
