"""Twin of ``env_cea19ff7b676``: an audio mixing session (tracks, buses, the Master Bus).

How it reads its config:
- Entities are the state's ``tracks`` (by ``track_id``) and the Master Bus, whose id is
  ``master_bus`` (the name the tracks' ``routing`` uses for it).
- Errors take the prompt's shape ``{"status": "error", "message": ...}``; an unknown id
  gets the prompt's wording ``Track ID '<id>' not found`` (determined), every other error
  (unknown tool, bad arguments, wrong kind of entity) has free wording.
- A fader at -96.0 dB (the DAW floor) is silent: that entity is inactive and adds
  nothing to what it is routed into. ``is_active`` is otherwise true, but free for an
  entity whose signal never reaches the Master Bus (e.g. routed to ``none``): whether an
  unrouted bus counts as active is open.
- The inventory lists the tracks in the state's order, then the Master Bus (its name and
  ``type`` free; ``fader_db`` its ``volume_db``). ``type`` is free for every item: the
  state says ``audio``/``bus`` where the example says ``track``/``bus``.
- ``get_signal_routing``: ``destination_id`` is the state's ``routing`` (the Master Bus's
  destination is free); ``source_ids`` every entity routed into it, state order, silent
  ones included (they are still routed).
- ``get_plugin_architecture`` takes a bus or the Master Bus (a source track is an error):
  ``analog-modeled`` when any plugin of the chain is, ``linear digital`` otherwise;
  an empty chain is free (nothing to categorise), chosen ``linear digital``.
- ``get_metering_data`` reports the state's ``rms_dbfs``/``peak_dbfs``; the state holds no
  true peak, so ``true_peak`` is free (chosen equal to the sample peak, its lower bound).
- ``adjust_track_gain`` takes source (``audio``) tracks only; the example output is null,
  so its whole observation is free. Pre-fader gain shifts the track's ``peak_dbfs`` and
  ``rms_dbfs`` by the change (dB add) and leaves ``fader_db`` alone. What it is routed
  into (and on to the Master Bus) moves by the change of the summed post-fader signal:
  powers for RMS, amplitudes for peak; the Master Bus's ``is_clipped`` is its peak above
  0 dBFS. When every active source of a bus has moved by the same amount the bus moves by
  exactly that (the config's dB arithmetic); otherwise the summing model is the twin's
  choice, so those meters read free.
- The config gives no range for ``gain_change_db``: any number is accepted. Levels are kept
  to 2 decimals. Nothing touches ``transport`` or ``solo_bus``.
- Free state: a bus's ``rms_dbfs``/``peak_dbfs`` (and the Master Bus's ``is_clipped``)
  while its sources moved unevenly; even moves fix them again.
"""

from __future__ import annotations

import copy
import math
from typing import Any

from occubench.twins._twin import Answer, Twin, tool

_MASTER = "master_bus"
_SILENT_DB = -96.0
_PLACES = 2
_METERS = {False: ("rms_dbfs", "peak_dbfs"), True: ("rms_dbfs", "peak_dbfs", "is_clipped")}
"""The meters a gain change moves on a bus, and on the Master Bus."""


def _sum_db(levels: list[float], power: bool) -> float | None:
    """The level of signals summed (dB): powers for RMS, amplitudes for peak."""
    scale = 10.0 if power else 20.0
    total = sum(10 ** (level / scale) for level in levels)
    return scale * math.log10(total) if total > 0 else None


class AudioMixingTwin(Twin):
    """The audio mixing session (module doc)."""

    environment = "env_cea19ff7b676"
    _origin: dict[str, dict[str, Any]]

    def reset(self, state: dict[str, Any] | None = None) -> None:
        """Start again; the meters moved since are measured from this state."""
        super().reset(state)
        self._origin = {e["track_id"]: copy.deepcopy(e) for e in self.state["tracks"]}
        self._origin[_MASTER] = copy.deepcopy(self.state["master_bus"])

    # The config's errors.

    def error(self, message: str, code: str | None = None) -> Answer:
        """The prompt's error shape, wording free."""
        return Answer(observation={"status": "error", "message": message}, free=["/message"])

    def _not_found(self, entity_id: str) -> Answer:
        return Answer(
            observation={"status": "error", "message": f"Track ID '{entity_id}' not found"}
        )

    # Reading the session.

    def _track(self, entity_id: str) -> dict[str, Any] | None:
        return next((t for t in self.state["tracks"] if t["track_id"] == entity_id), None)

    def _sources(self, entity_id: str) -> list[dict[str, Any]]:
        return [t for t in self.state["tracks"] if t["routing"] == entity_id]

    def _reaches_master(self, entity_id: str) -> bool:
        seen: set[str] = set()
        while entity_id != _MASTER:
            track = self._track(entity_id)
            if track is None or entity_id in seen:
                return False
            seen.add(entity_id)
            entity_id = track["routing"]
        return True

    def _shift(self, entity_id: str) -> float | None:
        """How far the entity's meters moved in a way the config fixes (None: they did not)."""
        track = self._track(entity_id)
        if track is not None and track["type"] != "bus":
            start = float(self._origin.get(entity_id, track)["rms_dbfs"])
            return round(float(track["rms_dbfs"]) - start, _PLACES)
        shifts = {
            self._shift(s["track_id"])
            for s in self._sources(entity_id)
            if s["fader_db"] > _SILENT_DB
        }
        return shifts.pop() if len(shifts) == 1 else 0.0 if not shifts else None

    @tool
    def get_session_inventory(self, arguments: dict[str, Any]) -> Answer:
        """Every track and bus, then the Master Bus."""
        items: list[dict[str, Any]] = []
        free: list[str] = []
        for index, track in enumerate(self.state["tracks"]):
            items.append(
                {
                    "id": track["track_id"],
                    "name": track["name"],
                    "type": track["type"],
                    "is_active": track["fader_db"] > _SILENT_DB,
                    "fader_db": track["fader_db"],
                }
            )
            free.append(f"/items/{index}/type")
            if track["fader_db"] > _SILENT_DB and not self._reaches_master(track["track_id"]):
                free.append(f"/items/{index}/is_active")
        master = self.state["master_bus"]
        index = len(items)
        items.append(
            {
                "id": _MASTER,
                "name": "Master Bus",
                "type": "master",
                "is_active": True,
                "fader_db": master["volume_db"],
            }
        )
        free += [f"/items/{index}/name", f"/items/{index}/type"]
        return Answer(observation={"items": items}, free=free)

    @tool
    def get_signal_routing(self, arguments: dict[str, Any]) -> Answer:
        """Where the entity goes and what is routed into it."""
        entity_id = arguments["entity_id"]
        sources = [s["track_id"] for s in self._sources(entity_id)]
        if entity_id == _MASTER:
            return Answer(
                observation={"destination_id": "none", "source_ids": sources},
                free=["/destination_id"],
            )
        track = self._track(entity_id)
        if track is None:
            return self._not_found(entity_id)
        return Answer(observation={"destination_id": track["routing"], "source_ids": sources})

    @tool
    def get_plugin_architecture(self, arguments: dict[str, Any]) -> Answer:
        """The bus's plugin chain and whether it is analog-modeled."""
        bus_id = arguments["bus_id"]
        plugins: list[dict[str, Any]] = []
        if bus_id != _MASTER:
            track = self._track(bus_id)
            if track is None:
                return self._not_found(bus_id)
            if track["type"] != "bus":
                return self.error(f"'{bus_id}' is a source track, not a bus")
            plugins = sorted(track.get("active_plugins", []), key=lambda p: p.get("slot", 0))
        analog = any(p.get("type") == "analog-modeled" for p in plugins)
        observation = {
            "architecture": "analog-modeled" if analog else "linear digital",
            "plugin_list": [p["name"] for p in plugins],
        }
        return Answer(observation=observation, free=[] if plugins else ["/architecture"])

    @tool
    def get_metering_data(self, arguments: dict[str, Any]) -> Answer:
        """RMS and peak from the state; true peak free."""
        entity_id = arguments["entity_id"]
        if entity_id == _MASTER:
            meters = self.state["master_bus"]
        else:
            found = self._track(entity_id)
            if found is None:
                return self._not_found(entity_id)
            meters = found
        free = ["/true_peak"]
        if self._shift(entity_id) is None:
            free = ["/rms", "/peak", "/true_peak"]
        observation = {
            "rms": meters["rms_dbfs"],
            "peak": meters["peak_dbfs"],
            "true_peak": meters["peak_dbfs"],
        }
        return Answer(observation=observation, free=free)

    @tool
    def adjust_track_gain(self, arguments: dict[str, Any]) -> Answer:
        """Shift a source track's input gain; what it feeds moves with it."""
        track_id = arguments["track_id"]
        change = float(arguments["gain_change_db"])
        track = self._track(track_id)
        if track is None:
            return self._not_found(track_id)
        if track["type"] == "bus":
            return self.error(f"'{track_id}' is a bus, not a source track")
        track["rms_dbfs"] = round(track["rms_dbfs"] + change, _PLACES)
        track["peak_dbfs"] = round(track["peak_dbfs"] + change, _PLACES)
        self._propagate(track)
        chosen = [
            f"{self._pointer(entity)}/{field}"
            for entity in self._fed_by(track_id)
            if self._shift(entity) is None
            for field in _METERS[entity == _MASTER]
        ]
        fixed = [
            f"{self._pointer(entity)}/{field}"
            for entity in self._fed_by(track_id)
            if self._shift(entity) is not None
            for field in _METERS[entity == _MASTER]
        ]
        observation = {
            "status": "success",
            "track_id": track_id,
            "gain_change_db": change,
            "fader_db": track["fader_db"],
        }
        return Answer(observation=observation, free=[""], free_state=chosen, fixed_state=fixed)

    def _fed_by(self, track_id: str) -> list[str]:
        """The buses (and the Master Bus) a track feeds, nearest first."""
        out: list[str] = []
        track = self._track(track_id)
        while track is not None and track["routing"] not in out:
            target = track["routing"]
            track = None if target == _MASTER else self._track(target)
            if target == _MASTER or track is not None:  # a routing to nothing feeds nothing
                out.append(target)
        return out

    def _pointer(self, entity_id: str) -> str:
        """The JSON Pointer of an entity's record in the state."""
        if entity_id == _MASTER:
            return "/master_bus"
        tracks: list[dict[str, Any]] = self.state["tracks"]
        index = next(i for i, t in enumerate(tracks) if t["track_id"] == entity_id)
        return f"/tracks/{index}"

    def _propagate(self, changed: dict[str, Any]) -> None:
        """Re-level what ``changed`` feeds, on to the Master Bus, from the session's start.

        Each target's meters are its starting meters moved by how far the summed
        post-fader signal of its live sources moved since the start (so rounding never
        piles up over calls).
        """
        seen: set[str] = set()
        while changed["fader_db"] > _SILENT_DB and changed["track_id"] not in seen:
            seen.add(changed["track_id"])
            target_id = changed["routing"]
            target = self.state["master_bus"] if target_id == _MASTER else self._track(target_id)
            if target is None:
                return
            live = [s for s in self._sources(target_id) if s["fader_db"] > _SILENT_DB]
            start = self._origin.get(target_id, target)
            for field, power in (("rms_dbfs", True), ("peak_dbfs", False)):
                now = _sum_db([s[field] + s["fader_db"] for s in live], power)
                was = _sum_db(
                    [self._origin.get(s["track_id"], s)[field] + s["fader_db"] for s in live], power
                )
                if now is not None and was is not None:
                    target[field] = round(start[field] + now - was, _PLACES)
            if target_id == _MASTER:
                target["is_clipped"] = target["peak_dbfs"] > 0.0
                return
            changed = target
