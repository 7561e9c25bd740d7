import json

from conftest import SCRIPTED_ROLES, replay, run_task

TRUE = json.dumps({"is_correct": True, "feedback": "ok"})
FALSE = json.dumps({"is_correct": False, "feedback": "wrong total"})


def scripted_judge(answers):
    """A mockllm judge: the n-th first request gets answers[n]; re-asks get junk."""
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    calls = []

    def judge(input, tools, tool_choice, config):
        reask = len(input) > 2
        text = "still not a verdict" if reask else answers[len([c for c in calls if not c])]
        calls.append(reask)
        out = ModelOutput.from_content("mockllm/model", text)
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    return get_model("mockllm/model", custom_outputs=judge), calls


def judged(tmp_path, *outputs, votes=3):
    roles = {"simulator": SCRIPTED_ROLES["simulator"], "verifier": replay(*outputs)}
    log = run_task(tmp_path, task_ids="11", roles=roles, votes=votes)
    return log.samples[0]


def test_majority_passes(tmp_path):
    sample = judged(tmp_path, TRUE, TRUE, FALSE)
    score = sample.scores["occubench_scorer"]
    assert score.value == "C" and score.explanation == "judge 2/3 correct"
    assert sorted(str(v["is_correct"]) for v in score.metadata["votes"]) == [
        "False",
        "True",
        "True",
    ]
    assert {v["feedback"] for v in score.metadata["votes"]} == {"ok", "wrong total"}


def test_tie_fails(tmp_path):
    score = judged(tmp_path, TRUE, FALSE, votes=2).scores["occubench_scorer"]
    assert score.value == "I" and score.metadata["judge_passed"] is False


def test_invalid_vote_is_reasked_then_counts_against(tmp_path):
    judge, calls = scripted_judge([TRUE, "looks fine to me", FALSE])
    roles = {"simulator": SCRIPTED_ROLES["simulator"], "verifier": judge}
    score = run_task(tmp_path, task_ids="11", roles=roles).samples[0].scores["occubench_scorer"]
    assert score.value == "I"
    assert [v["is_correct"] for v in score.metadata["votes"]].count(None) == 1
    assert calls.count(True) == 2  # the invalid vote was re-asked twice (default retries)


def test_all_invalid_votes_are_an_infrastructure_error(tmp_path):
    sample = judged(tmp_path, "PASS")
    assert sample.error is not None and "judge votes were invalid" in sample.error.message
    assert not sample.scores


def test_verifier_defaults_to_the_simulator_role(tmp_path):
    log = run_task(tmp_path, task_ids="11", roles={"simulator": replay('{"ok": 1}')})
    # the simulator answers the judge request with a non-verdict JSON: every vote invalid
    assert "judge votes were invalid" in log.samples[0].error.message


def test_judge_is_asked_k_times_with_the_rubric(tmp_path):
    seen = []

    def judge(input, tools, tool_choice, config):
        from inspect_ai.model import ModelOutput, ModelUsage

        seen.append(input[-1].text)
        out = ModelOutput.from_content("mockllm/model", TRUE)
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    from inspect_ai.model import get_model

    roles = {
        "simulator": SCRIPTED_ROLES["simulator"],
        "verifier": get_model("mockllm/model", custom_outputs=judge),
    }
    run_task(tmp_path, task_ids="11", roles=roles, votes=5)
    assert len(seen) == 5
    assert "Patient P-2231 has just arrived" in seen[0]  # the instruction
    assert "heart rate 128, systolic BP 84" in seen[0]  # the rubric
    assert '{"role": "call", "call": 1, "tool": "get_patient_vitals"' in seen[0]
