"""A person in the user's seat: the agent's message shown with the brief, their reply taken.

The ``human/<name>`` model in the ``user`` role reads the very request the simulated user
gets (``occubench.users``: the user's system prompt, their opening request, then the
conversation from the user's side) and answers with what the person writes at their desk
(``TalkDesk``). What the person is shown (``TalkTurn``) is the task's user brief (who they
are, what they want, the facts they hold and when to tell each, what ends the
conversation), the conversation so far and the agent's latest message; when their last
reply failed a check on the user's turns, the harness's note on it comes with the turn
and they write that reply again.

Their ``Reply`` is words, and whether it ends the conversation: ending is an action of the
desk (``/end`` in the terminal, a button in the browser) that appends ``END_MARKER`` for
them (``reply_text``); the marker typed in a reply is refused, so a person never ends a
conversation by writing it. In the terminal (``TerminalTalkDesk``) the person types:

- their reply, over as many lines as it takes, ended by an empty line;
- ``/end`` (alone on a line, or after the reply's lines): the reply so far is their last
  words, and the conversation ends;
- ``/brief``, ``/history``: the brief, or the conversation, shown again.

The end of the input is the person leaving (``PersonLeft``: the sample ends in an
infrastructure error, as a simulated user that never answered would).
"""

from __future__ import annotations

import re
from typing import Protocol

import anyio
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageUser
from pydantic import BaseModel, Field

from occubench.dataset import UserBrief, UserFact
from occubench.play._simulate import PersonLeft
from occubench.play._terminal import TerminalDesk, _Ended
from occubench.text import terminal_plain
from occubench.users import END_MARKER, REASK, Utterance

MAX_REPLY_CHARS = 20_000
"""Longest reply a person may give (characters)."""
END_COMMAND = "/end"
"""Typed in the terminal: end the conversation (the reply typed before it is the last words)."""
TALK_HELP = (
    f"Write your reply (as many lines as you need, then an empty line). '{END_COMMAND}' ends "
    "the conversation (what you typed before it is your last words); '/brief' and "
    "'/history' show them again."
)
_NOTE = re.compile(re.escape(REASK).replace(re.escape("{problems}"), "(?P<problems>.*)"), re.DOTALL)


class TalkTurn(BaseModel):
    """What the person in the user's seat sees at one turn (what the user model is given)."""

    number: int = Field(ge=1, description="1 for the first reply, then one more each.")
    brief: UserBrief = Field(description="The task's user brief: who they are and what they know.")
    opening: str = Field(description="The opening request the user made (the task's instruction).")
    conversation: list[Utterance] = Field(
        default_factory=list, description="The conversation after the opening, in order."
    )
    message: str = Field(description="The agent's message to answer.")
    note: str | None = Field(
        default=None,
        description="The harness's note when the last reply failed a check (write it again).",
    )


class Reply(BaseModel):
    """What the person says, and whether it ends the conversation."""

    text: str = Field(default="", max_length=MAX_REPLY_CHARS, description="Their words.")
    end: bool = Field(default=False, description="They end the conversation with this reply.")


class TalkDesk(Protocol):
    """Where a person in the user's seat is shown the agent's message and replies."""

    async def reply(self, turn: TalkTurn) -> Reply:
        """The person's reply to ``turn``."""
        ...


def reply_problems(text: str, end: bool) -> list[str]:
    """Why a reply cannot be sent as it is (empty: it can)."""
    if END_MARKER in text:
        return [f"the reply holds {END_MARKER}: end the conversation with its own action instead"]
    if len(text) > MAX_REPLY_CHARS:
        return [f"longer than {MAX_REPLY_CHARS} characters ({len(text)})"]
    if not text.strip() and not end:
        return ["empty: write a reply, or end the conversation"]
    return []


def reply_text(reply: Reply) -> str:
    """The reply as the user model's output: the words, then ``END_MARKER`` when it ends."""
    words = reply.text.strip()
    if not reply.end:
        return words
    return f"{words}\n{END_MARKER}" if words else END_MARKER


def talk_turn_of(messages: list[ChatMessage], brief: UserBrief, number: int) -> TalkTurn:
    """The turn of the user model's request (``occubench.users``' layout).

    After the system prompt, the first assistant message is the opening request; then the
    agent's messages are user messages and the user's replies assistant messages. A last
    user message that is the harness's re-ask note is the turn's ``note``, and the reply
    before it (the one that failed) is not part of the conversation.
    """
    talk = [m for m in messages if isinstance(m, ChatMessageUser | ChatMessageAssistant)]
    opening = talk[0].text if talk and isinstance(talk[0], ChatMessageAssistant) else ""
    rest = talk[1:] if opening else talk
    note = None
    if rest and isinstance(rest[-1], ChatMessageUser):
        found = _NOTE.fullmatch(rest[-1].text)
        if found is not None and len(rest) >= 3:
            note, rest = found.group("problems"), rest[:-2]
    said = [
        Utterance(speaker="agent" if isinstance(m, ChatMessageUser) else "user", text=m.text)
        for m in rest
    ]
    message = said.pop().text if said and said[-1].speaker == "agent" else ""
    return TalkTurn(
        number=number,
        brief=brief,
        opening=opening,
        conversation=said,
        message=message,
        note=note,
    )


class TerminalTalkDesk(TerminalDesk):
    """A person at a terminal in the user's seat (module doc); the header is the agent's."""

    async def reply(self, turn: TalkTurn) -> Reply:
        """The person's reply, typed in a worker thread (the eval's loop goes on)."""
        return await anyio.to_thread.run_sync(self.answer, turn, abandon_on_cancel=True)

    def answer(self, turn: TalkTurn) -> Reply:
        """Show what is new in ``turn`` and read the reply (module doc).

        Raises:
            PersonLeft: the input ended.
        """
        if self.shown == 0:
            self.show_brief(turn)
        self.show_history(turn, since=min(self.shown, len(turn.conversation)))
        self.shown = len(turn.conversation) + 1
        if turn.note is not None:
            self.say("\nThe harness: your last reply broke the user's rules:", "bold red")
            self.say(f"  {terminal_plain(turn.note)}")
            self.say("Write that reply again.")
        self.say(f"\nThe agent ({terminal_plain(self.info.agent or 'agent')}):", "bold")
        self.say(terminal_plain(turn.message))
        try:
            return self._reply(turn)
        except _Ended:
            raise PersonLeft("the input ended before the reply was written") from None

    def show_brief(self, turn: TalkTurn) -> None:
        """The header and the user's brief: who you are, what you want and know, the end."""
        info, brief = self.info, turn.brief
        self.say(
            f"Task {info.task_id}: {terminal_plain(info.scenario)} "
            f"({terminal_plain(info.industry)} / {terminal_plain(info.domain)}); you are the "
            f"user, human/{info.player}; the agent is {terminal_plain(info.agent or '?')}",
            "bold",
        )
        self.say("\nWho you are:", "bold")
        self.say(terminal_plain(brief.persona))
        self.say("\nWhat you want (do not recite it; answer what you are asked):", "bold")
        self.say(terminal_plain(brief.goal))
        self.say("\nWhat you know (tell each only when the agent asks for it):", "bold")
        for fact in brief.facts:
            self.say(f"  - {_fact_line(fact)}")
        if not brief.facts:
            self.say("  - nothing beyond your opening request")
        self.say("\nEnd the conversation when:", "bold")
        self.say(f"{terminal_plain(brief.ends_when)} (type {END_COMMAND})")
        self.say("\nYou opened with:", "bold")
        self.say(terminal_plain(turn.opening))
        self.say(f"\n{TALK_HELP}")

    def show_history(self, turn: TalkTurn, since: int = 0) -> None:
        """The conversation so far (from ``since`` on)."""
        for utterance in turn.conversation[since:]:
            who = "You" if utterance.speaker == "user" else "The agent"
            self.say(f"\n{who}:", "bold")
            self.say(terminal_plain(utterance.text))

    def _reply(self, turn: TalkTurn) -> Reply:
        """Read until a reply can be sent."""
        while True:
            first = self.read(f"\n[reply {turn.number}] >")
            word = first.strip().lower()
            if word in ("", "help", "?", "/help"):
                self.say(TALK_HELP)
                continue
            if word == "/brief":
                self.show_brief(turn)
                continue
            if word == "/history":
                self.show_history(turn)
                continue
            lines, end = [] if word == END_COMMAND else [first], word == END_COMMAND
            size = len(first)
            while not end and (line := self.read(">")).strip():
                if line.strip().lower() == END_COMMAND:
                    end = True
                elif size <= MAX_REPLY_CHARS:  # past the bound, the rest is read and dropped
                    lines.append(line)
                size += len(line) + 1
            text = "\n".join(lines).strip()
            over = [f"longer than {MAX_REPLY_CHARS} characters"] if size > MAX_REPLY_CHARS else []
            problems = over or reply_problems(text, end)
            if not problems:
                if end:
                    self.say("You end the conversation.")
                return Reply(text=text, end=end)
            self.say("Not sent:", "bold red")
            for problem in problems:
                self.say(f"  - {terminal_plain(problem)}")


def _fact_line(fact: UserFact) -> str:
    return terminal_plain(f"{fact.name}: {fact.value} (tell it when {fact.reveal_when})")
