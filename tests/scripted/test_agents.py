from occubench.scripted._agents import (
    MISSING,
    Decision,
    Result,
    Step,
    careful,
    no_retry,
    parse_plan,
    render_answer,
    resolve,
    trusting,
)

PLAN = """Do it.

A plan that solves this task:
1. Call get_a with {"id": "A"}.
2. Call list_b with {}.
Answer: A is {{1.value}}; last is {{2.items[2].name}}."""


def test_parse_plan():
    plan = parse_plan(PLAN)
    assert [(s.tool, s.arguments, s.paths) for s in plan.steps] == [
        ("get_a", {"id": "A"}, ["value"]),
        ("list_b", {}, ["items[2].name"]),
    ]
    assert parse_plan("no plan here") is None


def test_resolve_and_render():
    obs = {"items": [{"name": "x"}, {"name": "y"}]}
    assert resolve(obs, "items[1].name") == "y"
    assert resolve(obs, "items[2].name") is MISSING and resolve(obs, "nope") is MISSING
    plan = parse_plan(PLAN)
    assert render_answer(plan, {1: {"value": None}, 2: obs}) == "A is null; last is unknown."


GOOD = Result({"value": 3}, None)
ERROR = Result({"error": {}}, "500")
step = Step("get_a", {}, ["value"])


def test_careful_needs_three_identical_complete_reads():
    stale = Result({"value": 2}, None)
    assert careful(step, []) is Decision.CALL
    assert careful(step, [GOOD, GOOD]) is Decision.CALL
    assert careful(step, [GOOD, GOOD, GOOD]) is Decision.ACCEPT
    assert careful(step, [stale, stale, GOOD]) is Decision.CALL  # two agreeing stale reads
    assert careful(step, [stale, stale, GOOD, GOOD, GOOD]) is Decision.ACCEPT
    assert careful(step, [Result({}, None)] * 3) is Decision.CALL  # value missing
    assert careful(step, [ERROR] * 10) is Decision.GIVE_UP


def test_no_retry_and_trusting():
    assert no_retry(step, [ERROR]) is Decision.GIVE_UP
    assert no_retry(step, [Result({}, None)]) is Decision.ACCEPT
    assert trusting(step, [ERROR]) is Decision.CALL
    assert trusting(step, [ERROR, Result({}, None)]) is Decision.ACCEPT
