"""Checks on each of the simulated user's replies: the known ways a simulated user fails.

Pure functions over the brief, the opening request, the conversation so far, the reply
and the tool calls the agent has made. Each failure is a ``UserCheck``:

- ``goal_disclosed``: the reply states the hidden part of the goal (the goal's content
  words that the opening request does not hold) while the agent's last message asked
  no question about it. "States" means at least ``GOAL_SHARE`` of those words are in the
  reply (with at least ``GOAL_MIN_WORDS`` of them to judge by); "asked about it" means
  the agent's message is a question (holds ``?``) that names one of those words or asks
  what the user wants (``GOAL_QUESTIONS``).
- ``fact_disclosed``: a fact's value is in the reply, was not said before in the
  conversation or the opening, and the agent's last message did not ask for it: it
  names none of the content words of the fact's ``name`` (``invoice_number``: invoice,
  number) or of its ``reveal_when`` (``asked for the invoice``: invoice).
- ``end_on_question``: the reply ends the conversation while the agent's last message
  asks a question (holds ``?``).
- ``end_before_action``: the reply ends the conversation before the agent made any tool
  call.
- ``invented_fact``: the reply holds a figure or an id (a word with a digit, a lone digit
  left out) that is in neither the brief, the opening, nor the conversation so far.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from occubench.dataset import UserBrief
from occubench.users._prompt import ends_conversation, spoken_part

GOAL_SHARE = 0.6
"""The share of the goal's hidden content words a reply must hold to state the goal."""

GOAL_MIN_WORDS = 3
"""Fewer hidden goal words than this: the goal check cannot tell, and passes."""

GOAL_QUESTIONS = (
    "what do you need",
    "what do you want",
    "what would you like",
    "how can i help",
    "what can i do",
    "your goal",
    "anything else",
)
"""Phrases of a question that asks what the user wants (lower case)."""

_STOP_WORDS = frozenset(
    """a an and are as ask asked asking asks at be been but by can could did do does for
    from had has have he her his how i if in into is it its me my of on or our she so
    that the their them then there they this to was we were what when where which who
    why will with would you your agent about tell tells told request requests""".split()
)
_WORD = re.compile(r"[a-z0-9]+")
_FIGURE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]*")


class UserCheck(StrEnum):
    """A way a simulated user's reply fails (module doc)."""

    GOAL_DISCLOSED = "goal_disclosed"
    FACT_DISCLOSED = "fact_disclosed"
    END_ON_QUESTION = "end_on_question"
    END_BEFORE_ACTION = "end_before_action"
    INVENTED_FACT = "invented_fact"


class UserCheckFailure(BaseModel):
    """One failed check of a user reply: which, and what it found."""

    model_config = ConfigDict(frozen=True)

    check: UserCheck = Field(description="The check that failed.")
    detail: str = Field(description="What it found, in a few words.")


class Utterance(BaseModel):
    """One message of the conversation between the agent and the user."""

    model_config = ConfigDict(frozen=True)

    speaker: Literal["agent", "user"] = Field(description="Who said it.")
    text: str = Field(description="What they said (the user's as the agent heard it).")


def content_words(text: str) -> set[str]:
    """The words of a text that carry its content: lower case, three letters or more."""
    return {w for w in _WORD.findall(text.lower()) if len(w) >= 3 and w not in _STOP_WORDS}


def _figures(text: str) -> set[str]:
    """The figures and ids of a text: words that hold a digit (a lone digit left out)."""
    found = {m.group(0).rstrip(".-/").lower() for m in _FIGURE.finditer(text)}
    return {f for f in found if any(c.isdigit() for c in f) and len(f) > 1}


def _asks(message: str) -> bool:
    return "?" in message


def _last_agent(conversation: Sequence[Utterance]) -> str:
    return next((u.text for u in reversed(conversation) if u.speaker == "agent"), "")


def _said(opening: str, conversation: Sequence[Utterance]) -> str:
    return "\n".join([opening, *(u.text for u in conversation)]).lower()


def goal_disclosed(
    brief: UserBrief, opening: str, conversation: Sequence[Utterance], reply: str
) -> UserCheckFailure | None:
    """The reply states the hidden goal unasked (module doc), or None."""
    hidden = content_words(brief.goal) - content_words(opening)
    if len(hidden) < GOAL_MIN_WORDS:
        return None
    asked = _last_agent(conversation)
    lowered = asked.lower()
    if _asks(asked) and (
        hidden & content_words(asked) or any(q in lowered for q in GOAL_QUESTIONS)
    ):
        return None
    held = hidden & content_words(spoken_part(reply))
    if len(held) < GOAL_SHARE * len(hidden):
        return None
    share = f"{len(held)} of {len(hidden)}"
    return UserCheckFailure(
        check=UserCheck.GOAL_DISCLOSED,
        detail=f"the reply holds {share} of the goal's hidden words, and the agent did not ask",
    )


def fact_asked(fact_name: str, reveal_when: str, message: str) -> bool:
    """Whether an agent message asks for a fact: it names a word of its name or its cue."""
    cue = content_words(fact_name.replace("_", " ").replace("-", " ")) | content_words(reveal_when)
    return bool(cue & content_words(message))


def facts_disclosed(
    brief: UserBrief, opening: str, conversation: Sequence[Utterance], reply: str
) -> list[UserCheckFailure]:
    """The facts whose value the reply gives without the agent asking for them."""
    asked = _last_agent(conversation)
    said = _said(opening, conversation)
    spoken = spoken_part(reply).lower()
    found = []
    for fact in brief.facts:
        value = fact.value.strip().lower()
        if value and value in spoken and value not in said:
            if not fact_asked(fact.name, fact.reveal_when, asked):
                found.append(
                    UserCheckFailure(
                        check=UserCheck.FACT_DISCLOSED,
                        detail=f"{fact.name} was told, and the agent did not ask for it",
                    )
                )
    return found


def end_on_question(conversation: Sequence[Utterance], reply: str) -> UserCheckFailure | None:
    """The reply ends the conversation while the agent's last message asks a question."""
    if ends_conversation(reply) and _asks(_last_agent(conversation)):
        return UserCheckFailure(
            check=UserCheck.END_ON_QUESTION,
            detail="the user ended the conversation on the agent's question",
        )
    return None


def end_before_action(reply: str, tool_calls: int) -> UserCheckFailure | None:
    """The reply ends the conversation before the agent made any tool call."""
    if ends_conversation(reply) and tool_calls == 0:
        return UserCheckFailure(
            check=UserCheck.END_BEFORE_ACTION,
            detail="the user ended the conversation before the agent made any tool call",
        )
    return None


def invented_facts(
    brief: UserBrief, opening: str, conversation: Sequence[Utterance], reply: str
) -> UserCheckFailure | None:
    """The figures and ids of the reply that nothing before it holds, or None."""
    known = brief.model_dump_json().lower() + "\n" + _said(opening, conversation)
    new = sorted(f for f in _figures(spoken_part(reply)) if f not in known)
    if not new:
        return None
    return UserCheckFailure(
        check=UserCheck.INVENTED_FACT,
        detail=f"figures outside the brief and the conversation: {', '.join(new[:5])}",
    )


def check_user_reply(
    brief: UserBrief,
    opening: str,
    conversation: Sequence[Utterance],
    reply: str,
    tool_calls: int,
) -> list[UserCheckFailure]:
    """Every check's failure on one user reply (module doc); empty when it passes.

    Args:
        brief: The task's user brief.
        opening: The user's opening request (the task's instruction).
        conversation: The conversation after the opening, up to the agent's message this
            reply answers (included).
        reply: The user's reply, as the model wrote it (end marker included).
        tool_calls: The tool calls the agent has made so far.
    """
    found: list[UserCheckFailure | None] = [
        goal_disclosed(brief, opening, conversation, reply),
        *facts_disclosed(brief, opening, conversation, reply),
        end_on_question(conversation, reply),
        end_before_action(reply, tool_calls),
        invented_facts(brief, opening, conversation, reply),
    ]
    return [f for f in found if f is not None]
