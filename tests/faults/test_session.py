"""Injection in the tool layer: what the agent sees, what the simulator keeps, the log."""

import asyncio
import json

from inspect_ai.model import ChatMessageTool

from conftest import run_task
from occubench.agent import episode_in
from occubench.faults import FaultEvent, FaultKind, FaultPlan, FaultSession, FaultSettings

REFERENCE = {"dataset": "reference", "with_plan": True}
CANNED = {"simulator": "occubench/canned"}


def plan(*events):
    return FaultPlan(
        env_mode="E3",
        fault_count=len(events),
        fault_duration=1,
        seed=0,
        task_id=1,
        expected_calls=8,
        events=[FaultEvent(source="E3", start_call=s, duration=d, kind=k) for s, d, k in events],
    )


def test_explicit_fault_then_clean_retry():
    session = FaultSession(plan((0, 2, FaultKind.HTTP_500)))
    assert session.before_call(0, "get", {})["error"]["status"] == 500
    assert session.before_call(1, "get", {}) is not None  # fd=2: the retry is still faulted
    assert session.before_call(2, "get", {}) is None  # transient: then clean
    assert asyncio.run(session.after_call(2, "get", {}, {"a": 1})) == {"a": 1}
    log = session.log()
    assert [f.call_index for f in log] == [0, 1] and all(f.explicit for f in log)
    assert log[0].retried_later is True and log[1].retried_later is True


def test_implicit_fault_degrades_only_the_agents_copy():
    session = FaultSession(plan((0, 1, FaultKind.TRUNCATED_LIST)))
    clean = {"items": [{"id": 1}, {"id": 2}, {"id": 3}, {"id": 4}]}
    assert session.before_call(0, "list", {}) is None
    seen = asyncio.run(session.after_call(0, "list", {}, clean))
    assert len(seen["items"]) in (1, 2) and len(clean["items"]) == 4
    (fault,) = session.log()
    assert fault.seen_by_agent == seen and fault.applied and not fault.retried_later


def test_settings_choose_the_engine():
    assert FaultSettings(env_mode="E0").session(1, None) is None
    assert FaultSettings(env_mode="E2", fault_engine="prompt").session(1, None) is None
    assert FaultSettings(env_mode="E2", fault_engine="prompt").simulator_rules()
    assert FaultSettings(env_mode="E2", fault_engine="code").simulator_rules() == ""
    session = FaultSettings(
        env_mode="E2", fault_count=3, fault_duration=1, fault_engine="code"
    ).session(7, 12)
    assert len(session.plan.events) == 3 and session.plan.expected_calls == 12


def test_log_matches_what_the_agent_saw_and_simulator_keeps_truth(tmp_path):
    log = run_task(
        tmp_path,
        agent="occubench/careful",
        roles=CANNED,
        env_mode="E3",
        task_ids="1001,1005",
        **REFERENCE,
    )
    for sample in log.samples:
        results = [m for m in sample.messages if isinstance(m, ChatMessageTool)]
        episode = episode_in(sample.store)
        faults, steps = episode.fault_log, episode.steps
        assert faults and len(results) == episode.tool_calls == len(steps)
        for fault in faults:
            assert json.loads(results[fault.call_index].text) == fault.seen_by_agent
            step = steps[fault.call_index]
            assert step.failed is fault.explicit
            if not fault.explicit and fault.applied:
                assert step.observation != fault.seen_by_agent  # history kept the truth
        assert episode.fault_plan is not None and episode.fault_plan.env_mode == "E3"
        assert sample.scores["occubench_scorer"].value == "C"


def fault_logs(log):
    return {s.id: episode_in(s.store).fault_log for s in log.samples}


def test_same_seed_same_faults_other_seed_other_faults(tmp_path):
    args = dict(agent="occubench/trusting", roles=CANNED, env_mode="E3", **REFERENCE)
    first = run_task(tmp_path / "a", seed=5, **args)
    second = run_task(tmp_path / "b", seed=5, **args)
    other = run_task(tmp_path / "c", seed=6, **args)
    assert fault_logs(first) == fault_logs(second)
    assert fault_logs(first) != fault_logs(other)
    assert [s.scores["occubench_scorer"].value for s in first.samples] == [
        s.scores["occubench_scorer"].value for s in second.samples
    ]


def test_prompt_engine_appends_rules_and_injects_nothing(tmp_path):
    log = run_task(
        tmp_path,
        agent="occubench/careful",
        roles=CANNED,
        env_mode="E1",
        fault_engine="prompt",
        task_ids="1001",
        **REFERENCE,
    )
    from inspect_ai.log import resolve_sample_attachments

    sample = resolve_sample_attachments(log.samples[0])
    episode = episode_in(sample.store)
    assert episode.fault_log == [] and episode.fault_plan is None
    system = next(e for e in sample.events if e.event == "model" and e.role == "simulator").input[0]
    assert "fault" in system.text.lower()


def test_real_model_path_with_faults_on_the_sample(tmp_path):
    """--env-mode E2 works with any Inspect model for agent and simulator."""
    log = run_task(tmp_path, env_mode="E2", fault_count=1, fault_duration=1)
    assert log.status == "success" and all(s.error is None for s in log.samples)
    assert any(episode_in(s.store).fault_log for s in log.samples)
