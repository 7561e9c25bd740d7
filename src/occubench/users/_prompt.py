"""What the user model is told, and how its conversation with the agent is laid out.

The user model sees a system prompt built from the task's ``UserBrief`` (who it is, what
it wants, what it knows and tells only when asked, when to end) and then the
conversation from its own side: the agent's messages arrive as *user* messages, its own
earlier replies are its *assistant* messages. The conversation opens with the task's
instruction, which is the user's own opening request (its first assistant message).

The user ends the conversation by writing ``END_MARKER`` in its reply (alone or after a
last sentence); only the user can end it. The harness reads the marker with
``ends_conversation`` and strips it from what the agent sees with ``spoken_part``.
"""

from __future__ import annotations

from occubench.dataset import UserBrief

END_MARKER = "###END###"
"""What the user writes to end the conversation (the harness recognises it, never the agent)."""

USER_PROMPT_VERSION = 1
"""The version of the user prompt (part of the protocol: a change is a new number)."""


def user_system_prompt(brief: UserBrief, opening: str) -> str:
    """The user model's system prompt for one task (module doc)."""
    facts = "\n".join(
        f"- {fact.name}: {fact.value} (tell it only when {fact.reveal_when})"
        for fact in brief.facts
    )
    return f"""You are playing a person who asked a professional for help. Stay in character.

Who you are: {brief.persona}

What you want (your goal; do not recite it, answer what you are asked): {brief.goal}

You opened the conversation with: "{opening}"

What you know, and tell only when the professional asks for it:
{facts or "- nothing beyond your opening request"}

Rules:
- Answer only what you are asked, in one or two short sentences, as this person would.
- Never state facts that are not listed above; if you are asked something you do not
  know, say you do not know.
- Do not do the professional's work, and do not tell them which steps or tools to use.
- When they ask you to confirm something, answer the question; do not end yet.
- End the conversation only when {brief.ends_when}: then write a last short sentence
  followed by {END_MARKER} on its own line. Never write {END_MARKER} otherwise."""


def ends_conversation(reply: str) -> bool:
    """Whether a user reply ends the conversation."""
    return END_MARKER in reply


def spoken_part(reply: str) -> str:
    """The reply as the agent hears it: the end marker left out, whitespace trimmed."""
    return reply.replace(END_MARKER, "").strip()
