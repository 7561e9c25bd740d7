"""The compare rule: leaves within tolerance, determined fields, and states with free parts."""

from __future__ import annotations

from occubench.twins import Outcome, TwinStep, compare_observation, compare_state, same_leaf


def test_numbers_compare_within_the_relative_tolerance_and_nothing_else_does() -> None:
    assert same_leaf(100, 100.9, 0.01) and not same_leaf(100, 102, 0.01)
    assert not same_leaf(1, True) and not same_leaf("1", 1) and same_leaf({"a": 1}, {"a": 1})


def test_an_answer_is_held_to_the_twins_determined_fields_only() -> None:
    step = TwinStep(
        tool="t",
        arguments={},
        outcome=Outcome.SUCCESS,
        observation={"id": "A", "n": 10, "note": "x", "list": [1, 2]},
        free=["/note"],
    )
    match = compare_observation(step, {"id": "A", "n": 11, "note": "y", "list": [1], "z": 0})
    assert (match.determined, match.matched) == (4, 2)
    assert match.missing == ["/list/1"] and match.differing == ["/n"] and match.extra == ["/z"]


def test_a_state_comparison_skips_what_the_twin_chose() -> None:
    twin = {"clock": "09:00", "orders": [{"id": 1, "status": "done"}]}
    simulator = {"clock": "09:05", "orders": [{"id": 1, "status": "open"}], "mine": 1}
    full = compare_state(twin, simulator)
    assert (full.fields, full.matched) == (4, 1)
    assert set(full.differing) == {"/clock", "/orders/0/status", "/mine"}
    spared = compare_state(twin, simulator, free=["/clock", "/mine"])
    assert (spared.fields, spared.matched, spared.differing) == (2, 1, ["/orders/0/status"])
