"""The timber harvest twin (``env_97826262b1d5``): shapes, errors, writes, and task 154 on it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from occubench.twins import ChangeKind, FieldKind, Outcome
from occubench.twins.envs.env_97826262b1d5 import TimberHarvestTwin
from twin_envs import assert_nothing_changed, changes, sample_twin, successes

PLAN: list[tuple[str, dict[str, Any]]] = [
    ("get_environment_state", {}),
    ("get_inventory_data", {}),
    ("check_strategy_feasibility", {"target_revenue": 400_000, "minimum_budget_threshold": 60_000}),
    ("apply_silviculture", {"plot_id": "P-BETA", "treatment": "thinning"}),
    ("advance_simulation", {}),
    ("execute_harvest", {"plot_id": "P-ALPHA"}),
    ("execute_replant", {"plot_id": "P-ALPHA"}),
    ("execute_harvest", {"plot_id": "P-BETA"}),
    ("execute_replant", {"plot_id": "P-BETA"}),
    ("get_environment_state", {}),
]
"""Task 154: read the year and inventory, check the targets, thin the mid-age stand, move to
year 2, clear-cut the two stands with timber and replant each, then read the totals."""

REVENUE_TARGET = 400_000
BUDGET_FLOOR = 60_000
LAST_YEAR = 2
"""Task 154's targets, as its verification plan states them."""


@pytest.fixture
def twin(public_sample: Path) -> TimberHarvestTwin:
    return sample_twin(public_sample, TimberHarvestTwin)


def test_every_success_fits_its_tools_example_output(twin: TimberHarvestTwin) -> None:
    steps = successes(twin, [*PLAN, ("report_discrepancy", {"reason": "none"})])
    assert {step.tool for step in steps} == set(twin.specs)


def test_unknown_plots_and_invalid_requests_get_the_configs_error(
    twin: TimberHarvestTwin,
) -> None:
    for name, arguments in [
        ("execute_harvest", {"plot_id": "P-DELTA"}),
        ("execute_replant", {"plot_id": "P-DELTA"}),
        ("apply_silviculture", {"plot_id": "P-DELTA", "treatment": "thinning"}),
    ]:
        assert twin.call(name, arguments).observation == {"error": "Invalid plot_id"}
    occupied = twin.call("execute_replant", {"plot_id": "P-ALPHA"})
    assert occupied.observation == {"error": "Plot is already occupied"}
    burn = twin.call("apply_silviculture", {"plot_id": "P-GAMMA", "treatment": "burn"})
    assert burn.outcome is Outcome.ERROR and "treatment" in burn.observation["error"]
    unknown = twin.call("fell_everything", {})
    assert unknown.observation == {"error": "Unknown action: fell_everything"}
    assert_nothing_changed(twin)


def test_a_harvested_plot_cannot_be_cut_or_treated_again_until_replanted(
    twin: TimberHarvestTwin,
) -> None:
    twin.call("execute_harvest", {"plot_id": "P-GAMMA"})
    again = twin.call("execute_harvest", {"plot_id": "P-GAMMA"})
    treat = twin.call("apply_silviculture", {"plot_id": "P-GAMMA", "treatment": "fertilization"})
    assert again.outcome is Outcome.ERROR and treat.outcome is Outcome.ERROR
    assert not again.changes and not treat.changes


def test_spending_past_the_budget_is_an_error_that_changes_nothing(
    twin: TimberHarvestTwin,
) -> None:
    twin.state["operating_budget"] = 1000.0
    step = twin.call("apply_silviculture", {"plot_id": "P-BETA", "treatment": "thinning"})
    assert step.observation == {"error": "Insufficient operating budget"} and not step.changes


def _changes(step: Any) -> dict[str, tuple[Any, Any]]:
    assert all(change.kind is ChangeKind.CHANGED for change in step.changes)
    return changes(step)


def test_each_write_changes_the_state_as_the_config_says(twin: TimberHarvestTwin) -> None:
    thin = twin.call("apply_silviculture", {"plot_id": "P-BETA", "treatment": "thinning"})
    assert _changes(thin) == {
        "/plots/1/stocking_density_trees_ha": (880, 616),
        "/operating_budget": (150_000.0, 145_000.0),
    }
    assert thin.free_state == ["/operating_budget", "/plots/1/stocking_density_trees_ha"]
    feed = twin.call("apply_silviculture", {"plot_id": "P-GAMMA", "treatment": "fertilization"})
    assert _changes(feed) == {
        "/plots/2/soil_quality_index": (0.85, 0.9),
        "/operating_budget": (145_000.0, 142_000.0),
    }
    assert feed.free_state == [
        "/operating_budget",
        "/plots/1/stocking_density_trees_ha",
        "/plots/2/soil_quality_index",
    ]
    cut = twin.call("execute_harvest", {"plot_id": "P-ALPHA"})
    assert _changes(cut) == {
        "/plots/0/stand_age_years": (52, 0),
        "/plots/0/average_height_m": (38.5, 0.0),
        "/plots/0/stocking_density_trees_ha": (420, 0),
        "/plots/0/estimated_volume_m3": (440.0, 0.0),
        "/total_harvested_revenue": (0.0, 396_000.0),
    }
    assert cut.observation == {"revenue_gained": 396_000, "total_revenue": 396_000.0}
    assert cut.free_state == [*feed.free_state, "/total_harvested_revenue"]
    replant = twin.call("execute_replant", {"plot_id": "P-ALPHA"})
    assert _changes(replant) == {
        "/plots/0/stocking_density_trees_ha": (0, 1100),
        "/operating_budget": (142_000.0, 134_000.0),
    }
    assert replant.free_state == sorted([*cut.free_state, "/plots/0/stocking_density_trees_ha"])
    year = twin.call("advance_simulation", {})
    assert year.observation == {"new_year": 2}
    assert year.marking() == {"/new_year": FieldKind.DETERMINED}
    grown = _changes(year)
    assert grown["/current_simulation_year"] == (1, 2)
    assert grown["/plots/0/stand_age_years"] == (0, 1)
    assert grown["/plots/1/estimated_volume_m3"] == (195.0, 216.8)
    assert "/plots/0/estimated_volume_m3" not in grown  # a seedling stand has no volume yet
    assert set(year.free_state) - set(replant.free_state) == {
        f"/plots/{i}/{key}" for i in range(3) for key in ("estimated_volume_m3", "average_height_m")
    }
    recut = twin.call("execute_harvest", {"plot_id": "P-BETA"})
    assert not {
        f"/plots/1/{key}"
        for key in ("estimated_volume_m3", "average_height_m", "stocking_density_trees_ha")
    } & set(recut.free_state)  # a clear-cut sets them to 0 again


def test_figures_are_free_once_a_write_used_a_chosen_price(twin: TimberHarvestTwin) -> None:
    before = twin.call("get_environment_state", {})
    assert set(before.marking().values()) == {FieldKind.DETERMINED}
    inventory = twin.call("get_inventory_data", {})
    assert {p: k for p, k in inventory.marking().items() if k is FieldKind.DETERMINED} == {
        f"/plots/{i}/plot_id": FieldKind.DETERMINED for i in range(3)
    }
    twin.call("execute_harvest", {"plot_id": "P-ALPHA"})
    after = twin.call("get_environment_state", {}).marking()
    assert after == {
        "/current_year": FieldKind.DETERMINED,
        "/total_revenue": FieldKind.FREE,
        "/operating_budget": FieldKind.DETERMINED,
    }


def test_the_reference_plan_solves_task_154(twin: TimberHarvestTwin) -> None:
    steps = successes(twin, PLAN)
    merchantable = {p["plot_id"]: p["is_merchantable"] for p in steps[1].observation["plots"]}
    assert merchantable == {"P-ALPHA": True, "P-BETA": False, "P-GAMMA": False}
    assert steps[2].observation["is_feasible"] is True
    final = steps[-1].observation
    assert final == {"current_year": 2, "total_revenue": 477_110.0, "operating_budget": 129_000.0}
    assert final["total_revenue"] > REVENUE_TARGET
    assert final["operating_budget"] >= BUDGET_FLOOR
    assert final["current_year"] <= LAST_YEAR
    state = twin.state
    assert state["total_harvested_revenue"] == final["total_revenue"]
    assert state["operating_budget"] == final["operating_budget"]
    assert state["current_simulation_year"] <= LAST_YEAR
    for index, step in enumerate(steps):
        if step.tool == "execute_harvest":
            plot = step.arguments["plot_id"]
            assert any(
                later.tool == "execute_replant"
                and later.arguments == {"plot_id": plot}
                and later.outcome is Outcome.SUCCESS
                for later in steps[index + 1 :]
            ), plot
    assert [p["stocking_density_trees_ha"] for p in state["plots"]] == [1100, 1100, 1100]
