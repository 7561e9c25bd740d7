"""An agent program's bridged generations, read from a logged store into sums by wire."""

from occubench.results import WireTokens
from occubench.results._runs import _wire_tokens
from occubench.serving import served_calls

CALL = {"wire": "openai_chat", "streamed": True, "input_tokens": 10, "output_tokens": 2}


def test_calls_are_summed_by_wire_and_an_unreadable_record_is_named():
    store = {
        "ServedSession:calls": [
            CALL,
            {**CALL, "streamed": False, "input_tokens": 5},
            {**CALL, "wire": "anthropic"},
            {**CALL, "wire": "telepathy"},
        ]
    }
    calls, unread = served_calls(store)
    assert len(calls) == 3 and len(unread) == 1 and unread[0].startswith("calls[3]: ")
    wires, unread = _wire_tokens(store)
    assert wires == [
        WireTokens(wire="anthropic", calls=1, streamed=1, input_tokens=10, output_tokens=2),
        WireTokens(wire="openai_chat", calls=2, streamed=1, input_tokens=15, output_tokens=4),
    ]
    assert len(unread) == 1
    assert _wire_tokens({}) == ([], [])
