"""The episode store holds typed records; the log holds the same JSON as when it held dumps."""

import json
import zipfile

from inspect_ai.util import Store
from pydantic_core import to_json, to_jsonable_python

from conftest import run_task
from occubench.agent import Episode, episode_in
from occubench.dataset import PlanStep
from occubench.faults import EnvMode, FaultFamily, FaultPlan, InjectedFault, make_fault_plan
from occubench.simchecks import CheckFailure, KeptAnswer, SimCheck, SimCheckKind
from occubench.simulator import SimStep

PLAN = make_fault_plan(
    seed=3,
    task_id=7,
    env_mode=EnvMode.E3,
    fault_count=2,
    fault_duration=1,
    families=[FaultFamily.LATENCY, FaultFamily.TARGETED],
    tools=["read"],
    critical_calls=[PlanStep(tool="read", arguments={"id": "A-1"})],
)
FAULTS = [
    InjectedFault(
        call_index=0,
        tool="read",
        kind="http_500",
        explicit=True,
        applied=True,
        changes=["error returned; the simulator was not called"],
        seen_by_agent={"error": {"code": 500, "detail": None}},
        retried_later=True,
    ),
    InjectedFault(
        call_index=1,
        tool="read",
        kind="truncated_list",
        planned_kind="stale_values",
        family=FaultFamily.TARGETED,
        explicit=False,
        applied=True,
        changes=["cut $.items to 1"],
        seen_by_agent={"items": [1], "rate": float("nan")},
    ),
]
STEPS = [
    SimStep(tool="read", arguments={"id": "A-1"}, observation={"error": 500}, failed=True),
    SimStep(
        tool="read",
        arguments={"id": "A-1"},
        observation={"items": [1, 2], "note": None, "high": float("inf"), "low": float("nan")},
        text='{"items": [1, 2], "note": null}',
        attempts=2,
        check=SimCheck(
            failures=[CheckFailure(kind=SimCheckKind.SCHEMA, detail="no items")],
            reask_model="occubench/canned",
            reask_failures=[],
            kept=KeptAnswer.REASK,
            rejected={"items": [], "low": float("-inf")},
            suspect=False,
        ),
    ),
]
DUMPS = {
    "Episode:steps": [s.model_dump(exclude_none=True) for s in STEPS],
    "Episode:fault_plan": PLAN.model_dump(mode="json"),
    "Episode:fault_log": [f.model_dump(mode="json") for f in FAULTS],
}
"""The store as occubench filled it when these fields held dumps."""


def logged(store):
    """A store as Inspect writes it to the log (None fields of models left out)."""
    return to_json(to_jsonable_python(store, exclude_none=True), exclude_none=True).decode()


def test_typed_records_are_logged_as_their_dumps_were():
    episode = Episode(store=Store())
    episode.steps, episode.fault_plan, episode.fault_log = STEPS, PLAN, FAULTS
    typed = {key: episode.store.get(key) for key in DUMPS}
    assert isinstance(typed["Episode:fault_plan"], FaultPlan)
    assert logged(typed) == logged(DUMPS)
    written = json.loads(logged(typed))
    event = written["Episode:fault_plan"]["events"][0]
    assert "tool" in event and event["tool"] is None  # a plan's nulls are kept, as dumped
    observation = written["Episode:steps"][1]["observation"]
    assert observation["high"] == float("inf") and observation["low"] != observation["low"]
    assert written["Episode:steps"][1]["check"]["rejected"]["low"] == float("-inf")
    assert written["Episode:fault_log"][1]["seen_by_agent"]["rate"] is None  # as dumped


def test_a_store_logged_before_reads_as_typed_records():
    store = json.loads(logged(DUMPS))  # as a log written with dumps is read back
    episode = episode_in(store)
    assert [s.model_dump_json() for s in episode.steps] == [s.model_dump_json() for s in STEPS]
    assert episode.fault_plan == PLAN  # NaN: the dumps wrote null, read back as None
    assert [f.model_dump(mode="json") for f in episode.fault_log] == DUMPS["Episode:fault_log"]
    assert episode.fault_log[1].family is FaultFamily.TARGETED
    check = episode.steps[1].check
    assert check is not None and check.kept is KeptAnswer.REASK


def test_a_run_logs_each_record_as_its_dump(tmp_path):
    log = run_task(
        tmp_path,
        agent="occubench/careful",
        roles={"simulator": "occubench/canned"},
        dataset="reference",
        with_plan=True,
        task_ids="1001",
        env_mode="E3",
        faults="latency",
        fault_latency=0.001,
    )
    (sample,) = log.samples
    with zipfile.ZipFile(log.location) as archive:
        raw = json.loads(archive.read(f"samples/{sample.id}_epoch_{sample.epoch}.json"))["store"]
    episode = episode_in(raw)
    assert episode.fault_plan is not None and episode.fault_log and episode.steps
    assert raw["Episode:fault_plan"] == episode.fault_plan.model_dump(mode="json")
    assert raw["Episode:fault_log"] == [f.model_dump(mode="json") for f in episode.fault_log]
    assert raw["Episode:steps"] == [
        s.model_dump(mode="json", exclude_none=True) for s in episode.steps
    ]
