"""The browser desk of the user's seat over HTTP: the brief, the reply, the end button, the rules.

The same rules as the agent's desk (the key, the session cookie, form tokens, the app's own
origin, host names, the body cap, a form of an earlier turn changing nothing), then what is
the user's own: the end is a button (the marker appended for the person), the marker typed
in a reply is refused, the brief and the agent's text are shown as text.
"""

from __future__ import annotations

import anyio
import pytest

from conftest import HANG_BOUND
from desk_fixtures import DeskSession, opened
from occubench.dataset import UserBrief, UserFact
from occubench.play import (
    MAX_PLAY_FORM_BYTES,
    Phase,
    PlayInfo,
    PlayResult,
    Reply,
    TalkHandOff,
    TalkTurn,
    create_user_app,
    reply_text,
)
from occubench.users import END_MARKER, Utterance

KEY = "u" * 32
PAYLOAD = '<script>document.title="PWNED"</script>'
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
BRIEF = UserBrief(
    persona="A charge nurse." + PAYLOAD,
    goal="Get the patient triaged.",
    facts=[UserFact(name="patient_id", value="P-2231", reveal_when="asked for the patient id")],
    ends_when="the agent reports the vitals",
)


def a_turn(number: int = 1, message: str = "What is your patient id?", **more) -> TalkTurn:
    return TalkTurn(number=number, brief=BRIEF, opening="Triage them.", message=message, **more)


class Session(DeskSession[TalkTurn, Reply]):
    """A session of the user's seat (``desk_fixtures.DeskSession``)."""

    def __init__(self):
        desk = TalkHandOff()
        app = create_user_app(desk, INFO, KEY, hosts=["testserver"], settle=0.1)
        super().__init__(desk, app, KEY, desk.reply)


@pytest.fixture
def session():
    yield from opened(Session(), a_turn())


def test_without_the_key_nothing_is_shown_and_nothing_is_sent(session):
    client = session.client
    for response in (
        client.get("/"),
        client.get("/start?key=" + "x" * 32),
        client.post("/reply", data={"turn": "1", "reply": "P-2231"}),
        client.post("/close"),
    ):
        assert response.status_code == 403 and "P-2231" not in response.text
    assert session.desk.view()[0] is Phase.ASKING


def test_the_page_shows_the_brief_and_the_agents_message_as_text(session):
    session.enter()
    page = session.client.get("/")
    assert page.status_code == 200 and 'data-turn="1"' in page.text
    assert "<script>" not in page.text and "&lt;script&gt;" in page.text
    assert "P-2231" in page.text and "asked for the patient id" in page.text
    assert "What is your patient id?" in page.text and 'id="end"' in page.text
    assert "the agent is occubench/asking" in page.text
    assert "script" not in page.headers["content-security-policy"]


def test_a_reply_is_sent_and_the_end_button_appends_the_marker(session):
    token = session.enter()
    sent = session.client.post(
        "/reply",
        data={"token": token, "turn": "1", "reply": "P-2231", "action": "send"},
        follow_redirects=False,
    )
    assert sent.status_code == 303 and session.handed() == Reply(text="P-2231")
    said = [Utterance(speaker="agent", text="What is your patient id?")]
    said.append(Utterance(speaker="user", text="P-2231"))
    session.publish(a_turn(2, "HR 128, bed ED-11.", conversation=said))
    page = session.client.get("/").text
    assert 'data-turn="2"' in page and "HR 128, bed ED-11." in page and "P-2231" in page
    ended = session.client.post(
        "/reply",
        data={"token": token, "turn": "2", "reply": "Thanks.", "action": "end"},
        follow_redirects=False,
    )
    assert ended.status_code == 303
    reply = session.handed()
    assert reply == Reply(text="Thanks.", end=True)
    assert reply_text(reply) == f"Thanks.\n{END_MARKER}"
    assert session.desk.view()[0] is Phase.GRADING


def test_the_marker_typed_or_an_empty_send_is_refused_and_kept_to_fix(session):
    token = session.enter()
    form = {"token": token, "turn": "1", "action": "send"}
    typed = session.client.post("/reply", data={**form, "reply": f"bye {END_MARKER}"})
    assert typed.status_code == 400 and f"the reply holds {END_MARKER}" in typed.text
    assert f"bye {END_MARKER}</textarea>" in typed.text
    ended = session.client.post("/reply", data={**form, "action": "end", "reply": END_MARKER})
    assert ended.status_code == 400
    empty = session.client.post("/reply", data={**form, "reply": " "})
    assert empty.status_code == 400 and "write a reply, or end the conversation" in empty.text
    assert session.desk.view()[0] is Phase.ASKING and session.moves == []


def test_forms_need_their_token_their_origin_their_turn_and_a_bounded_body(session):
    token = session.enter()
    form = {"turn": "1", "reply": "P-2231"}
    assert "this form has expired" in session.client.post("/reply", data=form).text
    foreign = session.client.post(
        "/reply", data={**form, "token": token}, headers={"Origin": "http://evil.example"}
    )
    assert foreign.status_code == 400 and "sent from another site" in foreign.text
    assert session.client.get("/", headers={"Host": "evil.example"}).status_code == 400
    big = session.client.post(
        "/reply",
        content=b"reply=" + b"x" * MAX_PLAY_FORM_BYTES,
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert big.status_code == 413
    session.client.post("/reply", data={**form, "token": token}, follow_redirects=False)
    assert session.handed() == Reply(text="P-2231")
    working = session.client.post("/reply", data={**form, "token": token})  # sent twice
    assert working.status_code == 409 and "The agent is working" in working.text
    session.publish(a_turn(2, "HR 128."))
    again = session.client.post("/reply", data={**form, "token": token})
    assert again.status_code == 409 and "earlier move: nothing was sent" in again.text
    assert len(session.moves) == 1 and session.desk.view()[0] is Phase.ASKING


def test_the_verdict_then_closing_and_a_closed_desk_ends_the_conversation(session):
    token = session.enter()
    session.desk.finish(PlayResult(log="/logs/u.eval", passed=True, answer="HR 128."))
    page = session.client.get("/").text
    assert 'id="verdict" class="pass">PASSED' in page and "The agent&#39;s answer" in page
    assert "Faults the agent met" in page and 'id="conversation"' in page
    closed = session.client.post("/close", data={"token": token})
    assert closed.status_code == 200 and "Session ended" in closed.text
    assert session.desk.wait_closed(HANG_BOUND)
    later = TalkHandOff()
    later.close()
    assert anyio.run(later.reply, a_turn()) == Reply(end=True)
