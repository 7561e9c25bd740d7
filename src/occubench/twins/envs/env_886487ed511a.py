"""Twin of ``env_886487ed511a``: a travel itinerary with a budget and a day's schedule.

How it reads its config (one ambiguity a line):
- Errors: ``{"error": "<Kind>: <message>"}``, kinds the prompt's four cases (and "Not Found").
- ``get_travel_status`` returns the example's fields only: preferences are not declared.
- An item the state lists without an id gets ``<TYP>-<yyyymmdd>-<hhmm>`` (free).
- An item's ``description`` is its name; ``start_time``/``end_time`` its ``time_slot``'s ends.
- The state holds no service catalogue: every search result is free (one offer per search).
- A service id encodes its kind, date and place, so a booking needs no hidden state.
- A date not in ``YYYY-MM-DD`` form or outside the travel dates: "Invalid Parameters".
- A place sharing no word (4+ letters) with a location of the initial or current state: invalid.
- ``book_service`` adds the cost the agent gives (the parameter is "the cost ... to be added").
- The scheduled time must be one of the offered times.
- A total above ``budget_limit`` (not equal) is "Insufficient Budget".
- A time overlapping an item of the same date is "Conflict"; durations are the catalogue's.
- A booking appends the state's item fields plus ``item_id`` ``ITIN-<n>`` (free).
- ``cancel_booking`` refunds the item's whole cost (the tool's "subtracts its cost").
- No tool moves the traveller: ``current_location`` never changes.
- Free state: a booked item's ``item_id``, ``name``, ``type``, ``time_slot``, ``location``.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from occubench.twins._twin import Answer, Twin, tool

BOOKED_FREE = ("item_id", "name", "type", "time_slot", "location")
"""The fields of a booked item the twin chose (its catalogue's and its own id)."""

_BOOKED = re.compile(r"ITIN-\d+")


@dataclass(frozen=True)
class _Offer:
    """One kind of service of the twin's catalogue (free data: the config holds none)."""

    prefix: str
    type: str
    name: str
    cost: float
    times: tuple[str, ...]
    minutes: int


CATALOGUE = {
    "transportation": _Offer(
        "DRV", "Transportation", "Private Driver", 260.0, ("14:45", "15:45", "16:15", "17:30"), 80
    ),
    "activity": _Offer("ACT", "Activity", "Guided Walk", 120.0, ("09:00", "10:00", "13:30"), 150),
}

_SERVICE = re.compile(r"^(?P<prefix>[A-Z]+)-(?P<date>\d{8})-(?P<place>[A-Z0-9-]+)$")
_CLOCK = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")


def _minutes(clock: str) -> int:
    hours, minutes = clock.split(":")
    return int(hours) * 60 + int(minutes)


def _clock(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _day(text: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(text) if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text) else None
    except ValueError:
        return None


def _words(place: str) -> set[str]:
    """The words of a place name that can name it (four letters or more, any case)."""
    return {word for word in re.findall(r"[a-z]+", place.lower()) if len(word) >= 4}


def _slug(place: str) -> str:
    return re.sub(r"[^A-Z0-9]+", "-", place.upper()).strip("-")


def _service(service_id: str) -> tuple[_Offer, dt.date, str] | None:
    """The offer, date and place a service id of the twin's catalogue encodes."""
    found = _SERVICE.match(service_id)
    if found is None:
        return None
    offer = next((o for o in CATALOGUE.values() if o.prefix == found["prefix"]), None)
    compact = found["date"]
    day = _day(f"{compact[:4]}-{compact[4:6]}-{compact[6:]}")
    if offer is None or day is None:
        return None
    return offer, day, found["place"].replace("-", " ").title()


class TravelItineraryTwin(Twin):
    """The travel itinerary (module doc)."""

    environment = "env_886487ed511a"

    def error(self, message: str, code: str | None = None) -> Answer:
        """The config's error shape: ``{"error": "<Kind>: <message>"}``."""
        return Answer(observation={"error": f"{code or 'Invalid Parameters'}: {message}"})

    def unknown_tool(self, tool_name: str) -> Answer:
        """An action outside the action set."""
        return self.error(f"no action {tool_name!r}", "Undefined Action")

    def invalid_arguments(self, tool_name: str, problem: str) -> Answer:
        """Arguments that break the tool's schema."""
        return self.error(f"{tool_name}: {problem}")

    # The itinerary, read from the state.

    def _items(self) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = self.state["current_itinerary"]
        return items

    def _settled(
        self, total: float, observation: dict[str, Any], free: Sequence[str] = ()
    ) -> Answer:
        """A booking change's answer, ``total`` made the new total spent.

        ``total`` is stated last in ``observation``. The itinerary's free state pointers
        move with its items (by position): those of the items the twin booked, after it.
        """
        self.state["total_spent"] = total
        before = sorted(p for p in self.free_state if p.startswith("/current_itinerary/"))
        after = [
            f"/current_itinerary/{index}/{key}"
            for index, item in enumerate(self._items())
            if _BOOKED.fullmatch(str(item.get("item_id", "")))
            for key in BOOKED_FREE
        ]
        return Answer(
            observation={**observation, "new_total_spent": total},
            free=list(free),
            free_state=after,
            fixed_state=before,
        )

    @staticmethod
    def _item_id(item: dict[str, Any]) -> tuple[str, bool]:
        """The item's id and whether the twin made it up (the state lists none)."""
        if item.get("item_id"):
            return str(item["item_id"]), False
        start = str(item.get("time_slot", "")).split("-")[0].replace(":", "")
        kind = str(item.get("type", "item"))[:3].upper()
        return f"{kind}-{str(item.get('date', '')).replace('-', '')}-{start}", True

    @staticmethod
    def _span(item: dict[str, Any]) -> tuple[int, int] | None:
        ends = str(item.get("time_slot", "")).split("-")
        if len(ends) != 2 or not all(_CLOCK.match(end) for end in ends):
            return None
        return _minutes(ends[0]), _minutes(ends[1])

    def _dates(self) -> tuple[str, str]:
        dates = self.state["travel_dates"]
        return str(dates.get("start_date")), str(dates.get("end_date"))

    def _reachable(self, location: str) -> bool:
        """Whether a place shares a word with the trip's places (module doc)."""
        places: list[Any] = []
        for state in (self.env.task_initial_state, self.state):
            places.append(state.get("current_location", ""))
            places += [item.get("location", "") for item in state.get("current_itinerary", [])]
        known = {word for place in places for word in _words(str(place))}
        return bool(_words(location) & known)

    @tool
    def get_travel_status(self, arguments: dict[str, Any]) -> Answer:
        """Budget, spending, the itinerary with ids, location and travel dates."""
        items: list[dict[str, Any]] = []
        free: list[str] = []
        for index, item in enumerate(self._items()):
            item_id, made_up = self._item_id(item)
            if made_up:
                free.append(f"/current_itinerary/{index}/item_id")
            start, _, end = str(item.get("time_slot", "")).partition("-")
            items.append(
                {
                    "item_id": item_id,
                    "type": item.get("type"),
                    "description": item.get("name"),
                    "start_time": start,
                    "end_time": end,
                    "cost": item.get("cost"),
                    "date": item.get("date"),
                }
            )
        start, end = self._dates()
        return Answer(
            observation={
                "budget_limit": self.state["budget_limit"],
                "total_spent": self.state["total_spent"],
                "current_itinerary": items,
                "current_location": self.state["current_location"],
                "travel_dates": {"start": start, "end": end},
            },
            free=free,
        )

    @tool
    def search_services(self, arguments: dict[str, Any]) -> Answer:
        """The twin's one offer for the category, place and date (free)."""
        day = _day(arguments["date"])
        if day is None:
            return self.error(f"date {arguments['date']!r} is not a YYYY-MM-DD date")
        first, last = self._dates()
        if not first <= day.isoformat() <= last:
            return self.error(f"{day} is outside the travel dates {first} to {last}")
        place = _slug(arguments["location"])
        if not self._reachable(arguments["location"]):
            return self.error(f"{arguments['location']!r} is not a place of this trip")
        offer = CATALOGUE[arguments["category"]]
        result = {
            "service_id": f"{offer.prefix}-{day:%Y%m%d}-{place}",
            "name": f"{offer.name} ({arguments['location'].strip()})",
            "cost": offer.cost,
            "pickup_windows": list(offer.times),
        }
        return Answer(observation={"results": [result]}, free=["/results"])

    @tool
    def book_service(self, arguments: dict[str, Any]) -> Answer:
        """Book an offered service at one of its times (module doc for each check)."""
        service = _service(arguments["service_id"])
        if service is None:
            return self.error(f"unknown service {arguments['service_id']!r}")
        offer, day, place = service
        time, cost = arguments["scheduled_time"], float(arguments["cost"])
        if time not in offer.times:
            return self.error(f"{time} is not an offered time of {arguments['service_id']}")
        if cost < 0:
            return self.error("cost must not be negative")
        total = round(float(self.state["total_spent"]) + cost, 2)
        if total > float(self.state["budget_limit"]):
            return self.error(
                f"total {total:.2f} would exceed the budget limit "
                f"{float(self.state['budget_limit']):.2f}",
                "Insufficient Budget",
            )
        start = _minutes(time)
        end = start + offer.minutes
        for item in self._items():
            span = self._span(item)
            if item.get("date") == day.isoformat() and span and start < span[1] and span[0] < end:
                return self.error(
                    f"{_clock(start)}-{_clock(end)} overlaps {item.get('name')} "
                    f"({item.get('time_slot')}) on {day}",
                    "Conflict",
                )
        numbers = [
            int(str(item["item_id"])[5:])
            for item in self._items()
            if _BOOKED.fullmatch(str(item.get("item_id", "")))
        ]
        item_id = f"ITIN-{max(numbers, default=0) + 1:03d}"
        self._items().append(
            {
                "item_id": item_id,
                "name": offer.name,
                "type": offer.type,
                "date": day.isoformat(),
                "time_slot": f"{_clock(start)}-{_clock(end)}",
                "location": place,
                "cost": cost,
            }
        )
        return self._settled(
            total, {"status": "confirmed", "itinerary_item_id": item_id}, ["/itinerary_item_id"]
        )

    @tool
    def cancel_booking(self, arguments: dict[str, Any]) -> Answer:
        """Remove an itinerary item and refund its cost."""
        items = self._items()
        index = next(
            (i for i, item in enumerate(items) if self._item_id(item)[0] == arguments["item_id"]),
            None,
        )
        if index is None:
            return self.error(f"no itinerary item {arguments['item_id']!r}", "Not Found")
        refund = float(items.pop(index).get("cost") or 0.0)
        total = round(float(self.state["total_spent"]) - refund, 2)
        return self._settled(total, {"status": "cancelled", "refunded_amount": refund})
