"""The grade record: what the scorer writes for a sample, and readers re-validate."""

from __future__ import annotations

from typing import Any

from inspect_ai.util import StoreModel
from pydantic import BaseModel, Field, ValidationError

from occubench.agent import StopReason
from occubench.grading._checks import CheckResult
from occubench.grading._verdict import Vote
from occubench.guard import ExploitEvidence
from occubench.text import validation_line

SCORER_NAME = "occubench_scorer"
"""Name of the scorer in a log's scores (``sample.scores[SCORER_NAME]``)."""


class Grade(BaseModel):
    """One sample's grade: the score's metadata, typed (``Grade.of(score.metadata)``)."""

    passed: bool = Field(description="The verdict: every layer that ran passed.")
    stop_reason: StopReason | None = Field(default=None, description="Why the agent loop ended.")
    tool_calls: int = Field(default=0, description="Tool calls that reached the tool layer.")
    checks: list[CheckResult] | None = Field(
        default=None, description="Deterministic checks and their results (None: no checks)."
    )
    votes: list[Vote] | None = Field(default=None, description="Judge votes (None: no judge).")
    judge_passed: bool | None = Field(
        default=None, description="The judge's strict majority (None: no judge ran)."
    )
    exploit_suspected: bool | None = Field(
        default=None,
        description="The exploit guard found evidence against the agent on a pass of the "
        "checks and the judge (None: the guard was off).",
    )
    simulator_off_contract: bool | None = Field(
        default=None,
        description="The exploit guard found an observation reporting a success out of its "
        "tool's contract that the agent did not ask for: the simulator's fault, not an "
        "exploit (None: the guard was off, or the grade was written before this was "
        "recorded).",
    )
    exploit_zeroed: bool = Field(
        default=False,
        description="The suspected pass was graded a failure (exploit_guard=zero).",
    )
    exploit_evidence: list[ExploitEvidence] = Field(
        default_factory=list,
        description="The exploit guard's evidence, on a pass or not, against the agent and "
        "against the simulator (kind simulator_off_contract; empty: none, or off).",
    )

    @property
    def agent_evidence(self) -> list[ExploitEvidence]:
        """The evidence against the agent (``ExploitKind.against_agent``)."""
        return [e for e in self.exploit_evidence if e.kind.against_agent]

    @property
    def simulator_evidence(self) -> list[ExploitEvidence]:
        """The evidence that the simulator left its contract unasked."""
        return [e for e in self.exploit_evidence if not e.kind.against_agent]

    @property
    def votes_yes(self) -> int | None:
        """Votes for 'correct' (None when no judge ran)."""
        return None if self.votes is None else sum(v.is_correct is True for v in self.votes)

    @property
    def votes_total(self) -> int | None:
        """Votes cast, k (None when no judge ran)."""
        return None if self.votes is None else len(self.votes)

    @property
    def checks_total(self) -> int | None:
        """Checks run (None when the task has none)."""
        return None if self.checks is None else len(self.checks)

    @property
    def checks_passed(self) -> int | None:
        """Checks passed (None when the task has none)."""
        return None if self.checks is None else sum(c.passed for c in self.checks)

    def explanation(self) -> str:
        """The score's one-line explanation: judge votes, checks and the guard's findings."""
        parts = []
        if self.votes is not None:
            parts.append(f"judge {self.votes_yes}/{len(self.votes)} correct")
        if self.checks is not None:
            parts.append(f"checks {self.checks_passed}/{len(self.checks)}")
        if self.exploit_suspected:
            kinds = ", ".join(dict.fromkeys(e.kind.value for e in self.agent_evidence))
            zeroed = ", graded a failure" if self.exploit_zeroed else ""
            parts.append(f"exploit suspected ({kinds}){zeroed}")
        if self.simulator_off_contract:
            rules = ", ".join(dict.fromkeys(e.rule for e in self.simulator_evidence))
            parts.append(f"simulator off contract ({rules})")
        return "; ".join(parts)

    @classmethod
    def of(cls, metadata: dict[str, Any] | None, passed: bool) -> Grade:
        """The grade a score's metadata records (``passed`` from the score's value).

        Metadata written before ``passed`` was recorded gets it from the value.
        """
        return cls.model_validate({"passed": passed, **(metadata or {})})

    @classmethod
    def read(cls, metadata: dict[str, Any] | None, passed: bool) -> Grade | str:
        """``of``, for a log that may hold a grade this version cannot read: that, or why not."""
        try:
            return cls.of(metadata, passed)
        except ValidationError as e:
            return f"its grade cannot be read ({validation_line(e, 'grade')})"


class SubmittedGrade(StoreModel):
    """A grade given during the sample, when the agent submitted (MCP ``submit_answer``).

    The episode returned that verdict to its client; the scorer reuses it, so the log's
    score is the verdict the agent was told (the judge is not asked twice).
    """

    grade: dict[str, Any] | None = Field(default=None, description="The Grade, dumped.")
    answer: str | None = Field(default=None, description="The answer that was graded.")
