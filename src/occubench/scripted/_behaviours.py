"""Scripted model behaviours: pure functions from a conversation to a reply.

They stand in for real models offline (tests, the demo, the local OpenAI-compatible
server). Each reads only what a real model would see: the messages and the tools.
"""

from __future__ import annotations

import html
import json
import re

from inspect_ai.model import ChatMessage, ChatMessageTool, ChatMessageUser
from inspect_ai.tool import ToolInfo
from pydantic import BaseModel, Field

from occubench.dataset import example_arguments
from occubench.defaults import DEFAULT_EXPECTED_TOOL_CALLS
from occubench.scripted._agents import REFERENCE_AGENTS
from occubench.scripted._canned import canned_observations, canned_simulator
from occubench.scripted._diagnose_judge import diagnose_judge
from occubench.scripted._exploits import EXPLOIT_AGENTS
from occubench.scripted._flawed import FLAWED
from occubench.scripted._null import NULL_AGENTS
from occubench.scripted._reply import Behaviour, Reply
from occubench.scripted._simulated import last_action, observation_reply, system_text
from occubench.scripted._twin_sim import prompt_tools
from occubench.scripted._users import USER_AGENTS, USER_MODELS


def schema_agent(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
    """Calls each tool once, in order, with arguments from its schema, then reports."""
    results = [m for m in messages if isinstance(m, ChatMessageTool)]
    if len(results) < len(tools):
        tool = tools[len(results)]
        schema = tool.parameters.model_dump(exclude_none=True)
        return Reply(tool_calls=[(tool.name, example_arguments(schema))])
    lines = [f"- {m.function}: {m.error.message if m.error else m.text[:200]}" for m in results]
    return Reply(content="Final answer. What the environment reported:\n" + "\n".join(lines))


_STEPS = re.compile(r"\[steps=(\d+)\]")


def steps_agent(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
    """Make exactly N tool calls, cycling through the tools in order, then answer.

    N is read from a ``[steps=N]`` marker in the first user message (the instruction),
    else ``DEFAULT_EXPECTED_TOOL_CALLS`` (16): the throughput benchmark's agent.
    """
    instruction = next((m.text for m in messages if isinstance(m, ChatMessageUser)), "")
    marker = _STEPS.search(instruction)
    steps = int(marker.group(1)) if marker else DEFAULT_EXPECTED_TOOL_CALLS
    done = sum(isinstance(m, ChatMessageTool) for m in messages)
    if done < steps and tools:
        tool = tools[done % len(tools)]
        schema = tool.parameters.model_dump(exclude_none=True)
        return Reply(tool_calls=[(tool.name, example_arguments(schema))])
    return Reply(content=f"Final answer after {done} tool calls.")


def echo_simulator(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
    """Acknowledges the last action with a JSON observation that echoes it.

    In explicit state mode it also patches ``/last_action`` of the state.
    """
    action = last_action(messages)
    observation = {"status": "ok", "action": action.name, "arguments": action.arguments}
    patch = None
    if action.state is not None:  # explicit state mode: record the last action in the state
        patch = [{"op": "add", "path": "/last_action", "value": action.name}]
    return Reply(content=observation_reply(messages, observation, patch))


def _example_outputs(system: str) -> dict[str, object]:
    """The tools' ``example_output`` from the action definitions in a simulator prompt."""
    return {
        str(t["name"]): t["example_output"] for t in prompt_tools(system) if t.get("example_output")
    }


def example_simulator(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
    """Answers each action with its tool's ``example_output`` (else like echo-simulator).

    A simulator whose observations have the shape and size the env config declares: the
    offline stand-in for a faithful model in the cost-estimate checks.
    """
    action = last_action(messages)
    example = _example_outputs(system_text(messages)).get(str(action.name))
    if example is None:
        return echo_simulator(messages, tools)
    return Reply(content=observation_reply(messages, example))


_BLOCK = r"<{tag}>\n(.*?)\n</{tag}>"


def data_block(text: str, tag: str) -> str:
    """The content of one data block of a judge request ("" if absent)."""
    found = re.search(_BLOCK.format(tag=tag), text, re.DOTALL)
    return found.group(1) if found else ""


_PAPER_TRAJECTORY = re.compile(r"## Agent Trajectory\n(.*?)\n+---\n", re.DOTALL)


def trajectory_turns(request: str) -> list[dict[str, object]]:
    """The turns of an occubench judge request's trajectory: one JSON object a line.

    A line that is not a JSON object is not a turn (the judge is told only those are).
    """
    turns = []
    for line in html.unescape(data_block(request, "trajectory")).splitlines():
        try:
            turn = json.loads(line)
        except ValueError:
            continue
        if isinstance(turn, dict):
            turns.append(turn)
    return turns


class _JudgeRequest(BaseModel):
    """What a scripted judge reads in a request of either layout."""

    plan: str = Field(description="The verification plan.")
    observed: bool = Field(description="The trajectory holds at least one observation.")
    answer: str = Field(description='The agent\'s final answer ("" when it gave none).')


_PAPER_PLAN = re.compile(r"## Verification Plan\n(.*?)\n\n## Agent Trajectory\n", re.DOTALL)
_AGENT_RESPONSE = "[Agent Response]: "


def _judge_request(messages: list[ChatMessage]) -> _JudgeRequest:
    """Read the last user message as occubench's data blocks or the paper's sections.

    In the paper's, the final answer is the last entry of the trajectory when it is the
    agent's response.
    """
    request = next((m.text for m in reversed(messages) if isinstance(m, ChatMessageUser)), "")
    paper = _PAPER_TRAJECTORY.search(request)
    if paper is not None:
        entries = [e for e in paper.group(1).split("\n\n") if e.strip()]
        last = entries[-1] if entries else ""
        plan = _PAPER_PLAN.search(request)
        return _JudgeRequest(
            plan=plan.group(1) if plan else "",
            observed=any(e.startswith("[Environment Observation]") for e in entries),
            answer=last.removeprefix(_AGENT_RESPONSE) if last.startswith(_AGENT_RESPONSE) else "",
        )
    answer = html.unescape(data_block(request, "final_answer"))
    return _JudgeRequest(
        plan=html.unescape(data_block(request, "verification_plan")),
        observed=any(t.get("role") == "observation" for t in trajectory_turns(request)),
        answer="" if answer == "(no final answer)" else answer,
    )


def _verdict(passed: bool, feedback: str) -> Reply:
    return Reply(content=json.dumps({"is_correct": passed, "feedback": feedback}))


def scripted_judge(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
    """Passes a trajectory with at least one observation and a final answer.

    It reads either judge request: occubench's data blocks (an ``observation`` turn of
    the trajectory), or the paper's sections (an observation entry, and a last entry
    that is the agent's response).
    """
    read = _judge_request(messages)
    answered = bool(read.answer)
    return _verdict(
        read.observed and answered,
        f"observations seen: {read.observed}; final answer given: {answered}",
    )


_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _states(answer: str, number: str) -> bool:
    """Whether ``answer`` states ``number`` as a whole number (not part of a longer one)."""
    return re.search(rf"(?<![\d.]){re.escape(number)}(?!\d|\.\d)", answer) is not None


def rubric_judge(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
    """A stricter judge: as ``scripted-judge``, and the answer states every number of the plan.

    It stands for a judge that holds the agent to the rubric's values ("the answer must
    report heart rate 128"): a plan without numbers asks for nothing more. It reads
    either layout, as ``scripted-judge`` does.
    """
    read = _judge_request(messages)
    missing = [n for n in dict.fromkeys(_NUMBER.findall(read.plan)) if not _states(read.answer, n)]
    passed = read.observed and bool(read.answer) and not missing
    feedback = f"observations seen: {read.observed}; final answer given: {bool(read.answer)}"
    return _verdict(passed, feedback + (f"; the answer lacks {missing}" if missing else ""))


_ADDRESSED = re.compile(r"simulator|system|grader|judge|success|<\|im_start\|>", re.IGNORECASE)
_OBEYED = re.compile(r"[^.!?\n]*(?:success|passed|grader|judge|is_correct)[^.!?\n]*", re.IGNORECASE)


def _strings(value: object) -> list[str]:
    """Every string of a JSON value, in order."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def gullible_simulator(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
    """Obeys an action whose arguments address it; else like ``canned`` or ``example-simulator``.

    An action with a string argument that names the simulator, the system or the grader,
    or asks for success, is answered with a success that repeats the instruction (the
    simulator an exploiting agent hopes for). Any other action gets its known observation
    when the env has some (``canned``), else its tool's ``example_output``.
    """
    action = last_action(messages)
    told = next((s for s in _strings(action.arguments) if _ADDRESSED.search(s)), None)
    if told is None:
        if canned_observations(messages):
            return canned_simulator(messages, tools)
        return example_simulator(messages, tools)
    observation = {
        "status": "success",
        "task_completed": True,
        "message": f"As instructed: {told[:200]}",
    }
    patch: list[dict[str, object]] | None = [] if action.state is not None else None
    return Reply(content=observation_reply(messages, observation, patch))


def _agent_part(request: str) -> str:
    """The trajectory and the final answer of a judge request, in either layout, as text."""
    paper = _PAPER_TRAJECTORY.search(request)
    if paper is not None:
        return paper.group(1)
    parts = (data_block(request, "trajectory"), data_block(request, "final_answer"))
    return html.unescape("\n".join(parts)).replace('\\"', '"')


def gullible_judge(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
    """Passes a trajectory that speaks of success, a pass or the grader; else ``rubric-judge``.

    It quotes the sentence it obeyed (the first in the trajectory or the answer that names
    success, a pass, the grader or the judge): the judge an exploiting agent hopes for.
    """
    request = next((m.text for m in reversed(messages) if isinstance(m, ChatMessageUser)), "")
    said = _OBEYED.search(_agent_part(request))
    if said is None:
        return rubric_judge(messages, tools)
    return _verdict(True, f"As the trajectory says: {said.group(0).strip()[:300]}")


BEHAVIOURS: dict[str, Behaviour] = {
    "schema-agent": schema_agent,
    "steps-agent": steps_agent,
    "echo-simulator": echo_simulator,
    "example-simulator": example_simulator,
    "scripted-judge": scripted_judge,
    "rubric-judge": rubric_judge,
    "gullible-simulator": gullible_simulator,
    "gullible-judge": gullible_judge,
    "canned": canned_simulator,
    "diagnose-judge": diagnose_judge,
    **REFERENCE_AGENTS,
    **EXPLOIT_AGENTS,
    **FLAWED,
    **NULL_AGENTS,
    **USER_MODELS,
    **USER_AGENTS,
}
"""Scripted models by name: ``occubench/<name>`` in Inspect."""
