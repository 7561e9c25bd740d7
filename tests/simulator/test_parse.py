import asyncio

import pytest
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from occubench.simulator import (
    ObservationParseError,
    OccubenchLayout,
    PaperLayout,
    Simulator,
    SimulatorError,
    parse_observation,
)

CUT_OFF = '{"units": [{"id": "A1", "rent": 1200}, {"id": "A2", "re'
"""A reply cut at the token limit: its first inner object is complete, the reply is not."""

FRAGMENTS = {
    "cut-off-in-tags": f"<observation>{CUT_OFF}",
    "cut-off-closed": f"<observation>{CUT_OFF}</observation>",
    "cut-off-bare": CUT_OFF,
    "array-in-tags": '<observation>[{"id": "A1"}, {"id": "A2"}]</observation>',
    "tag-in-a-value": '<observation>{"note": "<observation>{}</observation>"}</observation>',
    "two-blocks": '<observation>{"a": 1}</observation> then <observation>{"a": 2}</observation>',
    "object-in-prose": 'Here you go: {"a": 1} -- done',
    "two-objects": '{"a": 1} {"b": 2}',
    "two-fences": '```json\n{"a": 1}\n```\n```json\n{"a": 2}\n```',
}


@pytest.mark.parametrize(
    "text",
    [
        '<observation>{"a": 1}</observation>',
        'Reasoning first.\n<observation>\n{"a": 1}\n</observation>',
        '```json\n{"a": 1}\n```',
        'The result:\n```json\n{"a": 1}\n```',
        '{"a": 1}',
        '<observation>```json\n{"a": 1}\n```</observation>',
        '<OBSERVATION> {"a": 1} </OBSERVATION>',
    ],
)
def test_accepted_forms(text):
    assert parse_observation(text) == {"a": 1}


def test_a_tag_inside_a_whole_object_is_just_text():
    text = '<observation>{"note": "use &lt;observation&gt; tags"}</observation>'
    assert parse_observation(text) == {"note": "use &lt;observation&gt; tags"}


@pytest.mark.parametrize("text", ["", "no json here", "[1, 2, 3]", '"a string"', "{broken", "null"])
def test_rejected(text):
    with pytest.raises(ObservationParseError):
        parse_observation(text)


@pytest.mark.parametrize("text", list(FRAGMENTS.values()), ids=list(FRAGMENTS))
def test_fragments_are_refused_with_the_problem_named(text):
    with pytest.raises(ObservationParseError) as refused:
        parse_observation(text)
    reason = str(refused.value)
    assert any(
        word in reason for word in ("cut off", "not closed", "array", "one <observation>", "one")
    )


def test_cut_off_replies_say_so():
    for text in (FRAGMENTS["cut-off-in-tags"], FRAGMENTS["cut-off-bare"]):
        with pytest.raises(ObservationParseError, match="cut off"):
            parse_observation(text)


def recorded(answers):
    prompts = []

    def fn(input, tools, tool_choice, config):
        prompts.append([m.text for m in input])
        out = ModelOutput.from_content("mockllm/model", answers.pop(0))
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    return get_model("mockllm/model", custom_outputs=fn), prompts


@pytest.mark.parametrize("name", list(FRAGMENTS))
def test_a_fragment_is_reasked_and_counts_toward_the_limit(name):
    model, prompts = recorded([FRAGMENTS[name], '<observation>{"units": []}</observation>'])
    sim = Simulator(model, "S", layout=OccubenchLayout(), max_retries=1)
    assert asyncio.run(sim.observe("list_units", {})).value == {"units": []}
    assert sim.steps[0].attempts == 2
    assert prompts[1][-2] == FRAGMENTS[name] and "not usable" in prompts[1][-1]

    model, _ = recorded([FRAGMENTS[name]] * 2)
    sim = Simulator(model, "S", layout=OccubenchLayout(), max_retries=1)
    with pytest.raises(SimulatorError, match="after 2 attempts"):
        asyncio.run(sim.observe("list_units", {}))


def test_the_paper_layout_keeps_the_releases_reading():
    """The release reads any JSON value but null in its tags (or a fence): an array too."""
    layout = PaperLayout()
    value, shown = layout.read("<predicted_observation>[1, 2]</predicted_observation>")
    assert value == [1, 2] and shown == "[1, 2]"
    with pytest.raises(ObservationParseError):
        layout.read(f"<predicted_observation>{CUT_OFF}</predicted_observation>")
    with pytest.raises(ObservationParseError):
        layout.read("Sure: here it is")
