"""The browser desk over HTTP (no browser): the session's key, its forms, its bounds.

Each attack is sent as a client would send it, then the safe answer is checked: no key or
a wrong one, a forged session cookie, a form without its token or from another site, a
foreign Host, a body over the cap, a form of an earlier turn, text that would be markup.
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from conftest import HANG_BOUND
from desk_fixtures import DeskSession, opened
from occubench.faults import InjectedFault
from occubench.play import (
    MAX_PLAY_FORM_BYTES,
    Entry,
    EntryKind,
    HandOff,
    Move,
    Phase,
    PlayInfo,
    PlayResult,
    Turn,
    create_play_app,
    tool_view,
)

KEY = "k" * 32
PAYLOAD = '<script>document.title="PWNED"</script><img src=x onerror="alert(1)">'
SCHEMA = {
    "type": "object",
    "properties": {"esi_level": {"type": "integer", "minimum": 1, "maximum": 5}},
    "required": ["esi_level"],
}
INFO = PlayInfo(
    player="alice",
    task_id=7,
    scenario="Triage",
    industry="Healthcare",
    domain="Emergency",
    difficulty=2,
    env_mode="E1",
    fault_count=1,
    fault_duration=1,
    seed=0,
    protocol="occubench",
    checks_arguments=True,
    max_tool_calls=20,
    simulator="occubench/canned",
)


def a_turn(number: int = 1, entries=()) -> Turn:
    return Turn(
        number=number,
        system_prompt="You are a nurse." + PAYLOAD,
        instruction="Look up ESI 2." + PAYLOAD,
        tools=[tool_view("get_protocol", "The protocol of a level.", SCHEMA)],
        entries=list(entries),
    )


class Session(DeskSession[Turn, Move]):
    """A session of the agent's seat (``desk_fixtures.DeskSession``)."""

    def __init__(self):
        desk = HandOff()
        # pages wait a moment only for a next turn: here none comes unless a test publishes it
        app = create_play_app(desk, INFO, KEY, hosts=["testserver"], settle=0.1)
        super().__init__(desk, app, KEY, desk.ask)


@pytest.fixture
def session():
    yield from opened(Session(), a_turn())


def test_without_the_key_nothing_of_the_session_is_shown(session):
    client = session.client
    for response in (
        client.get("/"),
        client.get("/start?key=" + "x" * 32),
        client.get("/start"),
        client.post("/call", data={"turn": "1", "tool": "get_protocol", "arg.esi_level": "2"}),
        client.post("/answer", data={"turn": "1", "action": "give_up"}),
        client.post("/close"),
    ):
        assert response.status_code == 403 and "Look up ESI" not in response.text
    assert session.desk.view()[0] is Phase.ASKING  # nothing was handed over
    session.enter()
    name = next(n for n in client.cookies if not n.startswith("occubench_play_token_"))
    client.cookies.clear()
    client.cookies.set(name, "alice.0000")  # a session cookie this app did not sign
    assert client.get("/").status_code == 403


def test_the_key_opens_a_session_cookie_kept_from_scripts_and_other_sites(session):
    response = session.client.get(f"/start?key={KEY}", follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/"
    cookies = response.headers.get_list("set-cookie")
    assert len(cookies) == 2 and all("HttpOnly" in c and "SameSite=strict" in c for c in cookies)
    assert all(c.startswith("occubench_play_") for c in cookies)
    page = session.client.get("/")
    assert page.status_code == 200 and 'data-turn="1"' in page.text
    policy = page.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script" not in policy
    other = Session()  # another session's cookies open nothing here
    other.client.cookies = session.client.cookies
    assert other.client.get("/").status_code == 403


def test_task_and_simulator_text_is_shown_as_text():
    call = Entry(kind=EntryKind.CALL, tool="get_protocol", text='{"esi_level": 2}')
    seen = Entry(kind=EntryKind.OBSERVATION, tool="get_protocol", text=PAYLOAD)
    session = Session()
    session.publish(a_turn(2, [call, seen]))
    session.enter()
    page = session.client.get("/").text
    assert "<script>" not in page and "<img" not in page
    assert "&lt;script&gt;document.title=&#34;PWNED&#34;&lt;/script&gt;" in page  # instruction
    assert "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in page  # the observation
    session.desk.close()


def test_a_form_of_the_wrong_kind_is_shown_again_with_every_problem(session):
    token = session.enter()
    form = {"token": token, "turn": "1", "tool": "get_protocol", "arg.esi_level": "two"}
    response = session.client.post("/call", data=form)
    assert response.status_code == 400
    assert "esi_level: not a whole number: &#39;two&#39;" in response.text
    assert 'value="two"' in response.text  # kept, to be fixed
    response = session.client.post("/call", data={**form, "arg.esi_level": "9"})
    assert response.status_code == 400 and "9 is greater than the maximum of 5" in response.text
    response = session.client.post("/call", data={**form, "arg.esi_level": "", "json": "[1]"})
    assert "a JSON object is needed" in response.text
    assert session.desk.view()[0] is Phase.ASKING  # nothing handed over yet
    session.client.post("/call", data={**form, "arg.esi_level": "2"}, follow_redirects=False)
    assert session.handed() == Move(tool="get_protocol", arguments={"esi_level": 2})


def test_a_form_of_an_earlier_turn_changes_nothing(session):
    token = session.enter()
    form = {"token": token, "turn": "1", "tool": "get_protocol", "json": '{"esi_level": 3}'}
    first = session.client.post("/call", data=form, follow_redirects=False)
    assert first.status_code == 303
    assert session.handed() == Move(tool="get_protocol", arguments={"esi_level": 3})
    working = session.client.post("/call", data=form)  # sent twice, while the call is answered
    assert working.status_code == 409 and "The environment is answering" in working.text
    session.publish(a_turn(2))
    again = session.client.post("/call", data=form)  # the same form, sent twice
    assert again.status_code == 409 and "earlier move: nothing was sent" in again.text
    assert session.desk.view()[0] is Phase.ASKING and len(session.moves) == 1


def test_forms_need_their_token_and_the_apps_own_origin(session):
    token = session.enter()
    form = {"turn": "1", "tool": "get_protocol", "arg.esi_level": "2"}
    no_token = session.client.post("/call", data=form)
    assert no_token.status_code == 400 and "this form has expired" in no_token.text
    foreign = session.client.post(
        "/call", data={**form, "token": token}, headers={"Origin": "http://evil.example"}
    )
    assert foreign.status_code == 400 and "sent from another site" in foreign.text
    assert session.desk.view()[0] is Phase.ASKING


def test_a_foreign_host_and_a_body_over_the_cap_are_refused_unread(session):
    session.enter()
    assert session.client.get("/", headers={"Host": "evil.example"}).status_code == 400
    big = session.client.post(
        "/answer",
        content=b"answer=" + b"x" * MAX_PLAY_FORM_BYTES,
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert big.status_code == 413
    assert session.desk.view()[0] is Phase.ASKING


def test_an_answer_is_needed_unless_one_gives_up(session):
    token = session.enter()
    empty = session.client.post("/answer", data={"token": token, "turn": "1", "answer": " "})
    assert empty.status_code == 400 and "Write an answer, or give up." in empty.text
    session.client.post(
        "/answer",
        data={"token": token, "turn": "1", "action": "give_up", "answer": "x"},
        follow_redirects=False,
    )
    assert session.handed() == Move(answer="")


def test_the_verdict_then_the_end_of_the_session(session):
    token = session.enter()
    session.client.post(
        "/answer",
        data={"token": token, "turn": "1", "answer": "Wait at most 10 minutes."},
        follow_redirects=False,
    )
    assert session.handed() == Move(answer="Wait at most 10 minutes.")
    fault = InjectedFault(
        call_index=0,
        tool="get_protocol",
        kind="connection_refused",
        explicit=True,
        applied=True,
        changes=["error returned; the simulator was not called"],
        seen_by_agent=None,
    )
    session.desk.finish(
        PlayResult(
            log="/logs/x.eval",
            passed=False,
            answer="Wait at most 10 minutes.",
            explanation="checks 1/2",
            faults=[fault],
            tool_calls=1,
        )
    )
    page = session.client.get("/")
    assert 'id="verdict" class="fail">FAILED' in page.text and "connection_refused" in page.text
    assert "an error instead of the answer" in page.text and "/logs/x.eval" in page.text
    closed = session.client.post("/close", data={"token": token})
    assert closed.status_code == 200 and "Session ended" in closed.text
    assert session.desk.wait_closed(HANG_BOUND)


def test_the_key_opens_the_session_once(session):
    session.enter()
    again = session.client.get(f"/start?key={KEY}")  # the same browser: still its session
    assert again.status_code == 200 and 'data-turn="1"' in again.text
    thief = TestClient(session.app)  # the link copied from a file or a shell history
    taken = thief.get(f"/start?key={KEY}")
    assert taken.status_code == 403 and "This link was used" in taken.text
    assert "Look up ESI" not in taken.text
    assert thief.get("/").status_code == 403
    assert session.client.get("/").status_code == 200  # the player keeps the session
