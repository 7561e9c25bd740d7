"""Reference agents: scripted agents that follow the task's plan, each in its own way.

They read the plan the agent is given in "with plan" mode (``agent_input``): numbered
lines ``N. Call TOOL with {json arguments}.`` and a last line ``Answer: ...`` whose
``{{N.path}}`` placeholders stand for values of step N's observation (``beds[2].bed_id``).
Their state is their own conversation, replayed on every turn.

- ``careful``: retries errors, and re-reads every step until ``CONFIRMATIONS`` reads
  in a row are complete (every value the answer needs is present and not null) and
  identical. Truncated, missing and nulled data are noticed and read again; three
  agreeing reads include at least one clean read whenever a transient fault lasts at
  most two calls (the default fault duration), so stale data cannot pass either.
- ``no-retry``: gives up at the first error; takes data as it comes.
- ``trusting``: retries errors but takes whatever data comes back.

Offered a ``submit`` tool (an agent such as Inspect's ``react``), they give their final
answer with it instead of as text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageTool, ChatMessageUser
from inspect_ai.tool import ToolInfo

from occubench.scripted._reply import Behaviour, Reply

MAX_ATTEMPTS = 10
"""Calls a reference agent makes for one plan step before giving up."""

CONFIRMATIONS = 3
"""Identical complete reads in a row the careful agent needs to accept a step."""

_STEP = re.compile(r"^\s*(\d+)\. Call (\w+) with (\{.*\})\.\s*$", re.MULTILINE)
_ANSWER = re.compile(r"^Answer: (.+)$", re.MULTILINE)
_PLACEHOLDER = re.compile(r"\{\{(\d+)\.([^}]+)\}\}")
_PATH_PART = re.compile(r"[^.\[\]]+|\[\d+\]")
MISSING = object()


@dataclass
class Step:
    """One plan step: the call and the paths of its observation the answer needs."""

    tool: str
    arguments: dict[str, Any]
    paths: list[str]


@dataclass
class Plan:
    """A parsed plan."""

    steps: list[Step]
    answer: str


def parse_plan(text: str) -> Plan | None:
    """Read the plan out of the agent's instruction (None when there is none)."""
    answer = _ANSWER.search(text)
    steps = [Step(tool, json.loads(args), []) for _, tool, args in _STEP.findall(text)]
    if not steps or answer is None:
        return None
    for number, path in _PLACEHOLDER.findall(answer.group(1)):
        steps[int(number) - 1].paths.append(path)
    return Plan(steps=steps, answer=answer.group(1))


def resolve(value: Any, path: str) -> Any:
    """The value at ``path`` (``a.b[2].c``) or MISSING."""
    for part in _PATH_PART.findall(path):
        if part.startswith("["):
            index = int(part[1:-1])
            if not isinstance(value, list) or index >= len(value):
                return MISSING
            value = value[index]
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            return MISSING
    return value


def render_answer(plan: Plan, observations: dict[int, Any]) -> str:
    """Fill the answer template with the accepted observations."""

    def fill(match: re.Match[str]) -> str:
        value = resolve(observations.get(int(match.group(1))), match.group(2))
        return "unknown" if value is MISSING else ("null" if value is None else str(value))

    return _PLACEHOLDER.sub(fill, plan.answer)


class Decision(str, Enum):
    """What an agent does after the reads of one step so far."""

    CALL = "call"
    ACCEPT = "accept"
    GIVE_UP = "give_up"


@dataclass
class Result:
    """One tool result as the agent got it."""

    observation: Any
    error: str | None


Policy = Callable[[Step, list[Result]], Decision]


def careful(step: Step, results: list[Result]) -> Decision:
    """Accept CONFIRMATIONS complete, identical reads in a row; retry anything else."""

    def complete(r: Result) -> bool:
        return r.error is None and all(
            resolve(r.observation, p) not in (MISSING, None, "") for p in step.paths
        )

    last = results[-CONFIRMATIONS:]
    if len(last) == CONFIRMATIONS and all(complete(r) for r in last):
        if all(r.observation == last[0].observation for r in last):
            return Decision.ACCEPT
    return Decision.GIVE_UP if len(results) >= MAX_ATTEMPTS else Decision.CALL


def no_retry(step: Step, results: list[Result]) -> Decision:
    """Accept the first answer; give up if it is an error."""
    if not results:
        return Decision.CALL
    return Decision.GIVE_UP if results[-1].error else Decision.ACCEPT


def trusting(step: Step, results: list[Result]) -> Decision:
    """Retry errors; accept the first answer that is not an error."""
    if results and results[-1].error is None:
        return Decision.ACCEPT
    return Decision.GIVE_UP if len(results) >= MAX_ATTEMPTS else Decision.CALL


def _observation(text: str) -> Any:
    """A tool result's JSON, the text itself when none is.

    Lines an agent program put before the tool's text are skipped (Codex writes ``Wall
    time: ...`` and ``Output:`` first).
    """
    starts = [0] + [m.end() for m in re.finditer(r"\n(?=[{\[])", text)]
    for start in starts:
        try:
            return json.loads(text[start:])
        except json.JSONDecodeError:
            continue
    return text


def _results(messages: list[ChatMessage]) -> list[tuple[str, Result]]:
    """(tool, result) for every tool call answered so far, in order."""
    out = []
    for message in messages:
        if isinstance(message, ChatMessageTool):
            error = message.error.message if message.error else None
            observation = _observation(message.text)
            if error is None and isinstance(observation, dict) and "error" in observation:
                error = json.dumps(observation["error"])
            out.append((message.function or "", Result(observation, error)))
    return out


SUBMIT_TOOL = "submit"
"""The tool a reference agent answers with when it is offered (Inspect's react's name)."""


def final_reply(text: str, tools: list[ToolInfo]) -> Reply:
    """The final answer: through the submit tool when there is one, else as text."""
    if any(t.name == SUBMIT_TOOL for t in tools):
        return Reply(tool_calls=[(SUBMIT_TOOL, {"answer": text})])
    return Reply(content=text)


def follow_plan(policy: Policy) -> Behaviour:
    """A behaviour that walks the plan under ``policy``, replaying its own history."""

    def behaviour(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
        # the first user message that holds a plan: an agent program may send context first
        # (Codex its environment, before the task)
        plans = (parse_plan(m.text) for m in messages if isinstance(m, ChatMessageUser))
        plan = next((p for p in plans if p is not None), None)
        if plan is None:
            return final_reply("I was given no plan I can follow.", tools)
        history = _results(messages)
        position = 0
        accepted: dict[int, Any] = {}
        for number, step in enumerate(plan.steps, start=1):
            results: list[Result] = []
            decision = policy(step, results)
            while decision is Decision.CALL and position < len(history):
                results.append(history[position][1])
                position += 1
                decision = policy(step, results)
            if decision is Decision.CALL:
                return Reply(tool_calls=[(step.tool, step.arguments)])
            if decision is Decision.GIVE_UP:
                reason = results[-1].error if results else "no result"
                return final_reply(
                    f"I could not complete the task: {step.tool} failed ({reason}).", tools
                )
            accepted[number] = results[-1].observation
        return final_reply(render_answer(plan, accepted), tools)

    return behaviour


REFERENCE_AGENTS: dict[str, Behaviour] = {
    "careful": follow_plan(careful),
    "no-retry": follow_plan(no_retry),
    "trusting": follow_plan(trusting),
}
"""The reference agents by model name (``occubench/careful`` etc.)."""
