"""Approximate token counts: text, tool calls and tool definitions all count."""

from inspect_ai.model import ChatMessageAssistant, ChatMessageUser
from inspect_ai.tool import ToolCall, ToolInfo, ToolParams

from occubench.calls._tokens import approx_tokens, message_tokens, prompt_tokens, reply_tokens


def test_counts():
    assert approx_tokens("") == 1 and approx_tokens("x" * 400) == 100
    call = ToolCall(id="1", function="get_bed", arguments={"bed_id": "B-1"})
    with_call = ChatMessageAssistant(content="", tool_calls=[call])
    assert message_tokens(with_call) > message_tokens(ChatMessageAssistant(content=""))
    tool = ToolInfo(name="get_bed", description="One bed.", parameters=ToolParams())
    user = ChatMessageUser(content="hello there")
    assert prompt_tokens([user], [tool]) > prompt_tokens([user]) == message_tokens(user)
    assert reply_tokens("", [("get_bed", {"bed_id": "B-1"})]) > reply_tokens("")
