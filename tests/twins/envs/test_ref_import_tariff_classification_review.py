"""The tariff review twin's readings of its config (module doc of the twin)."""

from __future__ import annotations

from occubench.twins import Outcome
from twin_envs import reference_twin

ENV = "ref_import_tariff_classification_review"


def test_candidates_without_rates_in_the_state_are_not_found() -> None:
    twin = reference_twin(ENV)
    listed = twin.call("list_candidate_headings", {"entry_id": "E-77120"}).observation
    codes = [c["heading_code"] for c in listed["candidates"]]
    assert codes == ["8471.30", "8471.41", "8471.50"]
    answers = [twin.call("get_duty_rate", {"heading_code": code}) for code in codes]
    assert [a.outcome for a in answers] == [Outcome.ERROR, Outcome.ERROR, Outcome.SUCCESS]
    assert answers[2].observation["general_rate_pct"] == 2.6


def test_heading_codes_match_exactly() -> None:
    twin = reference_twin(ENV)
    for code in ("8471.5", "8471.50.00", " 8471.50"):
        assert twin.call("get_duty_rate", {"heading_code": code}).outcome is Outcome.ERROR
