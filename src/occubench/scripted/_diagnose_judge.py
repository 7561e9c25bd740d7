"""``diagnose-judge``: an offline verifier for ``occubench diagnose``, by fixed rules.

It reads the blocks of a diagnosis request and gives the first class whose rule holds:

1. ``simulator_caused``: an online simulator check failed on a kept observation (the step
   the ``<simulator_checks>`` block names first).
2. ``tool_misuse``: a call was refused (a ``tool error`` step).
3. ``wrong_order``: an ``order`` check failed (the step of the tool called too early).
4. ``violated_constraint``: a ``tool_not_called`` check failed (the forbidden call's step) or
   an ``answer_excludes`` check failed (the answer, step 0).
5. ``degraded_value``: a degraded observation was injected and the agent never called that
   tool again (that step).
6. ``abandoned_after_error``: the last result before the answer was an error (that step).
7. ``gave_up_early``: no final answer, the loop ended without one, or the answer declares
   the task undone (the last step).
8. ``skipped_check``: a ``tool_called`` check failed (the answer, step 0).
9. ``wrong_answer``: otherwise (the answer, step 0).
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageUser
from inspect_ai.tool import ToolInfo

from occubench.scripted._reply import Reply

_BLOCK = r"<{tag}>\n(.*?)\n</{tag}>"
_STEP = re.compile(r"^\[step (\d+)\] (call|result|tool error) ?(.*)$", re.MULTILINE)
_CALL = re.compile(r"^([\w.-]+)\((.*)\)$", re.DOTALL)
_FAILED_CHECK = re.compile(r"^FAILED: (\{.*?\}): ", re.MULTILINE)
_GIVING_UP = re.compile(r"\b(could not|cannot|can't|unable|give up|gave up)\b", re.IGNORECASE)


def _block(text: str, tag: str) -> str:
    found = re.search(_BLOCK.format(tag=tag), text, re.DOTALL)
    return html.unescape(found.group(1)) if found else ""


def _steps(trajectory: str) -> dict[int, dict[str, str]]:
    steps: dict[int, dict[str, str]] = {}
    for number, kind, rest in _STEP.findall(trajectory):
        steps.setdefault(int(number), {})[kind] = rest
    return steps


def _tool(step: dict[str, str]) -> str:
    found = _CALL.match(step.get("call", ""))
    return found.group(1) if found else ""


def _failed_checks(grading: str) -> list[dict[str, Any]]:
    checks = []
    for text in _FAILED_CHECK.findall(grading):
        try:
            checks.append(json.loads(text))
        except json.JSONDecodeError:
            continue
    return checks


def _is_error(result: str) -> bool:
    try:
        value = json.loads(result)
    except json.JSONDecodeError:
        return False
    return isinstance(value, dict) and "error" in value


def _first_step(tag_block: str) -> int | None:
    found = re.search(r"\[step (\d+)\]", tag_block)
    return int(found.group(1)) if found else None


def _out_of_order(tools: list[str], calls: dict[int, str]) -> tuple[int, str] | None:
    """The step of the first tool called before one the order puts ahead of it."""
    first = {t: min((n for n, c in calls.items() if c == t), default=None) for t in tools}
    for i, early in enumerate(tools):
        for late in tools[i + 1 :]:
            before, after = first[early], first[late]
            if after is not None and (before is None or after < before):
                return after, f"{late} was called before {early}"
    return None


def _classify(request: str) -> tuple[str, int, str]:
    steps = _steps(_block(request, "trajectory"))
    answer = _block(request, "final_answer")
    grading = _block(request, "grading")
    faults = _block(request, "injected_faults")
    failed = _failed_checks(grading)
    kinds = {c.get("kind") for c in failed}
    calls = {n: _tool(s) for n, s in steps.items()}
    last = max(steps, default=0)

    simulator = _first_step(_block(request, "simulator_checks"))
    if simulator is not None:
        return "simulator_caused", simulator, "a kept observation failed an online check"
    refused = [n for n, s in steps.items() if "tool error" in s]
    if refused:
        return "tool_misuse", refused[0], "a call the environment could not take"
    for check in (c for c in failed if c.get("kind") == "order"):
        wrong = _out_of_order(check["tools"], calls)
        if wrong is not None:
            return "wrong_order", wrong[0], wrong[1]
    for check in failed:
        if check.get("kind") == "tool_not_called":
            step = min((n for n, c in calls.items() if c == check.get("tool")), default=0)
            return "violated_constraint", step, f"called {check.get('tool')}, which is forbidden"
        if check.get("kind") == "answer_excludes":
            return "violated_constraint", 0, "the answer states an excluded value"
    for line in faults.splitlines():
        found = re.match(r"\[step (\d+)\] degraded observation", line)
        if found:
            step = int(found.group(1))
            if not any(c == calls.get(step) for n, c in calls.items() if n > step):
                return "degraded_value", step, "a degraded observation was taken at face value"
    if last and _is_error(steps[last].get("result", "")):
        return "abandoned_after_error", last, "the agent stopped after an error"
    no_answer = answer in ("", "(no final answer)") or "stop reason: answered" not in grading
    if no_answer or _GIVING_UP.search(answer):
        return "gave_up_early", last, "the agent stopped with the task undone"
    if "tool_called" in kinds:
        return "skipped_check", 0, "a required look-up was never made"
    return "wrong_answer", 0, "the data was read but the answer is wrong"


def diagnose_judge(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
    """One diagnosis vote by the module's rules."""
    request = next((m.text for m in reversed(messages) if isinstance(m, ChatMessageUser)), "")
    category, step, why = _classify(request)
    return Reply(
        content=json.dumps({"category": category, "evidence_step": step, "explanation": why})
    )
