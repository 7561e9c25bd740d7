"""The null agents: each does no work, in its own way."""

import pytest
from inspect_ai.model import ChatMessageSystem, ChatMessageTool, ChatMessageUser
from inspect_ai.tool import ToolInfo, ToolParam, ToolParams

from occubench.scripted import BEHAVIOURS, NullAgent
from occubench.scripted._null import NULL_ANSWER, NULL_GIVE_UP

INSTRUCTION = "Report the heart rate of patient P-2231."


def tool(name, **properties):
    params = ToolParams(
        properties={k: ToolParam(type=v) for k, v in properties.items()},
        required=list(properties),
    )
    return ToolInfo(name=name, description=name, parameters=params)


TOOLS = [tool("get_vitals", patient_id="string", hours="integer"), tool("list_beds")]
SUBMIT = tool("submit", answer="string")
START = [ChatMessageSystem(content="You are an agent."), ChatMessageUser(content=INSTRUCTION)]


def behave(agent, messages, tools=TOOLS):
    return BEHAVIOURS[agent.value](messages, tools)


def test_every_null_agent_is_a_scripted_model():
    assert [a.model for a in NullAgent] == [
        "occubench/null-answer",
        "occubench/null-one-call",
        "occubench/null-echo",
    ]


def test_null_answer_answers_at_once_without_a_call():
    reply = behave(NullAgent.ANSWER, START)
    assert (reply.content, reply.tool_calls) == (NULL_ANSWER, [])


def test_null_echo_answers_with_the_instruction():
    reply = behave(NullAgent.ECHO, START)
    assert (reply.content, reply.tool_calls) == (INSTRUCTION, [])


def test_null_one_call_calls_the_first_tool_with_schema_arguments_then_gives_up():
    first = behave(NullAgent.ONE_CALL, START)
    assert first.content == ""
    ((name, arguments),) = first.tool_calls
    assert name == "get_vitals"
    assert isinstance(arguments["patient_id"], str) and isinstance(arguments["hours"], int)
    observed = ChatMessageTool(content='{"heart_rate": 128}', function=name, tool_call_id="c1")
    second = behave(NullAgent.ONE_CALL, [*START, observed])
    assert (second.content, second.tool_calls) == (NULL_GIVE_UP, [])


def test_null_one_call_without_tools_gives_up_at_once():
    reply = behave(NullAgent.ONE_CALL, START, tools=[])
    assert (reply.content, reply.tool_calls) == (NULL_GIVE_UP, [])


@pytest.mark.parametrize(
    ("agent", "answer"), [(NullAgent.ANSWER, NULL_ANSWER), (NullAgent.ECHO, INSTRUCTION)]
)
def test_null_agents_answer_through_a_submit_tool_when_offered(agent, answer):
    reply = behave(agent, START, tools=[*TOOLS, SUBMIT])
    assert reply.tool_calls == [("submit", {"answer": answer})]


def test_null_one_call_never_calls_submit_as_its_one_call():
    first = behave(NullAgent.ONE_CALL, START, tools=[SUBMIT, *TOOLS])
    assert [name for name, _ in first.tool_calls] == ["get_vitals"]
