"""Twin of ``env_97826262b1d5``: a timber harvest plan over a few forest plots.

How it reads its config:
- Errors are ``{"error": "<message>"}`` (the prompt's example shape, no code) and leave the
  state as it was: an unknown ``plot_id``, replanting a plot that still stands ("plant on
  a plot that is already occupied"), and, read as out-of-range requests, harvesting or
  treating a plot with no standing trees and spending more than the operating budget.
- The state holds no prices, costs or growth rates ("domain logic without domain data"):
  the twin chooses them and marks every figure that depends on them free. Costs are the
  ones the inventory tool's ``example_output`` names (thinning, fertilization, replanting,
  flat per plot); a stand is merchantable sawtimber from 40 years, worth 900 per m3, and
  pulpwood worth 250 per m3 before that; the yearly growth rate is 12% under 20 years, 8%
  under 40, 3% after, plus a tenth of the soil index above 0.8, plus 3% for a stand of at
  most 700 trees/ha.
- Thinning removes 30% of the trees (``stocking_density_trees_ha``); fertilization raises
  ``soil_quality_index`` by 0.05 (at most 1.0): the treatments act through the state's own
  fields, so they change the growth rate and nothing else is recorded.
- A clear-cut sets the plot's volume, age, height and stocking to 0 and adds its value to
  ``total_harvested_revenue``; replanting stocks it at 1,100 trees/ha (age and volume 0)
  and takes the replanting cost from ``operating_budget``; a plot with no trees is bare.
- ``advance_simulation`` adds a year to ``current_simulation_year`` and to each stocked
  plot's age, grows its volume by its rate and its height by half that rate (one
  decimal); no year limit is enforced (the config names none).
- ``check_strategy_feasibility`` projects to the end of year 2 (the tool's "2-year
  horizon"): every stand with volume harvested at its projected value, every harvested or
  harvestable plot replanted; its ``bottleneck`` is "none", "revenue" or
  "replanting_costs". All of it is free.
- ``get_environment_state`` is determined until a write used a chosen figure: revenue after
  a harvest, the budget after any spending, are free from then on.
- Free state: the revenue and budget so set; a treated plot's stocking or soil index, a
  replanted plot's stocking, each grown plot's volume and height (a clear-cut fixes them).
- ``report_discrepancy`` declares no return fields (``example_output`` null): the
  observation is ``{}`` and the state does not change.
"""

from __future__ import annotations

from typing import Any

from occubench.twins._twin import Answer, Twin, tool

MERCHANTABLE_AGE = 40
SAWTIMBER_PRICE_PER_M3 = 900
PULPWOOD_PRICE_PER_M3 = 250
THINNING_KEEPS = 0.7
FERTILIZATION_GAIN = 0.05
REPLANT_DENSITY = 1100
OPEN_STAND_DENSITY = 700
HORIZON_YEAR = 2
_TREATMENT_COST_KEYS = {"thinning": "thinning_cost", "fertilization": "fertilization_cost"}
_INVENTORY_FREE = (
    "is_merchantable",
    "current_value",
    "thinning_cost",
    "fertilization_cost",
    "replanting_cost",
    "projected_annual_growth_rate",
)


def growth_rate(plot: dict[str, Any]) -> float:
    """The twin's yearly volume growth rate of a plot (module doc)."""
    age = plot["stand_age_years"]
    base = 0.12 if age < 20 else 0.08 if age < MERCHANTABLE_AGE else 0.03
    soil = 0.1 * (plot["soil_quality_index"] - 0.8)
    density = plot["stocking_density_trees_ha"]
    opened = 0.03 if 0 < density <= OPEN_STAND_DENSITY else 0.0
    return float(round(base + soil + opened, 4))


def merchantable(plot: dict[str, Any]) -> bool:
    """Whether a plot stands as sawtimber."""
    return bool(plot["estimated_volume_m3"] > 0 and plot["stand_age_years"] >= MERCHANTABLE_AGE)


def market_value(plot: dict[str, Any]) -> int:
    """The plot's value if clear-cut now."""
    price = SAWTIMBER_PRICE_PER_M3 if merchantable(plot) else PULPWOOD_PRICE_PER_M3
    return int(round(plot["estimated_volume_m3"] * price))


def grown(plot: dict[str, Any]) -> dict[str, Any]:
    """The plot one year on (stocked plots age and grow; bare plots stay bare)."""
    if plot["stocking_density_trees_ha"] <= 0:
        return dict(plot)
    rate = growth_rate(plot)
    return {
        **plot,
        "stand_age_years": plot["stand_age_years"] + 1,
        "estimated_volume_m3": round(plot["estimated_volume_m3"] * (1 + rate), 1),
        "average_height_m": round(plot["average_height_m"] * (1 + rate / 2), 1),
    }


class TimberHarvestTwin(Twin):
    """The timber harvest planning environment (module doc)."""

    environment = "env_97826262b1d5"

    def error(self, message: str, code: str | None = None) -> Answer:
        """The config's error shape: ``{"error": "<message>"}``."""
        return Answer(observation={"error": message})

    def _cost(self, key: str) -> Any:
        example = self.specs["get_inventory_data"].example_output
        return example["plots"][0][key]

    def _plot(self, plot_id: str) -> dict[str, Any] | None:
        return next((p for p in self.state["plots"] if p["plot_id"] == plot_id), None)

    def _at(self, plot: dict[str, Any], *keys: str) -> list[str]:
        """The state pointers of some fields of a plot."""
        index = self.state["plots"].index(plot)
        return [f"/plots/{index}/{key}" for key in keys]

    def _spend(self, cost: Any, chosen: list[str]) -> Answer:
        self.state["operating_budget"] -= cost
        return Answer(
            observation={"cost": cost, "new_budget": self.state["operating_budget"]},
            free=["/cost", "/new_budget"],
            free_state=["/operating_budget", *chosen],
        )

    @tool
    def get_environment_state(self, arguments: dict[str, Any]) -> Answer:
        """The year, the revenue so far and the budget left."""
        return Answer(
            observation={
                "current_year": self.state["current_simulation_year"],
                "total_revenue": self.state["total_harvested_revenue"],
                "operating_budget": self.state["operating_budget"],
            },
            free=[
                pointer
                for pointer, field in (
                    ("/total_revenue", "total_harvested_revenue"),
                    ("/operating_budget", "operating_budget"),
                )
                if f"/{field}" in self.free_state
            ],
        )

    @tool
    def get_inventory_data(self, arguments: dict[str, Any]) -> Answer:
        """Each plot with its status, value, treatment costs and growth rate."""
        plots = [
            {
                "plot_id": plot["plot_id"],
                "is_merchantable": merchantable(plot),
                "current_value": market_value(plot),
                "thinning_cost": self._cost("thinning_cost"),
                "fertilization_cost": self._cost("fertilization_cost"),
                "replanting_cost": self._cost("replanting_cost"),
                "projected_annual_growth_rate": growth_rate(plot),
            }
            for plot in self.state["plots"]
        ]
        free = [f"/plots/{i}/{key}" for i in range(len(plots)) for key in _INVENTORY_FREE]
        return Answer(observation={"plots": plots}, free=free)

    @tool
    def check_strategy_feasibility(self, arguments: dict[str, Any]) -> Answer:
        """Whether the targets can be met by the end of the horizon (all of it free)."""
        projected = [dict(p) for p in self.state["plots"]]
        for _ in range(max(0, HORIZON_YEAR - self.state["current_simulation_year"])):
            projected = [grown(p) for p in projected]
        revenue = round(self.state["total_harvested_revenue"] + sum(map(market_value, projected)))
        replants = sum(
            1
            for p in projected
            if p["estimated_volume_m3"] > 0 or p["stocking_density_trees_ha"] <= 0
        )
        budget = self.state["operating_budget"] - replants * self._cost("replanting_cost")
        short_revenue = revenue < arguments["target_revenue"]
        short_budget = budget < arguments["minimum_budget_threshold"]
        bottleneck = "revenue" if short_revenue else "replanting_costs" if short_budget else "none"
        observation = {
            "is_feasible": not (short_revenue or short_budget),
            "max_potential_revenue": revenue,
            "estimated_final_budget": budget,
            "bottleneck": bottleneck,
        }
        return Answer(observation=observation, free=[f"/{key}" for key in observation])

    @tool
    def apply_silviculture(self, arguments: dict[str, Any]) -> Answer:
        """Thin or fertilize a standing plot, paying the treatment's cost."""
        plot = self._plot(arguments["plot_id"])
        if plot is None:
            return self.error("Invalid plot_id")
        if plot["stocking_density_trees_ha"] <= 0:
            return self.error("Plot has no standing trees to treat")
        cost = self._cost(_TREATMENT_COST_KEYS[arguments["treatment"]])
        if cost > self.state["operating_budget"]:
            return self.error("Insufficient operating budget")
        if arguments["treatment"] == "thinning":
            plot["stocking_density_trees_ha"] = round(
                plot["stocking_density_trees_ha"] * THINNING_KEEPS
            )
            return self._spend(cost, self._at(plot, "stocking_density_trees_ha"))
        plot["soil_quality_index"] = min(
            1.0, round(plot["soil_quality_index"] + FERTILIZATION_GAIN, 2)
        )
        return self._spend(cost, self._at(plot, "soil_quality_index"))

    @tool
    def execute_harvest(self, arguments: dict[str, Any]) -> Answer:
        """Clear-cut a plot, adding its value to the revenue."""
        plot = self._plot(arguments["plot_id"])
        if plot is None:
            return self.error("Invalid plot_id")
        if plot["estimated_volume_m3"] <= 0:
            return self.error("Plot has no standing timber to harvest")
        value = market_value(plot)
        plot.update(
            stand_age_years=0,
            average_height_m=0.0,
            stocking_density_trees_ha=0,
            estimated_volume_m3=0.0,
        )
        self.state["total_harvested_revenue"] += value
        return Answer(
            observation={
                "revenue_gained": value,
                "total_revenue": self.state["total_harvested_revenue"],
            },
            free=["/revenue_gained", "/total_revenue"],
            free_state=["/total_harvested_revenue"],
            fixed_state=self._at(
                plot, "average_height_m", "stocking_density_trees_ha", "estimated_volume_m3"
            ),
        )

    @tool
    def execute_replant(self, arguments: dict[str, Any]) -> Answer:
        """Restock a harvested plot, paying the replanting cost."""
        plot = self._plot(arguments["plot_id"])
        if plot is None:
            return self.error("Invalid plot_id")
        if plot["stocking_density_trees_ha"] > 0:
            return self.error("Plot is already occupied")
        cost = self._cost("replanting_cost")
        if cost > self.state["operating_budget"]:
            return self.error("Insufficient operating budget")
        plot["stocking_density_trees_ha"] = REPLANT_DENSITY
        return self._spend(cost, self._at(plot, "stocking_density_trees_ha"))

    @tool
    def advance_simulation(self, arguments: dict[str, Any]) -> Answer:
        """One year on: every stocked plot ages and grows."""
        stocked = [p for p in self.state["plots"] if p["stocking_density_trees_ha"] > 0]
        chosen = [
            pointer
            for plot in stocked
            for pointer in self._at(plot, "estimated_volume_m3", "average_height_m")
        ]
        self.state["plots"] = [grown(p) for p in self.state["plots"]]
        self.state["current_simulation_year"] += 1
        return Answer(
            observation={"new_year": self.state["current_simulation_year"]}, free_state=chosen
        )

    @tool
    def report_discrepancy(self, arguments: dict[str, Any]) -> Answer:
        """Note that the targets cannot be met (no return fields, no state change)."""
        return Answer(observation={})
