"""Grading: deterministic checks, the k-vote judge, and the rule combining them."""

from occubench.grading._checks import CheckResult, ToolCall, needs_state, run_check, run_checks
from occubench.grading._grade import SCORER_NAME, Grade
from occubench.grading._prompt import VERIFIER_SYSTEM_PROMPT, verifier_request
from occubench.grading._scorer import (
    VerifierError,
    final_answer,
    occubench_scorer,
)
from occubench.grading._trajectory import neutralize, render_trajectory, tool_calls
from occubench.grading._verdict import VerdictParseError, Vote, ask_verdict, majority, parse_verdict

__all__ = [
    "SCORER_NAME",
    "Grade",
    "VERIFIER_SYSTEM_PROMPT",
    "CheckResult",
    "ToolCall",
    "VerdictParseError",
    "VerifierError",
    "Vote",
    "ask_verdict",
    "final_answer",
    "majority",
    "needs_state",
    "neutralize",
    "occubench_scorer",
    "parse_verdict",
    "render_trajectory",
    "run_check",
    "run_checks",
    "tool_calls",
    "verifier_request",
]
