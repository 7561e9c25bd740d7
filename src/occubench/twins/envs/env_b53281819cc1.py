"""Twin of ``env_b53281819cc1``: searching a grid of an excavation site for a recorder unit.

How it reads its config:
- Errors are ``{"error": "<description>"}`` (the prompt's shape) and leave the state as it
  was: a cell not in ``grid_map`` (undefined grid ids), a coordinate not of the form
  ``N<number>/E<number>``, a signature no logged artifact has, recovering a signature from
  a cell it is not in or twice, a worn-out Total Station or no charge left to draw.
- Cell ids are the ``grid_map`` keys (the tools take ``cell_id`` back; the example's
  ``G-...`` ids are illustrative); a sector holds the mapped cells whose northing and
  easting both lie between the two coordinates' (inclusive), in the state's order.
- The prompt forbids inventing site features: a scan finds one signature per logged
  artifact in the cell and nothing else (their number is determined); the signature's id
  (``SIG-`` and the artifact's number) and description are free. Verifying one answers the
  artifact's label as serial (free), ``is_intact`` true only for an artifact of type
  ``recorder`` (debris and components are fragments: determined), a free classification.
  A signature names its artifact whether or not a scan found it.
- Site dynamics are the twin's own (free): a survey wears the Total Station by 1 point and
  draws 1 point of charge, a scan 1, a recovery 3; each draw takes one point at a time
  from the station with the most charge (the first in the state on a tie); a survey or a
  scan lowers ``stability_index`` by 0.01, a recovery by 0.03. Telemetry's stations are
  the ``Power_Station_<name>_Charge`` fields, id ``Power_Station_<name>``, redundancy
  ratio the charge over a 10-point reserve (free); its stability index is determined
  until a write moved it. Verifying and reading consume nothing.
- A survey marks an unexplored cell ``surveyed`` (an excavated one stays so) with mapping
  accuracy 0.02 m plus 0.0005 m per point of Total Station wear (free); provenience is
  recorded. A recovery marks the cell ``excavated`` and the artifact ``recovered: true``
  (a key the state did not list); the item recovered is its label (free).
- Free state: the stability index and each station charge drawn from, the Total Station's
  wear after a survey, a recovered artifact's ``recovered`` key (the cell statuses are not).
- ``log_mission_abort`` declares no return fields (``example_output`` null): the
  observation is ``{}`` and the state does not change.
"""

from __future__ import annotations

import re
from typing import Any

from occubench.twins._twin import Answer, Twin, tool

TOTAL_STATION = "Optical_Total_Station"
CHARGE_RESERVE = 10.0
SURVEY_WEAR = 1
SURVEY_DRAW, SCAN_DRAW, RECOVERY_DRAW = 1, 1, 3
SURVEY_SHAKE, SCAN_SHAKE, RECOVERY_SHAKE = 0.01, 0.01, 0.03
_STABILITY = "/site_conditions/stability_index"
_EQUIPMENT = "/resource_pool/equipment_integrity"
_STATION = re.compile(r"^(Power_Station_\w+?)_Charge$")
_COORD = re.compile(r"^N(\d+(?:\.\d+)?)/E(\d+(?:\.\d+)?)$")


def coordinate(text: str) -> tuple[float, float] | None:
    """The (northing, easting) of a ``N<number>/E<number>`` coordinate."""
    match = _COORD.match(text.strip())
    return (float(match[1]), float(match[2])) if match else None


def signature_of(artifact_id: str) -> str:
    """The twin's signature id of a logged artifact."""
    return f"SIG-{artifact_id.rsplit('-', 1)[-1]}"


class ExcavationSearchTwin(Twin):
    """The excavation site grid environment (module doc)."""

    environment = "env_b53281819cc1"

    def error(self, message: str, code: str | None = None) -> Answer:
        """The config's error shape: ``{"error": "<description>"}``."""
        return Answer(observation={"error": message})

    def _cell(self, cell_id: str) -> dict[str, Any] | None:
        cell: dict[str, Any] | None = self.state["grid_map"].get(cell_id)
        return cell

    def _artifact(self, sig_id: str) -> dict[str, Any] | None:
        return next(
            (a for a in self.state["discovered_artifacts"] if signature_of(a["id"]) == sig_id),
            None,
        )

    def _stations(self) -> list[tuple[str, str]]:
        """(state key, station id) of each power station."""
        keys = self.state["resource_pool"]["equipment_integrity"]
        return [(key, match[1]) for key in keys if (match := _STATION.match(key))]

    def _operate(self, draw: int, shake: float) -> list[str] | str:
        """Draw charge and shake the site: the state pointers it moved (free), or why not."""
        equipment = self.state["resource_pool"]["equipment_integrity"]
        keys = [key for key, _ in self._stations()]
        if sum(equipment[k] for k in keys) < draw:
            return "Insufficient power station charge"
        drawn: list[str] = []
        for _ in range(draw):
            fullest = max(keys, key=lambda k: (equipment[k], -keys.index(k)))
            equipment[fullest] -= 1
            drawn += [fullest] if fullest not in drawn else []
        conditions = self.state["site_conditions"]
        conditions["stability_index"] = round(conditions["stability_index"] - shake, 2)
        return [_STABILITY, *(f"{_EQUIPMENT}/{key}" for key in drawn)]

    @tool
    def get_site_telemetry(self, arguments: dict[str, Any]) -> Answer:
        """The site's stability index and each station's redundancy ratio."""
        equipment = self.state["resource_pool"]["equipment_integrity"]
        stations = [
            {"station_id": station, "redundancy_ratio": round(equipment[key] / CHARGE_RESERVE, 2)}
            for key, station in self._stations()
        ]
        free = [f"/power_stations/{i}/{k}" for i in range(len(stations)) for k in stations[i]]
        free += ["/stability_index"] if _STABILITY in self.free_state else []
        return Answer(
            observation={
                "stability_index": self.state["site_conditions"]["stability_index"],
                "power_stations": stations,
            },
            free=free,
        )

    @tool
    def identify_sector_cells(self, arguments: dict[str, Any]) -> Answer:
        """The mapped cells between two coordinates."""
        start, end = (coordinate(arguments[k]) for k in ("start_coord", "end_coord"))
        if start is None or end is None:
            bad = arguments["start_coord"] if start is None else arguments["end_coord"]
            return self.error(f"Invalid grid coordinate: {bad}")
        (n1, e1), (n2, e2) = start, end
        cells = [
            cell_id
            for cell_id in self.state["grid_map"]
            if (at := coordinate(cell_id)) is not None
            and min(n1, n2) <= at[0] <= max(n1, n2)
            and min(e1, e2) <= at[1] <= max(e1, e2)
        ]
        return Answer(observation={"cell_ids": cells})

    @tool
    def apply_total_station_survey(self, arguments: dict[str, Any]) -> Answer:
        """Map a cell with the optical Total Station."""
        cell = self._cell(arguments["cell_id"])
        if cell is None:
            return self.error(f"Undefined grid cell: {arguments['cell_id']}")
        equipment = self.state["resource_pool"]["equipment_integrity"]
        if equipment[TOTAL_STATION] < SURVEY_WEAR:
            return self.error("Optical Total Station out of service")
        moved = self._operate(SURVEY_DRAW, SURVEY_SHAKE)
        if isinstance(moved, str):
            return self.error(moved)
        equipment[TOTAL_STATION] -= SURVEY_WEAR
        if cell["status"] == "unexplored":
            cell["status"] = "surveyed"
        accuracy = round(0.02 + (100 - equipment[TOTAL_STATION]) * 0.0005, 4)
        return Answer(
            observation={"mapping_accuracy_m": accuracy, "provenience_recorded": True},
            free=["/mapping_accuracy_m"],
            free_state=[*moved, f"{_EQUIPMENT}/{TOTAL_STATION}"],
        )

    @tool
    def scan_electronic_signatures(self, arguments: dict[str, Any]) -> Answer:
        """The signatures of the artifacts logged in a cell."""
        cell_id = arguments["cell_id"]
        if self._cell(cell_id) is None:
            return self.error(f"Undefined grid cell: {cell_id}")
        moved = self._operate(SCAN_DRAW, SCAN_SHAKE)
        if isinstance(moved, str):
            return self.error(moved)
        found = [
            {"sig_id": signature_of(a["id"]), "description": f"Electronic Signal - {a['type']}"}
            for a in self.state["discovered_artifacts"]
            if a["grid"] == cell_id
        ]
        free = [f"/found_signatures/{i}/{k}" for i in range(len(found)) for k in found[i]]
        return Answer(observation={"found_signatures": found}, free=free, free_state=moved)

    @tool
    def verify_artifact_identity(self, arguments: dict[str, Any]) -> Answer:
        """What a signature's artifact is, and whether it is an intact unit."""
        artifact = self._artifact(arguments["sig_id"])
        if artifact is None:
            return self.error(f"Unknown signature: {arguments['sig_id']}")
        intact = artifact["type"] == "recorder"
        return Answer(
            observation={
                "serial_number": artifact["label"],
                "is_intact": intact,
                "classification": "Intact recorder unit"
                if intact
                else f"Fragment ({artifact['type']})",
            },
            free=["/serial_number", "/classification"],
        )

    @tool
    def execute_precision_recovery(self, arguments: dict[str, Any]) -> Answer:
        """Extract a signature's artifact from its cell."""
        cell = self._cell(arguments["cell_id"])
        if cell is None:
            return self.error(f"Undefined grid cell: {arguments['cell_id']}")
        artifact = self._artifact(arguments["sig_id"])
        if artifact is None or artifact["grid"] != arguments["cell_id"]:
            return self.error(
                f"Signature {arguments['sig_id']} not found in {arguments['cell_id']}"
            )
        if artifact.get("recovered"):
            return self.error(f"Signature {arguments['sig_id']} already recovered")
        moved = self._operate(RECOVERY_DRAW, RECOVERY_SHAKE)
        if isinstance(moved, str):
            return self.error(moved)
        cell["status"] = "excavated"
        artifact["recovered"] = True
        index = self.state["discovered_artifacts"].index(artifact)
        return Answer(
            observation={"status": "Success", "item_recovered": artifact["label"]},
            free=["/item_recovered"],
            free_state=[*moved, f"/discovered_artifacts/{index}/recovered"],
        )

    @tool
    def log_mission_abort(self, arguments: dict[str, Any]) -> Answer:
        """End the mission with a reason (no return fields, no state change)."""
        return Answer(observation={})
