"""The paper verifier's trajectory text is the release harness's string, byte for byte."""

from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser
from inspect_ai.tool import ToolCall

from occubench.grading import render_paper_trajectory


def release_text(parts):
    """What the release's agent loop builds: each part appended as newline, part, newline."""
    return "".join(f"\n{part}\n" for part in parts)


def test_the_text_is_the_releases():
    unreadable = ToolCall(
        id="c2",
        function="set_status",
        arguments={},
        parse_error="Error parsing the following tool call arguments:\n\n{'status': open\n\n"
        "Error details: Expecting property name",
    )
    messages = [
        ChatMessageUser(content="Task Instruction:\nLook up A-1."),
        ChatMessageAssistant(
            content="Looking it up.",
            tool_calls=[ToolCall(id="c1", function="get_record", arguments={"id": "A-1"})],
        ),
        ChatMessageTool(content='{"id": "A-1", "status": "open"}', tool_call_id="c1"),
        ChatMessageAssistant(content="", tool_calls=[unreadable]),
        ChatMessageTool(content='{"error": "bad arguments"}', tool_call_id="c2"),
        ChatMessageAssistant(content="A-1 is open."),
    ]
    assert render_paper_trajectory(messages) == release_text(
        [
            "[Agent Response]: Looking it up.",
            '[Agent Action]: Call tool `get_record` with arguments: {"id": "A-1"}',
            '[Environment Observation] (from get_record): {"id": "A-1", "status": "open"}',
            "[Agent Action]: Call tool `set_status` with arguments: {'status': open",
            '[Environment Observation] (from set_status): {"error": "bad arguments"}',
            "[Agent Response]: A-1 is open.",
        ]
    )


def test_a_users_turns_are_entries_and_other_user_messages_are_not():
    from occubench.agent import USER_TURN_METADATA

    messages = [
        ChatMessageUser(content="I need a claim filed."),
        ChatMessageAssistant(content="What is your invoice number?"),
        ChatMessageUser(content="INV-4471.", metadata={USER_TURN_METADATA: 1}),
        ChatMessageUser(content="Please proceed."),  # an agent's own nudge: not the user's
        ChatMessageAssistant(content="Filed."),
        ChatMessageUser(content="Thanks.", metadata={USER_TURN_METADATA: 2}),  # its closing
    ]
    assert render_paper_trajectory(messages) == release_text(
        [
            "[Agent Response]: What is your invoice number?",
            "[User Response]: INV-4471.",
            "[Agent Response]: Filed.",
        ]
    )
