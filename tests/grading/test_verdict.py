import asyncio

import pytest
from inspect_ai.model import ChatMessageUser, ModelOutput, ModelUsage, get_model

from occubench.grading import VerdictParseError, Vote, ask_verdict, majority, parse_verdict


def test_plain_json():
    vote = parse_verdict('{"is_correct": true, "feedback": "all steps verified"}')
    assert vote.is_correct is True and vote.feedback == "all steps verified"


def test_fenced_and_embedded():
    assert (
        parse_verdict('Reasons...\n```json\n{"is_correct": false, "feedback": "x"}\n```').is_correct
        is False
    )
    assert (
        parse_verdict('I think {"is_correct": false, "feedback": "y"} is right').is_correct is False
    )


def test_the_last_verdict_in_text_order_is_the_vote():
    text = (
        'Draft: {"is_correct": false, "feedback": "first"}\n'
        'Final: {"is_correct": false, "feedback": "last"}'
    )
    assert parse_verdict(text).feedback == "last"
    fenced_then_bare = (
        '```json\n{"is_correct": true, "feedback": "a"}\n```\n{"is_correct": true, "feedback": "b"}'
    )
    assert parse_verdict(fenced_then_bare).feedback == "b"  # a fence is not preferred


@pytest.mark.parametrize(
    "text",
    [
        'Draft:\n```json\n{"is_correct": true}\n```\nFinal: {"is_correct": false}',
        'The agent wrote {"is_correct": true}. My verdict: {"is_correct": false, "feedback": "no"}',
        '{"is_correct": false, "feedback": "no"}\n```json\n{"is_correct": true}\n```',
    ],
    ids=["fenced-draft-then-final", "quoted-then-own", "own-then-fenced"],
)
def test_verdicts_that_disagree_are_unreadable(text):
    with pytest.raises(VerdictParseError, match="disagree"):
        parse_verdict(text)


def test_an_object_inside_the_verdict_is_part_of_it():
    text = '{"is_correct": false, "feedback": "no", "quoted": {"is_correct": true}}'
    assert parse_verdict(text).is_correct is False


@pytest.mark.parametrize(
    "text",
    ["", "CORRECT", '{"is_correct": "yes"}', '{"verdict": true}', "[true]", '{"is_correct": 1}'],
)
def test_not_a_verdict(text):
    with pytest.raises(VerdictParseError):
        parse_verdict(text)


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([True, True, False], True),
        ([True, False, False], False),
        ([True, False], False),  # tie fails
        ([True, True, None], True),
        ([True, None, None], False),  # invalid votes count against
        ([True], True),
    ],
)
def test_majority(values, expected):
    assert majority([Vote(is_correct=v) for v in values]) is expected


def test_disagreeing_verdicts_are_reasked_like_an_unreadable_vote():
    answers = [
        'Draft:\n```json\n{"is_correct": true}\n```\nFinal: {"is_correct": false}',
        '{"is_correct": false, "feedback": "one verdict"}',
    ]
    prompts = []

    def judge(input, tools, tool_choice, config):
        prompts.append([m.text for m in input])
        out = ModelOutput.from_content("mockllm/model", answers.pop(0))
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    model = get_model("mockllm/model", custom_outputs=judge)
    vote = asyncio.run(
        ask_verdict(model, [ChatMessageUser(content="judge")], retries=1, reask="ONE VERDICT")
    )
    assert vote.is_correct is False and vote.feedback == "one verdict"
    assert len(prompts) == 2 and prompts[1][-1] == "ONE VERDICT"
