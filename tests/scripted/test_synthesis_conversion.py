"""The scripted generator's conversion stage: what it withholds, and what it cannot."""

from __future__ import annotations

import pytest

from occubench.scripted._synthesis_world import scripted_conversion


@pytest.mark.parametrize(
    ("request_", "withheld", "kind"),
    [
        ("Process the order of 'George B.' (PAT-777) for 08:00 today.", "PAT-777", "reference"),
        ("Calibrate the 'Neon Horizons' vocal mix to -18.0 dBFS.", "Neon Horizons", "name"),
        ("Keep the whole day under 3000.00 USD. Then book a driver.", "3000.00", "figure"),
    ],
)
def test_it_withholds_an_id_before_a_name_before_a_figure(request_: str, withheld: str, kind: str):
    answer = scripted_conversion({"agent_instruction": request_, "task_scenario_name": "Care"})
    (fact,) = answer["user"]["facts"]
    assert (fact["value"], fact["name"]) == (withheld, kind)
    assert withheld not in answer["opening"]
    assert f"the {kind} I will give you" in answer["opening"]


def test_the_opening_keeps_the_first_sentence():
    request = "Review entry E-77120 today. Get its value. Report the rate."
    answer = scripted_conversion({"agent_instruction": request})
    assert answer["opening"] == "Review entry the reference I will give you today."


def test_a_request_with_nothing_to_withhold_gets_an_answer_that_fails_validation():
    answer = scripted_conversion({"agent_instruction": "Tidy up the queue."})
    assert answer == {"opening": "Tidy up the queue.", "user": {}}
