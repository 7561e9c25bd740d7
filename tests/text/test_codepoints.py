import json

import pytest
from inspect_ai.model import ChatMessageAssistant, ModelOutput
from inspect_ai.tool import ToolCall

from occubench.text._codepoints import clean_json, clean_output, escape_invalid, json_text, loads

HALF = "\ud83d"
SHOWN = "\\ud83d"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"J{HALF} Doe", f"J{SHOWN} Doe"),
        ("J\udc00 Doe", "J\\udc00 Doe"),
        ("\ud83d\ude00", "\U0001f600"),  # a pair held as two code points is the character
        ("\ude00\ud83d", "\\ude00\\ud83d"),  # a low then a high surrogate is no pair
        ("plain \U0001f600 text", "plain \U0001f600 text"),
    ],
)
def test_escape_invalid(text, expected):
    assert escape_invalid(text) == expected
    escape_invalid(text).encode("utf-8")  # always writable


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"n": "J\\ud83d Doe"}', {"n": f"J{SHOWN} Doe"}),  # escaped in the JSON text
        (f'{{"n": "J{HALF} Doe"}}', {"n": f"J{SHOWN} Doe"}),  # raw in the JSON text
        ('{"n": "\\ud83d\\ude00"}', {"n": "\U0001f600"}),  # an escaped pair is the character
        ('{"n": "x\\\\ud83d"}', {"n": "x\\ud83d"}),  # an escaped backslash stays one
        ('{"n": "\\\\\\ud83d"}', {"n": f"\\{SHOWN}"}),  # a backslash, then a lone escape
        ('{"J\\ud83d": 1}', {f"J{SHOWN}": 1}),  # keys too
        ('["\\u00e9", "\\n"]', ["\u00e9", "\n"]),  # other escapes decode as JSON says
    ],
)
def test_loads_never_gives_a_surrogate(text, expected):
    value = loads(text)
    assert value == expected
    json.dumps(value, ensure_ascii=False).encode("utf-8")


def test_json_text_keeps_positions_meaningful():
    text = 'say {"a": "\\ud83d"} then'
    prepared = json_text(text)
    value, end = json.JSONDecoder().raw_decode(prepared, prepared.index("{"))
    assert value == {"a": SHOWN} and prepared[end:] == " then"


def test_clean_json_returns_the_same_value_when_clean():
    value = {"a": ["b", {"c": 1}]}
    assert clean_json(value) is value
    assert clean_json({f"k{HALF}": [f"v{HALF}"]}) == {f"k{SHOWN}": [f"v{SHOWN}"]}


def test_clean_output_cleans_text_and_tool_calls_in_place():
    message = ChatMessageAssistant(
        content=f"J{HALF} Doe",
        tool_calls=[ToolCall(id="1", function="find", arguments={"name": f"J{HALF}"})],
    )
    output = ModelOutput.from_message(message)
    assert clean_output(output) is output
    assert output.completion == f"J{SHOWN} Doe" and output.message.text == f"J{SHOWN} Doe"
    assert output.message.tool_calls[0].arguments == {"name": f"J{SHOWN}"}
    assert output.message.id == message.id
    output.model_dump_json()  # serializable now
