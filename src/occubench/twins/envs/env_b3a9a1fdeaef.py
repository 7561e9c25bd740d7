"""Twin of ``env_b3a9a1fdeaef``: a heavy-lift unit loaded onto a ship's hatch cover.

How it reads its config:
- Errors are ``{"error": "<message>"}`` (the prompt's example shape, its wording where it
  gives one: "Exceeds hold capacity limit") and leave the state as it was: unknown
  cargo, hatch, crane or tank ids, non-positive weights, outreaches and areas, cranes whose
  summed Safe Working Load is below the weight ("crane overloaded"), a load over the hatch
  cover's UDL, over the hold's capacity, or over ``max_deadweight`` (read as the maximum
  permissible draft), a tank filled past its capacity or emptied below zero; a transfer
  applies all its adjustments or none (an empty one changes nothing).
- The state holds no cargo catalogue, hatch specifications, crane list, operating limits
  or tank capacities: each tool answers the values of its own ``example_output`` (the
  one cargo unit, found by its description as ``cargo_id``; the same hatch cover under
  every hold, whose ``hold_id`` names its hatch; the same cranes and SWL at any outreach;
  500 mt per tank) and marks them free: an example illustrates, it does not state.
- ``current_fill_level`` is read as metric tonnes (the ballast tool's ``current_mt``), so a
  transfer's effect on the tanks is determined; tanks named ``Port``/``Stbd`` are the wing
  tanks, 10 m off the centreline, the peaks are on it.
- The stability model is the twin's own (free): ballast adds 0.0001 m of GM per tonne; a
  suspended load takes 0.001 m per tonne, the same load stowed on a hatch cover 0.0008 m;
  the list is the wing tanks' moment (starboard minus port, tonnes times lever) over a
  stiffness of 3,500 t.m per degree per metre of GM, cargo on a hatch cover sitting on the
  centreline; 50 t per cm of immersion; a peak's tonne trims by 0.001 m (aft positive).
- A lift picks up from the quay 24 m out on the starboard side (the execution tool takes
  no outreach); its worst case is the largest list and the smallest GM among before the
  lift, at pickup and after landing, the swing the spread of those lists.
  ``execute_heavy_lift_operation`` refuses, changing nothing, a lift that would break the
  limits ``get_vessel_operational_limits`` answers.
- A stowed unit adds its weight to the hold's ``current_load``; the hold's ``cargo_type``
  becomes the ``cargo_id`` (appended after a comma when the hold held cargo); a unit stowed
  once cannot be lifted again. Hatch reinforcement is recorded on the hold as
  ``hatch_spread_area_sqm`` (the state has no hatch record); its ``effective_udl_t_per_m2``
  is the cargo unit's weight over the target area, which may not exceed the cover's area.
- Stability figures read back are determined until a write moved them through the model.
- Free state: the four stability figures once moved, a stowing hold's ``current_load`` (the
  example's weight) and ``cargo_type``, and the ``hatch_spread_area_sqm`` key of its own.
"""

from __future__ import annotations

from typing import Any

from occubench.twins._twin import Answer, Twin, tool

TANK_CAPACITY_MT = 500
WING_LEVER_M = 10.0
GM_GAIN_PER_BALLAST_T = 0.0001
GM_LOSS_SUSPENDED_PER_T = 0.001
GM_LOSS_STOWED_PER_T = 0.0008
HEEL_STIFFNESS = 3500.0
TONNES_PER_M_IMMERSION = 5000.0
TRIM_PER_PEAK_T = 0.001
PICKUP_OUTREACH_M = 24.0
_STABILITY = ("metacentric_height_GM", "heel", "current_draft_mean", "trim")


def _side(tank_id: str) -> int:
    """+1 for a starboard wing tank, -1 for a port one, 0 on the centreline."""
    return 1 if "stbd" in tank_id.lower() else -1 if "port" in tank_id.lower() else 0


def _trim_sign(tank_id: str) -> int:
    return 1 if "aft" in tank_id.lower() else -1 if "fore" in tank_id.lower() else 0


def heel_deg(moment_tm: float, gm: float) -> float:
    """The list (degrees, starboard positive) a transverse moment gives at a GM."""
    return round(moment_tm / (HEEL_STIFFNESS * gm), 2) + 0.0


class HeavyLiftTwin(Twin):
    """The heavy-lift cargo loading environment (module doc)."""

    environment = "env_b3a9a1fdeaef"

    def error(self, message: str, code: str | None = None) -> Answer:
        """The config's error shape: ``{"error": "<message>"}``."""
        return Answer(observation={"error": message})

    def _example(self, tool_name: str) -> Any:
        return self.specs[tool_name].example_output

    def _cargo(self, cargo_id: str) -> dict[str, Any] | None:
        unit = self._example("get_cargo_details")
        return dict(unit) if unit["description"] == cargo_id else None

    def _hold(self, hold_id: str) -> dict[str, Any] | None:
        return next((h for h in self.state["cargo_holds"] if h["hold_id"] == hold_id), None)

    def _at(self, hold: dict[str, Any], *keys: str) -> list[str]:
        """The state pointers of some fields of a hold."""
        index = self.state["cargo_holds"].index(hold)
        return [f"/cargo_holds/{index}/{key}" for key in keys]

    def _tank(self, tank_id: Any) -> dict[str, Any] | None:
        return next((t for t in self.state["ballast_tanks"] if t["tank_id"] == tank_id), None)

    def _cranes_problem(self, crane_ids: list[str], weight: float) -> str | None:
        swl = {c["id"]: c["swl_mt"] for c in self._example("get_crane_inventory")["cranes"]}
        if not crane_ids or len(set(crane_ids)) != len(crane_ids):
            return "Invalid crane_ids"
        unknown = [c for c in crane_ids if c not in swl]
        if unknown:
            return f"Invalid crane_id: {unknown[0]}"
        if sum(swl[c] for c in crane_ids) < weight:
            return "Crane overloaded: combined SWL below the lift weight"
        return None

    def _moment(self) -> float:
        return float(
            sum(
                _side(t["tank_id"]) * t["current_fill_level"] * WING_LEVER_M
                for t in self.state["ballast_tanks"]
            )
        )

    def _deadweight(self, extra: float) -> float:
        cargo = sum(h["current_load"] for h in self.state["cargo_holds"])
        ballast = sum(t["current_fill_level"] for t in self.state["ballast_tanks"])
        return float(cargo + ballast + extra)

    def _lift(self, weight: float, outreach: float) -> dict[str, float]:
        """The worst case of a lift from the current state (module doc)."""
        gm = self.state["stability_status"]["metacentric_height_GM"]
        lifting = gm - weight * GM_LOSS_SUSPENDED_PER_T
        landed = gm - weight * GM_LOSS_STOWED_PER_T
        moment = self._moment()
        lists = [
            self.state["stability_status"]["heel"],
            heel_deg(moment + weight * outreach, lifting),
            heel_deg(moment, landed),
        ]
        return {
            "min_encountered_gm_m": round(min(gm, lifting, landed), 3),
            "max_encountered_list_deg": max(abs(x) for x in lists),
            "max_list_swing_deg": round(max(lists) - min(lists), 2),
        }

    def _settle(self, weight_added: float, gm_change: float, trim_change: float) -> list[str]:
        """Move the stability figures through the model; their state pointers (free)."""
        status = self.state["stability_status"]
        status["metacentric_height_GM"] = round(status["metacentric_height_GM"] + gm_change, 3)
        status["current_draft_mean"] = round(
            status["current_draft_mean"] + weight_added / TONNES_PER_M_IMMERSION, 3
        )
        status["trim"] = round(status["trim"] + trim_change, 3)
        status["heel"] = heel_deg(self._moment(), status["metacentric_height_GM"])
        return [f"/stability_status/{field}" for field in _STABILITY]

    @tool
    def get_cargo_details(self, arguments: dict[str, Any]) -> Answer:
        """The cargo unit's weight, footprint and description (all free)."""
        unit = self._cargo(arguments["cargo_id"])
        if unit is None:
            return self.error("Unknown cargo_id")
        return Answer(observation=unit, free=[f"/{key}" for key in unit])

    @tool
    def get_vessel_operational_limits(self, arguments: dict[str, Any]) -> Answer:
        """The stability limits (free: the example's)."""
        limits = dict(self._example("get_vessel_operational_limits"))
        return Answer(observation=limits, free=[f"/{key}" for key in limits])

    @tool
    def get_hatch_details(self, arguments: dict[str, Any]) -> Answer:
        """A hold's hatch cover specification (free: the example's)."""
        if self._hold(arguments["hatch_id"]) is None:
            return self.error("Invalid hatch_id")
        hatch = dict(self._example("get_hatch_details"))
        return Answer(observation=hatch, free=[f"/{key}" for key in hatch])

    @tool
    def get_crane_inventory(self, arguments: dict[str, Any]) -> Answer:
        """The cranes and their SWL at an outreach (free: the example's)."""
        if arguments["outreach_m"] <= 0:
            return self.error("Invalid outreach_m: must be positive")
        cranes = [dict(c) for c in self._example("get_crane_inventory")["cranes"]]
        return Answer(observation={"cranes": cranes}, free=["/cranes"])

    @tool
    def get_stability_status(self, arguments: dict[str, Any]) -> Answer:
        """The current GM and list."""
        status = self.state["stability_status"]
        return Answer(
            observation={
                "current_gm_m": status["metacentric_height_GM"],
                "current_list_deg": status["heel"],
            },
            free=[
                pointer
                for pointer, field in (
                    ("/current_gm_m", "metacentric_height_GM"),
                    ("/current_list_deg", "heel"),
                )
                if f"/stability_status/{field}" in self.free_state
            ],
        )

    @tool
    def get_ballast_inventory(self, arguments: dict[str, Any]) -> Answer:
        """Each tank's tonnes and capacity (the capacity free)."""
        tanks = [
            {"tank_id": t["tank_id"], "current_mt": t["current_fill_level"]}
            | {"capacity_mt": TANK_CAPACITY_MT}
            for t in self.state["ballast_tanks"]
        ]
        free = [f"/tanks/{i}/capacity_mt" for i in range(len(tanks))]
        return Answer(observation={"tanks": tanks}, free=free)

    @tool
    def simulate_dynamic_lift(self, arguments: dict[str, Any]) -> Answer:
        """The worst-case stability of a lift, changing nothing (all free)."""
        weight, outreach = arguments["weight_mt"], arguments["start_outreach_m"]
        if weight <= 0:
            return self.error("Invalid weight_mt: must be positive")
        if outreach <= 0:
            return self.error("Invalid start_outreach_m: must be positive")
        if self._hold(arguments["end_position"]) is None:
            return self.error("Invalid end_position")
        problem = self._cranes_problem(arguments["crane_ids"], weight)
        if problem is not None:
            return self.error(problem)
        metrics = self._lift(weight, outreach)
        return Answer(observation=metrics, free=[f"/{key}" for key in metrics])

    @tool
    def configure_hatch_reinforcement(self, arguments: dict[str, Any]) -> Answer:
        """Spread the cargo unit's load over an area of a hatch cover."""
        hold = self._hold(arguments["hatch_id"])
        if hold is None:
            return self.error("Invalid hatch_id")
        area = arguments["target_area_sqm"]
        hatch = self._example("get_hatch_details")
        if area <= 0 or area > hatch["length_m"] * hatch["width_m"]:
            return self.error("Invalid target_area_sqm: outside the hatch cover's area")
        hold["hatch_spread_area_sqm"] = area
        weight = self._example("get_cargo_details")["weight_mt"]
        return Answer(
            observation={"status": "configured", "effective_udl_t_per_m2": round(weight / area, 2)},
            free=["/effective_udl_t_per_m2"],
            free_state=self._at(hold, "hatch_spread_area_sqm"),
        )

    @tool
    def execute_ballast_transfer(self, arguments: dict[str, Any]) -> Answer:
        """Fill or discharge tanks, all adjustments or none."""
        fills = {t["tank_id"]: t["current_fill_level"] for t in self.state["ballast_tanks"]}
        added = gm_change = trim_change = 0.0
        for adjustment in arguments["adjustments"]:
            tank = self._tank(adjustment.get("tank_id"))
            delta = adjustment.get("delta_mt")
            if tank is None:
                return self.error(f"Invalid tank_id: {adjustment.get('tank_id')}")
            if not isinstance(delta, int | float):
                return self.error("Invalid delta_mt")
            fills[tank["tank_id"]] += delta
            if fills[tank["tank_id"]] > TANK_CAPACITY_MT:
                return self.error(f"Exceeds tank capacity limit: {tank['tank_id']}")
            if fills[tank["tank_id"]] < 0:
                return self.error(f"Insufficient ballast in tank: {tank['tank_id']}")
            added += delta
            gm_change += delta * GM_GAIN_PER_BALLAST_T
            trim_change += _trim_sign(tank["tank_id"]) * delta * TRIM_PER_PEAK_T
        if self._deadweight(added) > self.state["vessel_metrics"]["max_deadweight"]:
            return self.error("Exceeds maximum permissible draft")
        if not arguments["adjustments"]:
            return Answer(observation={"success": True})
        for tank in self.state["ballast_tanks"]:
            tank["current_fill_level"] = fills[tank["tank_id"]]
        moved = self._settle(added, gm_change, trim_change)
        return Answer(observation={"success": True}, free_state=moved)

    @tool
    def execute_heavy_lift_operation(self, arguments: dict[str, Any]) -> Answer:
        """Lift the cargo unit onto a hatch cover, refusing any limit broken."""
        unit = self._cargo(arguments["cargo_id"])
        if unit is None:
            return self.error("Unknown cargo_id")
        hold = self._hold(arguments["destination_hatch"])
        if hold is None:
            return self.error("Invalid hatch_id")
        if any(
            arguments["cargo_id"] in h["cargo_type"].split(", ") for h in self.state["cargo_holds"]
        ):
            return self.error("Cargo already stowed")
        weight = unit["weight_mt"]
        problem = self._cranes_problem(arguments["crane_ids"], weight)
        if problem is not None:
            return self.error(problem)
        area = max(unit["footprint_sqm"], hold.get("hatch_spread_area_sqm", 0))
        if weight / area > self._example("get_hatch_details")["max_udl_t_per_m2"]:
            return self.error("Structural failure: exceeds hatch cover UDL limit")
        if hold["current_load"] + weight > hold["capacity"]:
            return self.error("Exceeds hold capacity limit")
        if self._deadweight(weight) > self.state["vessel_metrics"]["max_deadweight"]:
            return self.error("Exceeds maximum permissible draft")
        worst = self._lift(weight, PICKUP_OUTREACH_M)
        limits = self._example("get_vessel_operational_limits")
        if (
            worst["min_encountered_gm_m"] < limits["min_gm_m"]
            or worst["max_encountered_list_deg"] > limits["max_list_deg"]
            or worst["max_list_swing_deg"] > limits["max_list_swing_deg"]
        ):
            return self.error("Stability limit exceeded: lift aborted")
        hold["current_load"] += weight
        cargo = arguments["cargo_id"]
        hold["cargo_type"] = (
            cargo if hold["cargo_type"] == "empty" else f"{hold['cargo_type']}, {cargo}"
        )
        moved = self._settle(weight, -weight * GM_LOSS_STOWED_PER_T, 0.0)
        return Answer(
            observation={
                "status": "completed",
                "final_list_deg": self.state["stability_status"]["heel"],
            },
            free=["/final_list_deg"],
            free_state=[*moved, *self._at(hold, "current_load", "cargo_type")],
        )
