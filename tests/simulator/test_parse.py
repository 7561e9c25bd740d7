import pytest

from occubench.simulator import ObservationParseError, parse_observation


@pytest.mark.parametrize(
    "text",
    [
        '<observation>{"a": 1}</observation>',
        'Reasoning first.\n<observation>\n{"a": 1}\n</observation>',
        '```json\n{"a": 1}\n```',
        '{"a": 1}',
        'Here you go: {"a": 1} -- done',
        '<observation>```json\n{"a": 1}\n```</observation>',
    ],
)
def test_accepted_forms(text):
    assert parse_observation(text) == {"a": 1}


def test_last_tag_wins():
    text = '<observation>{"a": 1}</observation> then <observation>{"a": 2}</observation>'
    assert parse_observation(text) == {"a": 2}


@pytest.mark.parametrize("text", ["", "no json here", "[1, 2, 3]", '"a string"', "{broken"])
def test_rejected(text):
    with pytest.raises(ObservationParseError):
        parse_observation(text)
