from inspect_ai.model import ChatMessageTool

from conftest import SCRIPTED_ROLES, replay, run_task
from occubench.agent import episode_in


def tool_messages(sample):
    return [m for m in sample.messages if isinstance(m, ChatMessageTool)]


def test_bad_arguments_never_reach_the_simulator(tmp_path):
    agent = replay({"tool": "get_patient_vitals", "arguments": {"wrong": 1}}, "I give up.")
    log = run_task(tmp_path, agent=agent, task_ids="11")
    sample = log.samples[0]
    (msg,) = tool_messages(sample)
    assert msg.error is not None and msg.error.type == "parsing"
    assert "patient_id" in msg.error.message
    episode = episode_in(sample.store)
    assert episode.tool_calls == 0 and episode.steps == []
    assert "simulator" not in sample.role_usage


def test_unknown_tool_is_an_error_observation(tmp_path):
    agent = replay({"tool": "launch_rocket", "arguments": {}}, "Done.")
    sample = run_task(tmp_path, agent=agent, task_ids="11").samples[0]
    (msg,) = tool_messages(sample)
    assert msg.error is not None and "launch_rocket" in msg.error.message
    assert episode_in(sample.store).tool_calls == 0
    assert sample.scores["occubench_scorer"].metadata["stop_reason"] == "answered"


def test_tool_call_limit_stops_the_loop(tmp_path):
    agent = replay({"tool": "get_patient_vitals", "arguments": {"patient_id": "P-2231"}})
    sample = run_task(tmp_path, agent=agent, task_ids="11", max_tool_calls=3).samples[0]
    assert sample.error is None
    episode = episode_in(sample.store)
    assert episode.tool_calls == 3
    assert episode.stop_reason == "tool_call_limit"
    score = sample.scores["occubench_scorer"]
    assert score.value == "I" and score.answer == ""  # no final answer was given


def test_agent_sees_scenario_and_fixed_date(tmp_path):
    sample = run_task(tmp_path, task_ids="26", date="2031-02-03").samples[0]
    system = sample.messages[0].text
    assert "2031-02-03" in system and sample.metadata["scenario"] in system


def test_with_plan_adds_the_solution_plan(release_copy, tmp_path):
    import json

    from occubench.dataset import TASKS_FILE

    path = release_copy / TASKS_FILE
    records = [json.loads(line) for line in path.read_text().splitlines()]
    records[0]["solution_plan"] = "1. Call get_patient_vitals for P-2231."
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    task_id = str(records[0]["task_id"])
    plain = run_task(tmp_path / "a", dataset=str(release_copy), task_ids=task_id).samples[0]
    planned = run_task(
        tmp_path / "b", dataset=str(release_copy), task_ids=task_id, with_plan=True
    ).samples[0]
    assert "A plan that solves" not in plain.messages[1].text
    assert "A plan that solves this task:\n1. Call get_patient_vitals" in planned.messages[1].text


def test_simulator_without_json_is_an_infrastructure_error(tmp_path):
    log = run_task(
        tmp_path,
        task_ids="11,24",
        roles={"simulator": replay("I am not JSON"), "verifier": SCRIPTED_ROLES["verifier"]},
        simulator_retries=1,
    )
    assert log.status == "success"  # the run itself completes
    for sample in log.samples:
        assert sample.error is not None and "no usable observation" in sample.error.message
        assert not sample.scores  # never scored as an agent failure
