from pydantic import TypeAdapter

from occubench.dataset import Check
from occubench.grading import ToolCall, run_checks

CALLS = [
    ToolCall(tool="get_unit", arguments={"unit_id": "U1", "verbose": True}),
    ToolCall(tool="update_unit", arguments={"unit_id": "u1 ", "rent": 1200.0}),
    ToolCall(tool="get_unit", arguments={"unit_id": "U2"}),
]


def checks(*raw):
    return [TypeAdapter(Check).validate_python(c) for c in raw]


def test_passing_checks():
    results = run_checks(
        checks(
            {
                "kind": "tool_called",
                "tool": "update_unit",
                "arguments": {"unit_id": "U1", "rent": 1200},
            },
            {"kind": "tool_not_called", "tool": "delete_unit"},
            {"kind": "order", "tools": ["get_unit", "update_unit"]},
            {"kind": "answer_contains", "values": ["$1,200", "approved"]},
            {"kind": "answer_excludes", "values": ["rejected"]},
        ),
        CALLS,
        "Rent set to $1,200; request APPROVED.",
    )
    assert all(r.passed for r in results), [r.detail for r in results]


def test_failing_checks():
    results = run_checks(
        checks(
            {"kind": "tool_called", "tool": "update_unit", "arguments": {"rent": 900}},
            {"kind": "tool_not_called", "tool": "get_unit"},
            {"kind": "order", "tools": ["update_unit", "get_unit"]},
            {"kind": "order", "tools": ["get_unit", "close_case"]},
            {"kind": "answer_contains", "values": ["denied"]},
            {"kind": "answer_excludes", "values": ["approved"]},
        ),
        CALLS,
        "Approved.",
    )
    assert [r.passed for r in results] == [False] * 6
    assert "lacks ['denied']" in results[4].detail


def test_state_checks():
    state = {"orders": [{"id": "A1", "status": "shipped"}]}
    ok, wrong, absent = run_checks(
        checks(
            {"kind": "state_equals", "path": "/orders/0/status", "value": "shipped"},
            {"kind": "state_equals", "path": "/orders/0/status", "value": "open"},
            {"kind": "state_equals", "path": "/orders/3/status", "value": "open"},
        ),
        [],
        "",
        state,
    )
    assert ok.passed and not wrong.passed and not absent.passed
    assert "absent" in absent.detail
    assert not run_checks(checks({"kind": "state_equals", "path": "/a", "value": 1}), [], "")[
        0
    ].passed
