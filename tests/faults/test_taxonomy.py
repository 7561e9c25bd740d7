"""Fault families beyond E0-E3: placement, injection, logging."""

import asyncio

import pytest

from conftest import run_task
from occubench.faults import (
    FamilyContext,
    FamilyEvent,
    FaultFamily,
    FaultSession,
    FaultSettings,
    make_family_events,
    make_fault_plan,
    parse_families,
)

CRITICAL = [("get_a", {"id": "A"}), ("list_b", {}), ("get_c", {"id": "C"})]


def context(**kw):
    base = dict(
        seed=0,
        task_id=7,
        fault_count=2,
        fault_duration=2,
        expected_calls=8,
        tools=["get_a", "list_b", "get_c"],
        critical_calls=CRITICAL,
        latency_seconds=0.01,
    )
    return FamilyContext(**{**base, **kw})


def session(*events, corrupter=None):
    plan = make_fault_plan(seed=0, task_id=7, env_mode="E0", fault_count=0, fault_duration=1)
    return FaultSession(plan, families=list(events), corrupter=corrupter)


def test_parse_families():
    assert parse_families("persistent, latency") == [FaultFamily.PERSISTENT, FaultFamily.LATENCY]
    assert parse_families(None) == [] and parse_families(["semantic"]) == [FaultFamily.SEMANTIC]
    with pytest.raises(ValueError, match="unknown fault family 'flood'.*register it in FAMILIES"):
        parse_families("flood")


def test_family_events_are_seeded_and_shaped():
    families = list(FaultFamily)
    events = make_family_events(families, context())
    assert events == make_family_events(families, context())
    assert events != make_family_events(families, context(seed=1))
    by = {f: [e for e in events if e.family is f] for f in families}
    (down,) = by[FaultFamily.PERSISTENT]
    assert down.tool in {t for t, _ in CRITICAL} and down.duration is None
    assert len(by[FaultFamily.TARGETED]) == 2
    assert {e.kind.is_explicit for e in by[FaultFamily.TARGETED]} == {True, False}
    for family in (FaultFamily.CASCADING, FaultFamily.SEMANTIC, FaultFamily.LATENCY):
        assert [e.duration for e in by[family]] == [2, 2]
    assert all(e.delay_seconds == 0.01 for e in by[FaultFamily.LATENCY])


def test_persistent_tool_stays_down_others_work():
    s = session(FamilyEvent(family="persistent", tool="get_a", start_call=1))
    assert s.before_call(0, "get_a", {"id": "A"}) is None
    for i in range(1, 6):
        assert s.before_call(i, "get_a", {"id": "A"})["error"]["code"] == "SERVICE_DOWN"
    assert s.before_call(6, "list_b", {}) is None
    assert {f["family"] for f in s.log()} == {"persistent"} and len(s.log()) == 5


def test_cascading_fails_every_tool_in_its_window():
    s = session(FamilyEvent(family="cascading", start_call=1, duration=2))
    results = [
        s.before_call(i, tool, {}) for i, tool in enumerate(["get_a", "list_b", "get_c", "get_a"])
    ]
    assert results[0] is None and results[3] is None
    assert results[1]["error"]["code"] == results[2]["error"]["code"] == "DEPENDENCY_FAILURE"


def test_targeted_hits_only_matching_calls_fd_times():
    s = session(
        FamilyEvent(
            family="targeted", tool="get_a", arguments={"id": "A"}, duration=2, kind="http_500"
        )
    )
    assert s.before_call(0, "get_a", {"id": "B"}) is None  # other arguments: not critical
    assert s.before_call(1, "get_a", {"id": "A"})["error"]["status"] == 500
    assert s.before_call(2, "list_b", {}) is None
    assert s.before_call(3, "get_a", {"id": "A"})["error"]["status"] == 500
    assert s.before_call(4, "get_a", {"id": "A"}) is None  # used up


def test_targeted_implicit_degrades():
    s = session(
        FamilyEvent(
            family="targeted", tool="list_b", arguments={}, duration=1, kind="truncated_list"
        )
    )
    assert s.before_call(0, "list_b", {}) is None
    seen = asyncio.run(s.after_call(0, "list_b", {}, {"items": [{"id": i} for i in range(5)]}))
    assert len(seen["items"]) <= 2
    (fault,) = s.log()
    assert fault["family"] == "targeted" and fault["kind"] == "truncated_list"


def test_semantic_and_latency_change_only_what_they_say():
    async def corrupt(tool, observation):
        return {**observation, "amount": observation["amount"] * 100}

    s = session(
        FamilyEvent(family="semantic", start_call=0, duration=1),
        FamilyEvent(family="latency", start_call=1, duration=1, delay_seconds=0.01),
        corrupter=corrupt,
    )
    assert asyncio.run(s.after_call(0, "get_a", {}, {"id": "A", "amount": 2})) == {
        "id": "A",
        "amount": 200,
    }
    assert asyncio.run(s.after_call(1, "get_a", {}, {"id": "A", "amount": 2})) == {
        "id": "A",
        "amount": 2,
    }
    semantic, latency = s.log()
    assert semantic["changes"] == ["changed $.amount"] and not semantic["explicit"]
    assert latency["changes"] == ["answered 0.01 s late"]


def test_families_alone_make_a_session():
    assert FaultSettings().session(1, None) is None
    assert FaultSettings(faults=["latency"]).session(1, None) is not None


def test_families_end_to_end(tmp_path):
    log = run_task(
        tmp_path,
        agent="occubench/careful",
        roles={"simulator": "occubench/canned"},
        dataset="reference",
        with_plan=True,
        task_ids="1001,1002",
        faults="persistent,semantic,latency",
        fault_latency=0.001,
    )
    for sample in log.samples:
        plan = sample.store["Episode:fault_plan"]
        assert {e["family"] for e in plan["family_events"]} == {"persistent", "semantic", "latency"}
        families = {f["family"] for f in sample.store["Episode:fault_log"]}
        assert "persistent" in families and "semantic" in families
        score = sample.scores["occubench_scorer"]
        assert score.value == "I"  # a tool never came back (and semantic faults fool it)
    assert log.eval.metadata["config"]["faults"] == ["persistent", "semantic", "latency"]
