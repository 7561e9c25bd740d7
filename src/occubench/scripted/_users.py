"""Scripted simulated users, and scripted agents that ask them or do not.

The users read their brief back out of the system prompt ``occubench.users`` writes (the
goal, each fact's line ``- name: value (tell it only when ...)``, the ending rule):

- ``user-cooperative``: gives each fact the agent's message asks for (it names a word of
  the fact's name or cue: ``fact_asked``), as "My <name> is <value>."; ends the
  conversation when the agent's message asks no question and looks like a final
  confirmation: it holds one of ``FINAL_WORDS`` or half the content words of the brief's
  ``ends_when``. Asked nothing it knows, it says it does not know.
- ``user-terse``: the same, in as few words as it can (the values alone; "Thanks." and
  the end).
- ``user-goal-leaking``: like the cooperative user, but its first reply states the whole
  goal (caught by ``goal_disclosed``).
- ``user-early-stopping``: ends the conversation on its first reply, whatever the agent
  asked (``end_before_action``, and ``end_on_question`` after a question).
- ``user-inventing``: like the cooperative user, plus a reference number it makes up
  (``invented_fact``).

Re-asked after a failed check, a flawed user makes the same mistake again, so that what
it did is kept and counted as a user error.

The agents, given a plan (``--with-plan``: the conversational suite's plans hold what
only the user knows as ``{{user:NAME}}`` slots):

- ``asking``: asks the user for each slot, one question a slot ("What is your patient
  id?"), takes each reply's value ("... patient id is V" or the reply itself), then walks
  the plan as ``occubench/careful`` does and gives its answer, closing with "All done.".
- ``non-asking``: walks the plan at once, each slot left as it stands (so the calls that
  need it fail), and answers.

Without a plan they act on the tools they are offered (each tool once, in order, its
required parameters filled): ``asking`` asks the user for each required parameter first,
``non-asking`` takes only what the opening request states ("... <name> is V"; ``unknown``
otherwise); both then report that they are done.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool, ChatMessageUser
from inspect_ai.tool import ToolInfo

from occubench.scripted._agents import careful, follow_plan, parse_plan
from occubench.scripted._reply import Behaviour, Reply
from occubench.users import END_MARKER, REASK, content_words, fact_asked

FINAL_WORDS = frozenset({"done", "confirm", "confirmed", "completed", "complete", "finished"})
"""Words of an agent message (with no question) that the cooperative users take as the end."""

INVENTED_REFERENCE = "REF-90417"
"""The reference the inventing user makes up (in no brief)."""

_GOAL = re.compile(r"^What you want \(.*?\): (.*)$", re.MULTILINE)
_FACT = re.compile(r"^- (.+?): (.+) \(tell it only when (.+)\)$", re.MULTILINE)
_ENDS = re.compile(r"End the conversation only when (.*?): then write", re.DOTALL)
_REASK_START = REASK.split("{", 1)[0]


@dataclass
class ReadBrief:
    """What a scripted user reads of its brief in its system prompt."""

    goal: str = ""
    facts: list[tuple[str, str, str]] = field(default_factory=list)
    ends_when: str = ""


def read_brief(system: str) -> ReadBrief:
    """The brief a user system prompt states (``occubench.users.user_system_prompt``)."""
    goal = _GOAL.search(system)
    ends = _ENDS.search(system)
    return ReadBrief(
        goal=goal.group(1).strip() if goal else "",
        facts=[(n.strip(), v.strip(), w.strip()) for n, v, w in _FACT.findall(system)],
        ends_when=" ".join(ends.group(1).split()) if ends else "",
    )


def _agent_messages(messages: list[ChatMessage]) -> list[str]:
    """What the agent said, in order (the harness's re-ask notes left out)."""
    return [
        m.text
        for m in messages
        if isinstance(m, ChatMessageUser) and not m.text.startswith(_REASK_START)
    ]


def _looks_final(brief: ReadBrief, message: str) -> bool:
    if "?" in message:
        return False
    words = content_words(message)
    ending = content_words(brief.ends_when)
    return bool(words & FINAL_WORDS) or (bool(ending) and 2 * len(words & ending) >= len(ending))


def _spoken_name(name: str) -> str:
    return name.replace("_", " ").replace("-", " ")


UserStyle = Callable[[ReadBrief, str, int], str]
"""A user's reply: its brief, the agent's last message, which message it is (1: the first)."""


def _cooperative(brief: ReadBrief, message: str, number: int) -> str:
    if _looks_final(brief, message):
        return f"Thank you, that is all I needed.\n{END_MARKER}"
    told = [
        f"My {_spoken_name(name)} is {value}."
        for name, value, when in brief.facts
        if fact_asked(name, when, message)
    ]
    return " ".join(told) or "I do not know that, sorry."


def _terse(brief: ReadBrief, message: str, number: int) -> str:
    if _looks_final(brief, message):
        return f"Thanks.\n{END_MARKER}"
    told = [f"{value}." for name, value, when in brief.facts if fact_asked(name, when, message)]
    return " ".join(told) or "Don't know."


def _goal_leaking(brief: ReadBrief, message: str, number: int) -> str:
    said = _cooperative(brief, message, number)
    return f"What I want is this: {brief.goal} {said}" if number == 1 else said


def _early_stopping(brief: ReadBrief, message: str, number: int) -> str:
    return f"Fine, thank you.\n{END_MARKER}"


def _inventing(brief: ReadBrief, message: str, number: int) -> str:
    said = _cooperative(brief, message, number)
    if said.endswith(END_MARKER):
        return said
    return f"{said} My reference is {INVENTED_REFERENCE}."


def scripted_user(style: UserStyle) -> Behaviour:
    """A scripted user that answers the agent's last message in ``style``."""

    def behaviour(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
        system = next((m.text for m in messages if m.role == "system"), "")
        said = _agent_messages(messages)
        return Reply(content=style(read_brief(system), said[-1] if said else "", len(said)))

    return behaviour


def _required(tools: list[ToolInfo]) -> list[str]:
    """The required parameters of the tools, each once, in order."""
    found: list[str] = []
    for tool in tools:
        for name in tool.parameters.required:
            if name not in found:
                found.append(name)
    return found


def stated_value(name: str, text: str) -> str | None:
    """The value a text states for a parameter ("... <name words> is V"), or None."""
    words = r"\s+".join(map(re.escape, _spoken_name(name).split()))
    found = re.search(rf"(?i)\b{words}\s+(?:is|:)\s+(\S+?)[.,;]?(?:\s|$)", text)
    return found.group(1) if found else None


def _act(tools: list[ToolInfo], values: dict[str, str], messages: list[ChatMessage]) -> Reply:
    """Call each tool once, in order, then report that the work is done."""
    called = sum(1 for m in messages if isinstance(m, ChatMessageTool))
    if called < len(tools):
        tool = tools[called]
        arguments = {p: values.get(p, "unknown") for p in tool.parameters.required}
        return Reply(tool_calls=[(tool.name, arguments)])
    names = ", ".join(t.name for t in tools)
    return Reply(content=f"Done: I have completed your request ({names}). All confirmed.")


_SLOT = re.compile(r"\{\{user:([^}]+)\}\}")
"""A value of a plan only the user knows: ``{{user:NAME}}``."""
_CAREFUL = follow_plan(careful)


def _planned(messages: list[ChatMessage]) -> ChatMessageUser | None:
    """The first user message that holds a plan, if any."""
    return next(
        (m for m in messages if isinstance(m, ChatMessageUser) and parse_plan(m.text)), None
    )


def _walk(
    opening: ChatMessageUser,
    values: dict[str, str],
    messages: list[ChatMessage],
    tools: list[ToolInfo],
) -> Reply:
    """Walk the plan with its slots filled from ``values``, past the talk with the user."""
    text = _SLOT.sub(lambda m: values.get(m.group(1), m.group(0)), opening.text)
    work = [
        m
        for m in messages[messages.index(opening) + 1 :]
        if isinstance(m, ChatMessageTool) or (isinstance(m, ChatMessageAssistant) and m.tool_calls)
    ]
    reply = _CAREFUL([opening.model_copy(update={"content": text}), *work], tools)
    if reply.tool_calls or reply.content is None:
        return reply
    return Reply(content=f"{reply.content} All done.")


def asking_agent(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
    """Asks the user for what it needs, one question each, then acts (module doc)."""
    opening = _planned(messages)
    if opening is None:
        needed = _required(tools)
    else:
        needed = list(dict.fromkeys(_SLOT.findall(opening.text)))
    questions = [m for m in messages if isinstance(m, ChatMessageAssistant) and "?" in m.text]
    replies = [m.text for m in messages if isinstance(m, ChatMessageUser)][1:]
    if len(questions) < len(needed) and len(replies) == len(questions):
        return Reply(content=f"What is your {_spoken_name(needed[len(questions)])}?")
    values = {
        name: stated_value(name, reply) or reply.strip().rstrip(".")
        for name, reply in zip(needed, replies, strict=False)
    }
    if opening is None:
        return _act(tools, values, messages)
    return _walk(opening, values, messages, tools)


def non_asking_agent(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
    """Acts from the opening request alone, then answers (module doc)."""
    planned = _planned(messages)
    if planned is not None:
        return _walk(planned, {}, messages, tools)
    opening = next((m.text for m in messages if isinstance(m, ChatMessageUser)), "")
    values = {name: value for name in _required(tools) if (value := stated_value(name, opening))}
    return _act(tools, values, messages)


USER_MODELS: dict[str, Behaviour] = {
    "user-cooperative": scripted_user(_cooperative),
    "user-terse": scripted_user(_terse),
    "user-goal-leaking": scripted_user(_goal_leaking),
    "user-early-stopping": scripted_user(_early_stopping),
    "user-inventing": scripted_user(_inventing),
}
"""The scripted users by model name (``occubench/user-cooperative`` etc.)."""

USER_AGENTS: dict[str, Behaviour] = {"asking": asking_agent, "non-asking": non_asking_agent}
"""The scripted agents of tasks with a user by model name (``occubench/asking``)."""
