"""A person in the user's seat: the turn read from the user's request, the reply, the terminal."""

from __future__ import annotations

import io

import anyio
import pytest
from inspect_ai.model import get_model
from rich.console import Console

from occubench.config import RunConfig
from occubench.dataset import UserBrief, UserFact
from occubench.errors import UsageError
from occubench.play import (
    PersonLeft,
    PlayInfo,
    PlaySetup,
    Reply,
    TalkTurn,
    TerminalTalkDesk,
    human_model,
    reply_problems,
    reply_text,
    run_user,
    talk_turn_of,
)
from occubench.users import END_MARKER, REASK, SimulatedUser, UserCheck, Utterance

PAYLOAD = "\x1b]0;PWNED\x07\x1b[31mred[/] <b>"
BRIEF = UserBrief(
    persona="A charge nurse, busy." + PAYLOAD,
    goal="Get patient P-2231 triaged.",
    facts=[UserFact(name="patient_id", value="P-2231", reveal_when="asked for the patient id")],
    ends_when="the agent reports the vitals",
)
OPENING = "Triage the new patient, please."
INFO = PlayInfo(
    player="bob",
    task_id=2001,
    scenario="Triage",
    industry="Healthcare",
    domain="Emergency",
    difficulty=2,
    env_mode="E0",
    fault_count=0,
    fault_duration=1,
    seed=0,
    protocol="occubench",
    checks_arguments=True,
    max_tool_calls=20,
    simulator="occubench/twin",
    agent="occubench/asking",
)


def request(*said: str) -> SimulatedUser:
    """The simulated user's state after ``said`` (agent, user, agent, ...)."""
    user = SimulatedUser(get_model("occubench/user-cooperative"), BRIEF, OPENING, max_turns=4)
    for number, text in enumerate(said):
        user.conversation.append(Utterance(speaker="user" if number % 2 else "agent", text=text))
    return user


def test_the_turn_is_the_users_request_with_the_brief():
    messages = request("What is your patient id?", "P-2231", "Which unit?").messages()
    turn = talk_turn_of(messages, BRIEF, 2)
    assert turn.opening == OPENING and turn.message == "Which unit?" and turn.note is None
    assert [u.speaker for u in turn.conversation] == ["agent", "user"]
    assert turn.brief == BRIEF


def test_a_reask_note_comes_with_the_turn_and_the_failed_reply_is_left_out():
    from inspect_ai.model import ChatMessageAssistant, ChatMessageUser

    messages = [
        *request("What is your patient id?").messages(),
        ChatMessageAssistant(content="Bye\n" + END_MARKER),
        ChatMessageUser(content=REASK.format(problems="ended on a question")),
    ]
    turn = talk_turn_of(messages, BRIEF, 1)
    assert turn.note == "ended on a question" and turn.conversation == []
    assert turn.message == "What is your patient id?"


def test_the_end_is_an_action_and_the_marker_is_never_typed():
    assert reply_text(Reply(text=" P-2231 ")) == "P-2231"
    assert reply_text(Reply(text="Thanks.", end=True)) == f"Thanks.\n{END_MARKER}"
    assert reply_text(Reply(end=True)) == END_MARKER
    (typed,) = reply_problems("ok " + END_MARKER, end=False)
    assert typed.startswith(f"the reply holds {END_MARKER}")
    assert reply_problems(END_MARKER, end=True)  # refused with the end action too
    assert reply_problems("  ", end=False) == ["empty: write a reply, or end the conversation"]
    assert reply_problems("", end=True) == []


def at_terminal(lines: str) -> tuple[TerminalTalkDesk, io.StringIO]:
    out = io.StringIO()
    return TerminalTalkDesk(INFO, Console(file=out, width=200), io.StringIO(lines)), out


def test_the_terminal_shows_the_brief_and_reads_a_reply_then_an_end():
    desk, out = at_terminal(f"\nI am P-2231\nin bay 3\n\n{END_MARKER}\n\nThanks\n/end\n")
    first = desk.answer(talk_turn_of(request("What is your patient id?").messages(), BRIEF, 1))
    assert first == Reply(text="I am P-2231\nin bay 3")
    shown = out.getvalue()
    assert "you are the user, human/bob; the agent is occubench/asking" in shown
    assert "patient_id: P-2231 (tell it when asked for the patient id)" in shown
    assert "the agent reports the vitals (type /end)" in shown and OPENING in shown
    assert "\x1b" not in shown  # the brief's control sequences are not printed
    said = request("What is your patient id?", first.text, "HR 128.").messages()
    second = desk.answer(talk_turn_of(said, BRIEF, 2))
    assert second == Reply(text="Thanks", end=True)
    shown = out.getvalue()
    assert f"the reply holds {END_MARKER}" in shown and "You end the conversation." in shown
    assert shown.count("Who you are:") == 1 and shown.count("I am P-2231") == 2  # typed, then heard


def test_end_alone_ends_with_no_words_and_the_end_of_input_is_leaving():
    desk, _ = at_terminal("/end\n")
    turn = talk_turn_of(request("Done: HR 128.").messages(), BRIEF, 1)
    assert desk.answer(turn) == Reply(end=True)
    desk, _ = at_terminal("P-2231\n")
    with pytest.raises(PersonLeft):
        desk.answer(turn)


class Talker:
    """A person who gives the replies of a list in turn, and remembers the turns."""

    def __init__(self, *replies: Reply):
        self.replies = list(replies)
        self.turns: list[TalkTurn] = []

    async def reply(self, turn: TalkTurn) -> Reply:
        self.turns.append(turn)
        return self.replies.pop(0)


def test_a_persons_reply_is_checked_like_any_users_and_reasked_with_the_note():
    talker = Talker(Reply(text="Bye.", end=True), Reply(text="P-2231"))
    model = human_model("bob", talker=talker, brief=BRIEF)
    user = SimulatedUser(model, BRIEF, OPENING, max_turns=4)
    turn = anyio.run(user.answer, "What is your patient id?", 0)
    assert turn.reply == "P-2231" and not turn.ended and turn.attempts == 2
    assert UserCheck.END_ON_QUESTION in turn.reasked and turn.problems == []
    assert talker.turns[0].note is None and "question" in (talker.turns[1].note or "")
    assert talker.turns[1].conversation == [] and model.api.should_retry(RuntimeError()) is False


def test_a_session_as_the_user_needs_the_agent(tmp_path):
    setup = PlaySetup(
        player="bob",
        simulator="occubench/twin",
        config=RunConfig(dataset="conversational", task_ids=[2001]),
        log_root=str(tmp_path),
    )
    assert setup.brief().facts[0].name == "patient_id"
    with pytest.raises(UsageError, match="--agent-model"):
        run_user(setup, Talker(), setup.brief())
    release = setup.model_copy(update={"config": RunConfig(dataset="reference", task_ids=[1002])})
    with pytest.raises(UsageError, match="task 1002 has no user brief"):
        release.brief()
    assert not any(tmp_path.iterdir())
