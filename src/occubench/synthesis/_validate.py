"""Stage d: static validation of an environment config and of a task in it.

Run on every generated or repaired config and task (the problems found are sent back
to the generator, see ``generate_json``), and again before any agent run. A problem is
one line of text that names the place and what is wrong.
"""

from __future__ import annotations

import re

import jsonschema

from occubench.dataset import (
    AnswerContainsCheck,
    AnswerExcludesCheck,
    Check,
    EnvConfig,
    OrderCheck,
    StateEqualsCheck,
    ToolCalledCheck,
    ToolNotCalledCheck,
    ToolSpec,
    check_tool,
)
from occubench.grading import ToolCall, run_checks
from occubench.synthesis._records import TaskDraft

MIN_TOOLS = 2
MAX_TOOLS = 10
TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
"""Tool names every provider accepts as function names."""

TEMPLATE_SLOTS = ("initial_state}", "state_descriptions}", "action_set_definitions}")
"""Release-template placeholders. ``render_system_prompt`` appends the state and tools only
to a prompt without them, so a generated prompt holding one would leave it unfilled."""

_CALL_LIKE = re.compile(r"\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\s*\(")
_PLAN_LINE = re.compile(r"^\s*\d+\.\s*Call\s+`?([A-Za-z_][A-Za-z0-9_]*)`?", re.MULTILINE)


def validate_env(env: EnvConfig) -> list[str]:
    """Problems of an environment config (an empty list when it is usable)."""
    problems: list[str] = []
    tools = env.action_set_definitions
    if not MIN_TOOLS <= len(tools) <= MAX_TOOLS:
        problems.append(
            f"action_set_definitions: {len(tools)} tools; need {MIN_TOOLS} to {MAX_TOOLS}"
        )
    seen: set[str] = set()
    for i, tool in enumerate(tools):
        where = f"action_set_definitions[{i}] ({tool.name})"
        if tool.name in seen:
            problems.append(f"{where}: duplicate tool name {tool.name!r}")
        seen.add(tool.name)
        if not TOOL_NAME.match(tool.name):
            problems.append(f"{where}: name must be letters, digits and underscores")
        if not tool.description.strip():
            problems.append(f"{where}: empty description")
        problems += [f"{where}.{field}: {message}" for field, message in check_tool(tool).errors]
        if not isinstance(tool.example_output, dict):
            problems.append(f"{where}.example_output: must be a JSON object")
    prompt = env.world_model_system_prompt
    if not prompt.strip():
        problems.append("world_model_system_prompt: empty")
    slots = [s for s in TEMPLATE_SLOTS if s in prompt]
    if slots:
        problems.append(
            f"world_model_system_prompt: holds template placeholders ({', '.join(slots)}); "
            "write no placeholders, the harness appends the state and the tools"
        )
    if not env.task_initial_state:
        problems.append("task_initial_state: empty; it must hold the records the tasks need")
    undescribed = [k for k in env.task_initial_state if k not in env.state_description]
    if undescribed:
        problems.append(f"state_description: no entry for state keys {undescribed}")
    return problems


def validate_task(task: TaskDraft, env: EnvConfig) -> list[str]:
    """Problems of a task in ``env``: unknown tools, calls that break the schemas, ..."""
    where = f"task (difficulty {task.difficulty_level})"
    tools = {t.name: t for t in env.action_set_definitions}
    problems: list[str] = []

    def known(name: str, place: str) -> bool:
        if name not in tools:
            problems.append(f"{where}.{place}: unknown tool {name!r}; tools: {sorted(tools)}")
            return False
        return True

    for i, call in enumerate(task.plan_calls):
        if known(call.tool, f"plan_calls[{i}]"):
            for error in jsonschema.Draft7Validator(tools[call.tool].parameters).iter_errors(
                call.arguments
            ):
                problems.append(
                    f"{where}.plan_calls[{i}] ({call.tool}): arguments break the tool's schema: "
                    f"{error.message}"
                )
    for name in dict.fromkeys(
        _CALL_LIKE.findall(task.solution_plan) + _PLAN_LINE.findall(task.solution_plan)
    ):
        known(name, "solution_plan")
    planned = [c.tool for c in task.plan_calls]
    written = _PLAN_LINE.findall(task.solution_plan)
    if written and written != planned:
        problems.append(f"{where}: solution_plan calls {written} but plan_calls lists {planned}")
    problems += _check_problems(task, tools, where)
    return problems


def _check_problems(task: TaskDraft, tools: dict[str, ToolSpec], where: str) -> list[str]:
    problems: list[str] = []
    contains: set[str] = set()
    excludes: set[str] = set()
    for i, check in enumerate(task.checks):
        place = f"{where}.checks[{i}] ({check.kind})"
        names = (
            [check.tool]
            if isinstance(check, ToolCalledCheck | ToolNotCalledCheck)
            else check.tools
            if isinstance(check, OrderCheck)
            else []
        )
        unknown = [n for n in names if n not in tools]
        if unknown:
            problems.append(f"{place}: unknown tool(s) {unknown}; tools: {sorted(tools)}")
        elif isinstance(check, ToolCalledCheck):
            props = tools[check.tool].parameters.get("properties") or {}
            extra = [k for k in check.arguments if k not in props]
            if extra:
                problems.append(f"{place}: {check.tool} has no parameter(s) {extra}")
        if isinstance(check, StateEqualsCheck):
            problems.append(
                f"{place}: state checks need the explicit state mode, which "
                "synthesized datasets do not use; use the other kinds"
            )
        if isinstance(check, AnswerContainsCheck):
            contains |= {v.casefold() for v in check.values}
        if isinstance(check, AnswerExcludesCheck):
            excludes |= {v.casefold() for v in check.values}
    if contains & excludes:
        both = sorted(contains & excludes)
        problems.append(f"{where}.checks: values both required and excluded: {both}")
    if problems:
        return problems
    answer_kinds = AnswerContainsCheck | AnswerExcludesCheck
    tool_checks: list[Check] = [c for c in task.checks if not isinstance(c, answer_kinds)]
    calls = [ToolCall(tool=c.tool, arguments=c.arguments) for c in task.plan_calls]
    for result in run_checks(tool_checks, calls, ""):
        if not result.passed:
            problems.append(
                f"{where}.checks: the plan itself fails {result.check} ({result.detail})"
            )
    return problems


def validate_instance(env: EnvConfig, task: TaskDraft) -> list[str]:
    """Problems of a task together with its environment."""
    return validate_env(env) + validate_task(task, env)
