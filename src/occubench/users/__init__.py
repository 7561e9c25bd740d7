"""A person on the other side: the simulated user of a task with a ``user`` brief.

The user model's prompt and the conversation's conventions (``END_MARKER``: only the
user ends a conversation); the checks on each of its replies (``check_user_reply``); the
user of one sample (``SimulatedUser``: asks, checks, re-asks once, keeps the turns, and
uses a world like the simulator).
"""

from occubench.users._checks import (
    GOAL_QUESTIONS,
    GOAL_SHARE,
    UserCheck,
    UserCheckFailure,
    Utterance,
    check_user_reply,
    content_words,
    fact_asked,
)
from occubench.users._prompt import (
    END_MARKER,
    USER_PROMPT_VERSION,
    ends_conversation,
    spoken_part,
    user_system_prompt,
)
from occubench.users._user import REASK, USER_CALL, SimulatedUser, UserTurn, UserWorld

__all__ = [
    "END_MARKER",
    "GOAL_QUESTIONS",
    "GOAL_SHARE",
    "REASK",
    "USER_CALL",
    "USER_PROMPT_VERSION",
    "SimulatedUser",
    "UserCheck",
    "UserCheckFailure",
    "UserTurn",
    "UserWorld",
    "Utterance",
    "check_user_reply",
    "content_words",
    "ends_conversation",
    "fact_asked",
    "spoken_part",
    "user_system_prompt",
]
