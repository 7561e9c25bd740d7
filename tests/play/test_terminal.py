"""The terminal desk: what it prints at a turn, and the moves typed lines give."""

from __future__ import annotations

import io

from rich.console import Console

from occubench.play import Entry, EntryKind, Move, PlayInfo, TerminalDesk, Turn, tool_view

SCHEMA = {
    "type": "object",
    "properties": {
        "esi_level": {"type": "integer", "minimum": 1, "maximum": 5, "description": "ESI level."},
        "unit": {"type": "string", "enum": ["ED", "ICU"]},
    },
    "required": ["esi_level"],
}
PAYLOAD = "\x1b]0;PWNED\x07\x1b[31mred[/] <b>"


def info(checks: bool = True) -> PlayInfo:
    return PlayInfo(
        player="alice",
        task_id=7,
        scenario="Triage" + PAYLOAD,
        industry="Healthcare",
        domain="Emergency",
        difficulty=2,
        env_mode="E2",
        fault_count=2,
        fault_duration=1,
        seed=3,
        protocol="occubench" if checks else "paper",
        checks_arguments=checks,
        max_tool_calls=20,
        simulator="occubench/canned",
    )


def turn(number: int = 1, entries=()) -> Turn:
    return Turn(
        number=number,
        system_prompt="You are a triage nurse.",
        instruction="Find the protocol for ESI 2." + PAYLOAD,
        tools=[tool_view("get_protocol", "The triage protocol of a level.", SCHEMA)],
        entries=list(entries),
    )


def play(lines: str, at: Turn, checks: bool = True, desk: TerminalDesk | None = None):
    out = io.StringIO()
    desk = desk or TerminalDesk(info(checks), Console(file=out, width=200), io.StringIO(lines))
    move = desk.move(at)
    return move, out.getvalue()


def test_the_first_turn_shows_the_task_the_tools_and_how_to_move():
    move, shown = play("give up\n", turn())
    assert move == Move(answer="")
    for text in (
        "Task 7: Triage",
        "E2, 2 fault(s) x 1 call(s), seed 3; protocol occubench",
        "you play human/alice",
        "You are a triage nurse.",
        "Find the protocol for ESI 2.",
        "1. get_protocol(esi_level: integer, unit?: string)",
        "At most 20 tool calls.",
    ):
        assert text in shown
    assert "\x1b" not in shown and "\x07" not in shown  # task text cannot drive the terminal
    assert "red[/] <b>" in shown  # nor is it taken as markup: shown as written


def test_a_value_of_the_wrong_kind_is_asked_again_then_the_schema_decides():
    lines = "1\ntwo\n9\nER\n\nget_protocol\n2\nICU\n"
    move, shown = play(lines, turn())
    assert move == Move(tool="get_protocol", arguments={"esi_level": 2, "unit": "ICU"})
    assert "! not a whole number: 'two'" in shown
    assert '! not one of "ED", "ICU": \'ER\'' in shown
    assert "9 is greater than the maximum of 5" in shown  # the protocol's rule, whole form
    assert "Fill the form again." in shown


def test_under_the_paper_protocol_the_form_is_not_checked_against_the_schema():
    move, shown = play("1\n9\n\n", turn(), checks=False)
    assert move == Move(tool="get_protocol", arguments={"esi_level": 9})
    assert "arguments passed on as typed" in shown


def test_json_arguments_back_out_of_a_form_and_an_answer_of_several_lines():
    lines = (
        'get_protocol {"esi_level": 0}\n'  # refused by the schema: choose again
        "1\n:back\n"
        "nothing\n"
        'get_protocol {"esi_level": 3}\n'
    )
    move, shown = play(lines, turn())
    assert move == Move(tool="get_protocol", arguments={"esi_level": 3})
    assert "0 is less than the minimum of 1" in shown and "No tool 'nothing'" in shown
    move, _ = play("answer\n\nanswer\nESI 2: wait at most\n10 minutes.\n\n", turn(2))
    assert move == Move(answer="ESI 2: wait at most\n10 minutes.")


def test_later_turns_show_only_what_is_new_and_the_end_of_input_gives_up():
    out = io.StringIO()
    desk = TerminalDesk(info(), Console(file=out, width=200), io.StringIO(""), echo=False)
    call = Entry(kind=EntryKind.CALL, tool="get_protocol", text='{"esi_level": 2}')
    seen = Entry(kind=EntryKind.OBSERVATION, tool="get_protocol", text='{"max_wait": 10}')
    refused = Entry(kind=EntryKind.REFUSED, tool="get_protocol", text="limit reached")
    desk.shown = 0
    assert desk.move(turn(2, [call, seen])) == Move(answer="")
    first = out.getvalue()
    assert '"max_wait": 10' in first and "The input ended: you give up" in first
    desk.lines = io.StringIO("")
    desk.move(turn(3, [call, seen, call, refused]))
    second = out.getvalue()[len(first) :]
    assert "max_wait" not in second and "The call to get_protocol was refused" in second


def test_an_over_long_line_is_dropped_whole():
    from occubench.play import MAX_FIELD_CHARS

    lines = "1\n" + "7" * (MAX_FIELD_CHARS + 5) + "\n2\n\n"
    move, shown = play(lines, turn())
    assert move == Move(tool="get_protocol", arguments={"esi_level": 2})
    assert "7" * 81 not in shown
