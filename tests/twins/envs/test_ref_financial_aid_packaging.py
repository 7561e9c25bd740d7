"""The financial aid twin's readings of its config (module doc of the twin)."""

from __future__ import annotations

from occubench.dataset import load_env, reference_suite_dir
from occubench.twins import Outcome, Twin, twin_for

ENV = "ref_financial_aid_packaging"


def _twin() -> Twin:
    twin = twin_for(load_env(reference_suite_dir(), ENV))
    assert twin is not None
    return twin


def test_the_grant_limits_year_is_read_from_its_id() -> None:
    twin = _twin()
    assert twin.call("get_grant_limit", {"aid_year": "2025-26"}).observation["max_grant"] == 7395
    for year in ("2025-2026", "2024-25", "PELL-2025-26"):
        assert twin.call("get_grant_limit", {"aid_year": year}).outcome is Outcome.ERROR


def test_awards_come_in_packaging_order_with_nothing_computed() -> None:
    twin = _twin()
    awards = twin.call("list_awards", {"student_id": "ST-40117"}).observation
    assert awards == twin.env.task_initial_state["awards"]
    assert twin.call("list_awards", {"student_id": "ST-40118"}).outcome is Outcome.ERROR
