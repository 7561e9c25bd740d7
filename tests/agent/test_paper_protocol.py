"""What a ``paper`` run sends, role by role, captured by a recording server on 127.0.0.1.

The agent, the simulator and the judge are scripted models behind the local
OpenAI-compatible server; the assertions are structural: message roles and order, tags,
history layout, format instructions, token limits, raw tool arguments, the verifier's
one message with its sections, fault rules in E2, no date for the simulator.
"""

import json

import pytest

from conftest import RELEASE_DIR, run_task
from occubench.dataset import load_dataset
from occubench.scripted import Reply
from occubench.simulator import PaperLayout

TASKS = [26, 51]
WRONG = 424242
"""A deliberately wrong-typed value: the agent sends it where the schema wants a string."""


def wrong_then_schema(messages, tools):
    """Calls the first tool that takes a string with a number for it, then reports."""
    done = [m for m in messages if m.role == "tool"]
    if not done:
        for tool in tools:
            schema = tool.parameters.model_dump(exclude_none=True)
            strings = [
                n for n, p in schema.get("properties", {}).items() if p.get("type") == "string"
            ]
            if strings:
                return Reply(tool_calls=[(tool.name, {strings[0]: WRONG})])
        return Reply(tool_calls=[(tools[0].name, {"unexpected": WRONG})])
    return Reply(content="Final answer: the environment replied " + done[-1].text[:80])


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, release_dir):
    from occubench.testing._openai_server import ScriptedOpenAIServer

    out = {}
    with ScriptedOpenAIServer(behaviours={"wrong-agent": wrong_then_schema}, record=True) as server:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("LOCAL_BASE_URL", server.base_url)
            patch.setenv("LOCAL_API_KEY", "test-key")
            for mode in ("E0", "E2"):
                seen = len(server.recorded)
                log = run_task(
                    tmp_path_factory.mktemp(mode),
                    agent="openai-api/local/wrong-agent",
                    roles={
                        "simulator": "openai-api/local/echo-simulator",
                        "verifier": "openai-api/local/scripted-judge",
                    },
                    task_ids=",".join(map(str, TASKS)),
                    env_mode=mode,
                    protocol="paper",
                )
                assert log.status == "success" and all(s.error is None for s in log.samples)
                out[mode] = server.recorded[seen:]
    return out


def by_model(requests, model):
    return [r for r in requests if r["model"] == model]


def max_tokens(request):
    return request.get("max_completion_tokens", request.get("max_tokens"))


def roles(request):
    return [m["role"] for m in request["messages"]]


def text(message):
    content = message["content"]
    return content if isinstance(content, str) else "".join(c.get("text", "") for c in content)


def test_agent_gets_the_papers_two_messages_tools_unchanged_and_12288_tokens(recorded):
    data = load_dataset(RELEASE_DIR, task_ids=TASKS)
    scenarios = {t.task_scenario_name for t in data.tasks}
    for request in by_model(recorded["E0"], "wrong-agent"):
        assert roles(request)[:2] == ["system", "user"]
        system, user = (text(m) for m in request["messages"][:2])
        assert any(f"Task Scenario: {s}" in system for s in scenarios)
        assert "Monday, June 16, 2025" in system  # the run's fixed date, the release's format
        assert user.startswith("Task Instruction:\n") and user.endswith(
            "Please solve the task above."
        )
        assert max_tokens(request) == 12288
        sent = {t["function"]["name"]: t["function"]["parameters"] for t in request["tools"]}
        env = next(
            e for e in data.envs.values() if set(sent) == {a.name for a in e.action_set_definitions}
        )
        for action in env.action_set_definitions:
            for name, prop in action.parameters.get("properties", {}).items():
                assert sent[action.name]["properties"][name].get("description") == prop.get(
                    "description"
                )  # not filled in: sent as the env defines it


def test_simulator_gets_the_release_layout_raw_arguments_and_no_date(recorded):
    data = load_dataset(RELEASE_DIR, task_ids=TASKS)
    stored = [env.world_model_system_prompt for env in data.envs.values()]
    requests = by_model(recorded["E0"], "echo-simulator")
    assert requests
    for request in requests:
        system = text(request["messages"][0])
        assert any(system.startswith(prompt) for prompt in stored)  # as stored, braces and all
        assert system.endswith(f"### OUTPUT FORMAT INSTRUCTIONS\n{PaperLayout().format_text}")
        assert "2025-06-16" not in system and "June 16" not in system
        assert roles(request)[0] == "system" and roles(request)[-1] == "user"
        body = request["messages"][1:]
        for user, assistant in zip(body[0::2], body[1::2], strict=False):
            assert text(user).startswith("<agent_action>\n")
            assert text(assistant).startswith("<predicted_observation>\n")
        last = text(request["messages"][-1])
        assert last.startswith("<agent_action>\n") and "### OUTPUT FORMAT INSTRUCTIONS" in last
        action = json.loads(last.split("\n")[1])
        assert isinstance(action["arguments"], str)  # the agent's raw argument string
        assert str(WRONG) in action["arguments"]  # the wrong-typed value reached the simulator
        assert max_tokens(request) == 12288


def test_fault_rules_with_count_and_duration_go_to_the_simulator_in_e2(recorded):
    for request in by_model(recorded["E2"], "echo-simulator"):
        system = text(request["messages"][0])
        assert "2 separate fault events" in system and "2 consecutive tool calls" in system
        assert "slightly outdated or incorrect" in system
    for request in by_model(recorded["E0"], "echo-simulator"):
        assert "separate fault events" not in text(request["messages"][0])


def test_verifier_gets_one_message_with_the_sections_in_order_three_times(recorded):
    requests = by_model(recorded["E0"], "scripted-judge")
    assert len(requests) == 3 * len(TASKS)
    sections = [
        "## Task Scenario",
        "## Initial State",
        "## State Description",
        "## Agent Instruction",
        "## Verification Plan",
        "## Agent Trajectory",
    ]
    for request in requests:
        assert roles(request) == ["user"]
        message = text(request["messages"][0])
        positions = [message.index(s) for s in sections]
        assert positions == sorted(positions)
        assert (
            "[Agent Action]: Call tool `" in message
            and "[Environment Observation] (from " in message
        )
        assert max_tokens(request) == 4096
