"""Null agents: scripted agents that do no work, to measure what a verifier passes anyway.

``occubench floor`` runs each of them on a dataset; the share of tasks a verifier passes
for them is its floor (``docs/guide/believe.md``, "The verifier's floor"). Each gives a
final answer the way the reference agents do (``final_reply``: through a ``submit`` tool
when one is offered).
"""

from __future__ import annotations

from enum import Enum

from inspect_ai.model import ChatMessage, ChatMessageTool, ChatMessageUser
from inspect_ai.tool import ToolInfo

from occubench.dataset import example_arguments
from occubench.scripted._agents import SUBMIT_TOOL, final_reply
from occubench.scripted._reply import Behaviour, Reply

NULL_ANSWER = "I have looked into this and the task is done."
"""The whole answer of ``null-answer``: generic, states no value."""

NULL_GIVE_UP = "I could not complete the task."
"""What ``null-one-call`` answers after its one call."""

SCRIPTED_PROVIDER = "occubench"
"""The Inspect provider of the scripted models (``occubench/<name>``)."""


class NullAgent(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """A null agent: a scripted agent that does none of the task's work."""

    ANSWER = "null-answer"
    """Answers at once, without a tool call, with a short generic answer."""
    ONE_CALL = "null-one-call"
    """Calls the first tool once with arguments from its schema, then gives up."""
    ECHO = "null-echo"
    """Answers at once with the task's instruction, word for word."""

    @property
    def model(self) -> str:
        """Its Inspect model name (``occubench/null-answer``)."""
        return f"{SCRIPTED_PROVIDER}/{self.value}"


def _instruction(messages: list[ChatMessage]) -> str:
    """The first user message: the task's instruction as the agent got it."""
    return next((m.text for m in messages if isinstance(m, ChatMessageUser)), "")


def null_answer(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
    """Answer at once with ``NULL_ANSWER``; no tool is called."""
    return final_reply(NULL_ANSWER, tools)


def null_one_call(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
    """Call the first environment tool once (arguments from its schema), then give up."""
    usable = [t for t in tools if t.name != SUBMIT_TOOL]
    if usable and not any(isinstance(m, ChatMessageTool) for m in messages):
        schema = usable[0].parameters.model_dump(exclude_none=True)
        return Reply(tool_calls=[(usable[0].name, example_arguments(schema))])
    return final_reply(NULL_GIVE_UP, tools)


def null_echo(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
    """Answer at once with the instruction itself; no tool is called."""
    return final_reply(_instruction(messages), tools)


NULL_AGENTS: dict[str, Behaviour] = {
    NullAgent.ANSWER.value: null_answer,
    NullAgent.ONE_CALL.value: null_one_call,
    NullAgent.ECHO.value: null_echo,
}
"""The null agents by model name (``occubench/null-answer`` etc.)."""
