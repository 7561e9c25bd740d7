import json

import pytest
from inspect_ai.model import ChatMessageUser

from occubench.grading import paper_verifier_request, verifier_request
from occubench.scripted import BEHAVIOURS

PLAN = "The answer must report heart rate 128 and a wait of 10 minutes."
OBSERVED = '{"role": "observation", "call": 1, "tool": "get_vitals", "result": {"hr": 128}}'


def request(style: str, answer: str) -> str:
    if style == "paper":
        observed = "[Environment Observation] (from get_vitals): {}"
        trajectory = f"{observed}\n\n[Agent Response]: {answer}"
        return paper_verifier_request(
            scenario="Triage",
            initial_state={},
            state_description={},
            instruction="Report.",
            verification_plan=PLAN,
            trajectory=trajectory,
        )
    return verifier_request(
        instruction="Report.",
        initial_state={},
        state_description={},
        verification_plan=PLAN,
        trajectory=OBSERVED,
        final_answer=answer,
    )


def verdict(judge: str, text: str) -> bool:
    reply = BEHAVIOURS[judge]([ChatMessageUser(content=text)], [])
    return json.loads(reply.content)["is_correct"]


@pytest.mark.parametrize("style", ["paper", "occubench"])
def test_the_rubric_judge_wants_every_number_of_the_plan(style):
    assert verdict("rubric-judge", request(style, "Heart rate 128; wait at most 10 minutes."))
    assert not verdict("rubric-judge", request(style, "Heart rate 128; wait at most 100 minutes."))
    assert not verdict("rubric-judge", request(style, "Heart rate 128."))
    assert verdict("scripted-judge", request(style, "Heart rate 128."))  # the lenient one
