"""Completions of a text model rolled out through occubench episodes into rewards."""

from __future__ import annotations

import json

import anyio
import pytest

from occubench.env import make_episode
from occubench.grading import CheckResult, Grade
from occubench.training import (
    CALL_FORMAT,
    RewardRule,
    completion_prompt,
    parse_completion,
    reward_of,
    roll_out_completion,
    rollout_rewards,
)

TRIAGE = 1001
AIRFLOW = 1002
ANSWERS = {
    TRIAGE: "Heart rate 128, systolic BP 84. Assign bed ED-11, cleaned 6 minutes ago. "
    "ESI 2 allows a wait of at most 10 minutes.",
    AIRFLOW: "Methane 0.62% and airflow 41.5 m3/s. Last fan BF-7 runs at 1460 rpm. "
    "Re-entry methane limit: 1.0%.",
}


def episode(task_id: int):
    return make_episode("reference", task_id, simulator="occubench/canned", protocol="occubench")


def block(tool: str, arguments: object) -> str:
    return "<tool_call>" + json.dumps({"name": tool, "arguments": arguments}) + "</tool_call>"


def right_calls(task_id: int) -> list[str]:
    """The task's calls as a completion writes them (its env's known calls)."""
    return [block(c.tool, c.arguments) for c in episode(task_id).env.canned_observations]


def test_a_completion_reads_as_calls_in_order_and_the_answer_around_them():
    text = (
        "Checking. "
        + block("get_patient_vitals", {"patient_id": "P-2231"})
        + "\n<tool_call>not json</tool_call>"
        + block("list_open_beds", '{"unit": "ED"}')
        + '<tool_call>[1, 2]</tool_call><tool_call>{"arguments": {}}</tool_call>'
        + "\nThe answer."
    )
    parsed = parse_completion(text)
    assert [(c.tool, c.arguments) for c in parsed.calls] == [
        ("get_patient_vitals", {"patient_id": "P-2231"}),
        ("list_open_beds", '{"unit": "ED"}'),
    ]
    assert parsed.answer == "Checking. The answer." and parsed.unreadable_calls == 3
    assert parse_completion("no calls").calls == []


def test_given_the_tools_json_objects_naming_one_read_as_calls_without_blocks():
    tools = ["get_patient_vitals", "list_open_beds"]
    vitals = json.dumps({"name": "get_patient_vitals", "arguments": {"patient_id": "P-2231"}})
    beds = json.dumps({"name": "list_open_beds", "arguments": {"unit": "ED"}}, indent=2)
    fenced = f"Checking.\n```json\n{vitals}\n```\n```\n{beds}\n```\nThe answer."
    parsed = parse_completion(fenced, tools)
    assert [c.tool for c in parsed.calls] == tools
    assert parsed.calls[0].arguments == {"patient_id": "P-2231"}
    assert parsed.answer == "Checking. The answer." and parsed.unreadable_calls == 0
    bare = parse_completion(f"  {vitals} then the answer", tools)
    assert [c.tool for c in bare.calls] == tools[:1] and bare.answer == "then the answer"
    cut = parse_completion(f"```json\n{vitals}\n", tools)  # the token cap took the fence
    assert [c.tool for c in cut.calls] == tools[:1] and cut.answer == ""
    shown = '```json\n{"name": "rm_rf", "arguments": {}}\n```\n{"name": "list_open_beds"}'
    assert parse_completion(shown, tools).calls == []  # an unknown tool; a bare object
    assert parse_completion(shown, tools).answer == shown  # after a fence: the answer's
    assert parse_completion(f"```json\n{vitals}\n```").calls == []  # no tools: blocks only
    both = block("list_open_beds", {}) + f"```json\n{vitals}\n```"
    assert [c.tool for c in parse_completion(both, tools).calls] == ["list_open_beds"]
    assert parse_completion(f"```json\n{vitals[:-3]}\n```", tools).calls == []  # cut JSON


def test_the_prompt_shows_the_task_the_tools_and_the_call_format():
    start = episode(TRIAGE).opening()
    prompt = completion_prompt(start)
    assert start.instruction in prompt and CALL_FORMAT in prompt
    assert prompt.startswith(start.system_prompt)
    assert all(json.dumps(t.name) in prompt for t in start.tools)


def test_right_calls_and_answer_pass_and_partial_work_earns_partial_credit():
    complete = "".join(right_calls(TRIAGE)) + ANSWERS[TRIAGE]
    one_call = right_calls(TRIAGE)[0] + "Done."

    async def go():
        return (
            await roll_out_completion(episode(TRIAGE), complete),
            await roll_out_completion(episode(TRIAGE), complete, RewardRule.CHECKS),
            await roll_out_completion(episode(TRIAGE), one_call),
            await roll_out_completion(episode(TRIAGE), one_call, RewardRule.CHECKS),
        )

    passed, passed_checks, partial, partial_checks = anyio.run(go)
    assert passed.grade.passed and passed.reward == passed_checks.reward == 1.0
    assert [s.call_index for s in passed.steps] == [0, 1, 2]
    assert "128" in passed.steps[0].observation  # the simulator answered the call
    assert not partial.grade.passed and partial.reward == 0.0
    assert partial_checks.reward == 0.25  # one tool_called check of four
    assert partial.task_id == TRIAGE and len(partial.steps) == 1


def test_the_reward_function_rewards_each_completion_of_a_mixed_batch():
    reward = rollout_rewards(episode, RewardRule.CHECKS)
    completions = [
        "".join(right_calls(TRIAGE)) + ANSWERS[TRIAGE],
        "".join(right_calls(AIRFLOW)) + ANSWERS[AIRFLOW],
        "".join(right_calls(TRIAGE)) + ANSWERS[TRIAGE],  # the other task's calls
        block("no_such_tool", {}) + "I guess.",
    ]
    task_ids = [TRIAGE, AIRFLOW, AIRFLOW, TRIAGE]

    async def go():
        return await reward(
            prompts=["p"] * 4, completions=completions, task_id=task_ids, trainer_state=None
        )

    assert anyio.run(go) == [1.0, 1.0, 0.0, 0.0]
    assert reward.__name__ == "occubench"  # the name TRL logs the reward under
    with pytest.raises(ValueError, match="task_id column"):
        anyio.run(lambda: reward(prompts=["p"], completions=["a", "b"], task_id=[TRIAGE]))


def test_the_reward_rules_read_the_verdict_and_the_checks():
    def grade(*passed: bool, **fields) -> Grade:
        checks = [CheckResult(check={}, passed=p, detail="") for p in passed]
        return Grade(passed=all(passed), checks=checks or None, **fields)

    assert reward_of(grade(True, False, True, True), RewardRule.CHECKS) == 0.75
    assert reward_of(grade(True, False, True, True)) == 0.0
    assert reward_of(grade(), RewardRule.CHECKS) == 1.0  # no checks: the verdict
    steered = grade(True, True, exploit_suspected=True, exploit_zeroed=True)
    assert reward_of(steered.model_copy(update={"passed": False}), RewardRule.CHECKS) == 0.0
