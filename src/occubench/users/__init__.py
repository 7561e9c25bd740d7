"""A person on the other side: the simulated user of a task with a ``user`` brief.

The user model's prompt and the conversation's conventions (``END_MARKER``: only the
user ends a conversation).
"""

from occubench.users._prompt import (
    END_MARKER,
    USER_PROMPT_VERSION,
    ends_conversation,
    spoken_part,
    user_system_prompt,
)

__all__ = [
    "END_MARKER",
    "USER_PROMPT_VERSION",
    "ends_conversation",
    "spoken_part",
    "user_system_prompt",
]
