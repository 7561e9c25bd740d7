"""The financial aid twin's readings of its config (module doc of the twin)."""

from __future__ import annotations

from occubench.twins import Outcome
from twin_envs import reference_twin

ENV = "ref_financial_aid_packaging"


def test_the_grant_limits_year_is_read_from_its_id() -> None:
    twin = reference_twin(ENV)
    assert twin.call("get_grant_limit", {"aid_year": "2025-26"}).observation["max_grant"] == 7395
    for year in ("2025-2026", "2024-25", "PELL-2025-26"):
        assert twin.call("get_grant_limit", {"aid_year": year}).outcome is Outcome.ERROR


def test_awards_come_in_packaging_order_with_nothing_computed() -> None:
    twin = reference_twin(ENV)
    awards = twin.call("list_awards", {"student_id": "ST-40117"}).observation
    assert awards == twin.env.task_initial_state["awards"]
    assert twin.call("list_awards", {"student_id": "ST-40118"}).outcome is Outcome.ERROR
