"""What the agent under test is told."""

from __future__ import annotations

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


def agent_system_prompt(scenario: str, date: str) -> str:
    """The agent's system prompt: scenario name and a fixed date, no wall clock."""
    return AGENT_SYSTEM_PROMPT.format(scenario=scenario, date=date)


def agent_input(instruction: str, plan: str | None) -> str:
    """The agent's first user message: the instruction, plus the plan in 'with plan' mode."""
    return instruction + (PLAN_SECTION.format(plan=plan) if plan else "")
