import pytest

from occubench.grading import VerdictParseError, Vote, majority, parse_verdict


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


def test_last_verdict_object_is_the_judges():
    text = (
        'The agent wrote {"is_correct": true}. My verdict: {"is_correct": false, "feedback": "no"}'
    )
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
