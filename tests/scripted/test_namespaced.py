"""A scripted agent behind an agent system: MCP tool names, context before the task,
tool output wrapped by the client (what Claude Code and Codex send through the bridge)."""

import json

from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser
from inspect_ai.tool import ToolCall, ToolInfo, ToolParams

from occubench.scripted import BEHAVIOURS
from occubench.scripted._namespaced import ServerNames

PLAN = """Do it.

A plan that solves this task:
1. Call get_a with {"id": "A"}.
Answer: A is {{1.value}}."""


def tool(name: str) -> ToolInfo:
    return ToolInfo(name=name, description="", parameters=ToolParams())


def test_calls_go_out_under_the_declared_names_and_results_are_read_back():
    tools = [tool("mcp__occubench__get_a"), tool("Read"), tool("mcp__occubench__submit_answer")]
    names = ServerNames(tools)
    assert names.declared == {
        "get_a": "mcp__occubench__get_a",
        "submit_answer": ("mcp__occubench__submit_answer"),
    }
    context = ChatMessageUser(content="<environment_context>cwd: /tmp</environment_context>")
    messages = [context, ChatMessageUser(content=PLAN)]
    seen, offered = names.plain(messages, tools)
    assert [t.name for t in offered] == ["get_a", "Read", "submit_answer"]
    first = names.declared_calls(BEHAVIOURS["trusting"](seen, offered))
    assert first.tool_calls == [("mcp__occubench__get_a", {"id": "A"})]
    # the client wraps the tool's text (Codex: wall time, then "Output:")
    call = ToolCall(id="c1", function="mcp__occubench__get_a", arguments={"id": "A"})
    result = "Wall time: 0.01 seconds\nOutput:\n" + json.dumps({"value": 3})
    messages += [
        ChatMessageAssistant(content="", tool_calls=[call]),
        ChatMessageTool(content=result, tool_call_id="c1", function="mcp__occubench__get_a"),
    ]
    seen, offered = names.plain(messages, tools)
    assert seen[-1].function == "get_a" and seen[-2].tool_calls[0].function == "get_a"
    answer = names.declared_calls(BEHAVIOURS["trusting"](seen, offered))
    assert answer.tool_calls == [] and answer.content == "A is 3."


def test_other_names_pass_unchanged():
    tools = [tool("get_a"), tool("mcp__only_two")]
    names = ServerNames(tools)
    assert names.declared == {}
    messages = [ChatMessageUser(content=PLAN)]
    assert names.plain(messages, tools) == (messages, tools)
