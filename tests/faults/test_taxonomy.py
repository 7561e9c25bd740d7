"""Fault families beyond E0-E3: placement, injection, logging."""

import asyncio
import json

import pytest
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from conftest import run_task
from occubench.agent import episode_in
from occubench.config import RunConfig
from occubench.dataset import PlanStep
from occubench.faults import (
    EnvMode,
    FaultEvent,
    FaultFamily,
    FaultSession,
    FaultSettings,
    Scope,
    SimulatorAccess,
    make_fault_plan,
)

CRITICAL = [
    PlanStep(tool="get_a", arguments={"id": "A"}),
    PlanStep(tool="list_b"),
    PlanStep(tool="get_c", arguments={"id": "C"}),
]


def context(**kw):
    base = dict(
        seed=0,
        task_id=7,
        env_mode=EnvMode.E0,
        fault_count=2,
        fault_duration=2,
        expected_calls=8,
        tools=["get_a", "list_b", "get_c"],
        critical_calls=CRITICAL,
        latency_seconds=0.01,
    )
    return {**base, **kw}


def make_family_events(families, ctx):
    return make_fault_plan(**ctx, families=families).events


def simulator_model(rewrite):
    """A scripted simulator role that answers a semantic-fault request with ``rewrite``."""

    def answer(input, tools, tool_choice, config):
        observation = json.loads(input[-1].text)["observation"]
        out = ModelOutput.from_content(
            "mockllm/model", f"<observation>{json.dumps(rewrite(observation))}</observation>"
        )
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    return SimulatorAccess(get_model("mockllm/model", custom_outputs=answer), retries=0)


def session(*events, corrupter=None):
    plan = make_fault_plan(seed=0, task_id=7, env_mode=EnvMode.E0, fault_count=0, fault_duration=1)
    plan = plan.model_copy(update={"events": list(events)})
    return FaultSession(plan, simulator=corrupter)


def test_parse_families():
    def parse_families(value):
        return RunConfig(faults=value).faults

    assert parse_families("persistent, latency") == [FaultFamily.PERSISTENT, FaultFamily.LATENCY]
    assert parse_families(None) == [] and parse_families(["semantic"]) == [FaultFamily.SEMANTIC]
    with pytest.raises(ValueError, match="unknown fault type 'flood'.*register_fault_type"):
        parse_families("flood")


def test_family_events_are_seeded_and_shaped():
    families = list(FaultFamily)
    events = make_family_events(families, context())
    assert events == make_family_events(families, context())
    assert events != make_family_events(families, context(seed=1))
    by = {f: [e for e in events if e.source == f.value] for f in families}
    (down,) = by[FaultFamily.PERSISTENT]
    assert down.tool in {c.tool for c in CRITICAL} and down.duration is None
    assert len(by[FaultFamily.TARGETED]) == 2
    assert {e.kind.is_explicit for e in by[FaultFamily.TARGETED]} == {True, False}
    for family in (FaultFamily.CASCADING, FaultFamily.SEMANTIC, FaultFamily.LATENCY):
        assert [e.duration for e in by[family]] == [2, 2]
    assert all(e.delay_seconds == 0.01 for e in by[FaultFamily.LATENCY])


def test_persistent_tool_stays_down_others_work():
    s = session(
        FaultEvent(
            source="persistent", scope=Scope.FROM_CALL, tool="get_a", start_call=1, duration=None
        )
    )
    assert s.before_call(0, "get_a", {"id": "A"}) is None
    for i in range(1, 6):
        assert s.before_call(i, "get_a", {"id": "A"})["error"]["code"] == "SERVICE_DOWN"
    assert s.before_call(6, "list_b", {}) is None
    assert {f.family for f in s.log()} == {"persistent"} and len(s.log()) == 5


def test_cascading_fails_every_tool_in_its_window():
    s = session(FaultEvent(source="cascading", start_call=1, duration=2))
    results = [
        s.before_call(i, tool, {}) for i, tool in enumerate(["get_a", "list_b", "get_c", "get_a"])
    ]
    assert results[0] is None and results[3] is None
    assert results[1]["error"]["code"] == results[2]["error"]["code"] == "DEPENDENCY_FAILURE"


def test_targeted_hits_only_matching_calls_fd_times():
    s = session(
        FaultEvent(
            source="targeted",
            scope=Scope.MATCHING,
            tool="get_a",
            arguments={"id": "A"},
            duration=2,
            kind="http_500",
        )
    )
    assert s.before_call(0, "get_a", {"id": "B"}) is None  # other arguments: not critical
    assert s.before_call(1, "get_a", {"id": "A"})["error"]["status"] == 500
    assert s.before_call(2, "list_b", {}) is None
    assert s.before_call(3, "get_a", {"id": "A"})["error"]["status"] == 500
    assert s.before_call(4, "get_a", {"id": "A"}) is None  # used up


def test_targeted_implicit_degrades():
    s = session(
        FaultEvent(
            source="targeted",
            scope=Scope.MATCHING,
            tool="list_b",
            arguments={},
            duration=1,
            kind="truncated_list",
        )
    )
    assert s.before_call(0, "list_b", {}) is None
    seen = asyncio.run(s.after_call(0, "list_b", {}, {"items": [{"id": i} for i in range(5)]}))
    assert len(seen["items"]) <= 2
    (fault,) = s.log()
    assert fault.family == "targeted" and fault.kind == "truncated_list"


def test_semantic_and_latency_change_only_what_they_say():
    def corrupt(observation):
        return {**observation, "amount": observation["amount"] * 100}

    s = session(
        FaultEvent(source="semantic", start_call=0, duration=1),
        FaultEvent(source="latency", start_call=1, duration=1, delay_seconds=0.01),
        corrupter=simulator_model(corrupt),
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
    assert semantic.changes == ["changed $.amount"] and not semantic.explicit
    assert latency.changes == ["answered 0.01 s late"]


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
        episode = episode_in(sample.store)
        assert episode.fault_plan is not None
        events = episode.fault_plan.events
        assert {e.source for e in events} == {"persistent", "semantic", "latency"}
        families = {f.family for f in episode.fault_log}
        assert "persistent" in families and "semantic" in families
        score = sample.scores["occubench_scorer"]
        assert score.value == "I"  # a tool never came back (and semantic faults fool it)
    assert log.eval.metadata["config"]["faults"] == ["persistent", "semantic", "latency"]
