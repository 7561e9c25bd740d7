"""Grading: deterministic checks, the k-vote judge, and the rule combining them."""

from occubench.grading._checks import CheckResult, ToolCall, needs_state, run_check, run_checks
from occubench.grading._grade import SCORER_NAME, Grade, SubmittedGrade
from occubench.grading._prompt import (
    PAPER_VERIFIER_PROMPT,
    VERIFIER_SYSTEM_PROMPT,
    paper_verifier_request,
    task_verifier_request,
    verifier_request,
)
from occubench.grading._regrade import (
    REGRADE_METADATA,
    Regrade,
    RegradedLog,
    VerifierLayout,
    regrade_logs,
)
from occubench.grading._regrade_plan import default_regrade_dir, protocol_layout
from occubench.grading._scorer import (
    VERIFIER_FAILED,
    VerifierError,
    choose_judge,
    final_answer,
    grade_score,
    grade_trajectory,
    judge_model,
    occubench_scorer,
)
from occubench.grading._trajectory import (
    block,
    neutralize,
    render_paper_trajectory,
    render_trajectory,
    tool_calls,
)
from occubench.grading._verdict import (
    VerdictParseError,
    Vote,
    ask_verdict,
    combined_verdict,
    majority,
    parse_paper_verdict,
    parse_verdict,
)

__all__ = [
    "REGRADE_METADATA",
    "VERIFIER_FAILED",
    "Regrade",
    "RegradedLog",
    "VerifierLayout",
    "regrade_logs",
    "default_regrade_dir",
    "protocol_layout",
    "PAPER_VERIFIER_PROMPT",
    "paper_verifier_request",
    "task_verifier_request",
    "parse_paper_verdict",
    "render_paper_trajectory",
    "SCORER_NAME",
    "Grade",
    "VERIFIER_SYSTEM_PROMPT",
    "CheckResult",
    "SubmittedGrade",
    "ToolCall",
    "VerdictParseError",
    "VerifierError",
    "Vote",
    "ask_verdict",
    "choose_judge",
    "final_answer",
    "grade_score",
    "grade_trajectory",
    "judge_model",
    "combined_verdict",
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
    "block",
]
