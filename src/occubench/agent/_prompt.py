"""What the agent under test is told: its system prompt and its first user message.

Two styles (``MessageStyle``). The paper's (our paraphrase of the release's content
points, in their order; or the release's own system prompt with ``prompts_from``): a
professional assistant working in a simulated environment through tools, the task
scenario, the current date to keep in mind, four rules; then ``Task Instruction:`` with
the instruction and a request to solve it, or, with a plan, the plan to follow strictly
step by step. The date is the run's fixed date, not the wall clock (the release reads the
clock; a fixed date keeps a run reproducible). occubench's: the scenario, the fixed date,
how to act and answer, and the plan under its own heading.
"""

from __future__ import annotations

import datetime as dt

from occubench.config import ResolvedRun
from occubench.protocols import MessageStyle

AGENT_SYSTEM_PROMPT = """\
You are a professional handling "{scenario}" work. Today's date is {date}.

You act on the work environment only through the tools you are given; their results are \
the environment's responses. Look up what you need before you act, check results, and \
deal with errors sensibly. Do not invent data that the tools did not return.

When the task is done, reply with your final answer as plain text without calling a tool. \
State the outcome and every figure, identifier or decision the task asks for."""

PLAN_SECTION = """

A plan that solves this task:
{plan}"""

PAPER_SYSTEM_PROMPT = """\
You are a professional AI assistant carrying out tasks inside a simulated environment. \
You have tools that act on that environment, and your goal is to complete the task by \
calling them.

Task Scenario: {scenario}
Keep in mind that the current date is {date}.

IMPORTANT:
1. Think step by step before you act.
2. Use the tools to gather the information you need and to take actions.
3. Never make up a tool's response: always call the tool.
4. Complete the task as thoroughly as you can."""

PAPER_REQUEST = "Please solve the task above."

PAPER_PLAN = """\
Follow this plan strictly; it solves the task:
{plan}

Carry out the plan step by step."""

PLAN_MARKERS = ("A plan that solves this task:", "Follow this plan strictly")
"""The words that introduce a plan in each style (scripted agents look for them)."""


def paper_date(date: str) -> str:
    """A ``YYYY-MM-DD`` date as the release renders the time ("Monday, June 16, 2025")."""
    day = dt.date.fromisoformat(date)
    return f"{day:%A}, {day:%B} {day.day:02d}, {day.year}"


def agent_system_prompt(
    scenario: str,
    date: str,
    style: MessageStyle = MessageStyle.OCCUBENCH,
    template: str | None = None,
) -> str:
    """The agent's system prompt: the scenario name and the run's fixed date.

    ``template`` is the release's own system prompt (``prompts_from``, paper style): a
    ``str.format`` template with the scenario and the date, filled by ``fill_release``.
    """
    if style is MessageStyle.OCCUBENCH:
        return AGENT_SYSTEM_PROMPT.format(scenario=scenario, date=date)
    if template is not None:
        return template.format(scenario=scenario, date=paper_date(date))
    return PAPER_SYSTEM_PROMPT.format(scenario=scenario, date=paper_date(date))


def run_system_prompt(run: ResolvedRun, scenario: str) -> str:
    """The agent's system prompt in a run: its protocol's style, the release's words if read."""
    style, release = run.points.agent_messages, run.release
    template = release.agent_system if release is not None and style is MessageStyle.PAPER else None
    return agent_system_prompt(scenario, run.config.date, style, template)


def agent_input(
    instruction: str, plan: str | None, style: MessageStyle = MessageStyle.OCCUBENCH
) -> str:
    """The agent's first user message: the instruction, plus the plan in 'with plan' mode."""
    if style is MessageStyle.OCCUBENCH:
        return instruction + (PLAN_SECTION.format(plan=plan) if plan else "")
    request = PAPER_PLAN.format(plan=plan) if plan else PAPER_REQUEST
    return f"Task Instruction:\n{instruction}\n\n{request}"
