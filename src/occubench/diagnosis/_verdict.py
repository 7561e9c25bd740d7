"""Read a diagnosis vote, and decide the class from k votes."""

from __future__ import annotations

import json
import re
from collections import Counter

from pydantic import BaseModel, Field

from occubench.diagnosis._taxonomy import FailureClass
from occubench.text import loads

_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


class DiagnosisParseError(ValueError):
    """The reply holds no diagnosis object with a known class."""


class ClassVote(BaseModel):
    """One vote of the judge on a failed trajectory."""

    category: FailureClass = Field(description="The class voted for.")
    evidence_step: int = Field(ge=0, description="The step cited (0: the final answer).")
    explanation: str = Field(default="", description="The judge's reason.")


def parse_vote(text: str) -> ClassVote:
    """Parse ``{"category", "evidence_step", "explanation"}`` from a reply (the last object).

    Raises:
        DiagnosisParseError: no object, an unknown class or a bad step.
    """
    candidates = [text.strip(), *reversed(_OBJECT.findall(text))]
    for candidate in candidates:
        try:
            value = loads(candidate)
        except json.JSONDecodeError:
            continue
        if not isinstance(value, dict):
            continue
        try:
            return ClassVote(
                category=FailureClass(str(value.get("category", "")).strip().lower()),
                evidence_step=int(value.get("evidence_step", 0)),
                explanation=str(value.get("explanation", "")),
            )
        except (ValueError, TypeError) as e:
            raise DiagnosisParseError(f"not a diagnosis: {e}") from None
    raise DiagnosisParseError(f"no diagnosis object in: {text.strip()[:120]!r}")


class Diagnosis(BaseModel):
    """The class of one failed trajectory, decided by k votes."""

    category: FailureClass = Field(description="The class most votes gave (ties: taxonomy order).")
    evidence_step: int = Field(description="The step most of those votes cited (ties: earliest).")
    agreement: float = Field(description="Share of the valid votes for the class.")
    explanation: str = Field(description="The first explanation given for the class.")
    votes: list[ClassVote] = Field(description="The valid votes.")
    invalid_votes: int = Field(default=0, description="Votes whose reply could not be read.")


def decide(votes: list[ClassVote], invalid: int = 0) -> Diagnosis:
    """The plurality class of the votes, with its most cited step.

    Raises:
        ValueError: no valid vote.
    """
    if not votes:
        raise ValueError("no valid diagnosis vote")
    order = list(FailureClass)
    counts = Counter(v.category for v in votes)
    category = min(counts, key=lambda c: (-counts[c], order.index(c)))
    chosen = [v for v in votes if v.category is category]
    steps = Counter(v.evidence_step for v in chosen)
    step = min(steps, key=lambda s: (-steps[s], s))
    return Diagnosis(
        category=category,
        evidence_step=step,
        agreement=len(chosen) / len(votes),
        explanation=chosen[0].explanation,
        votes=votes,
        invalid_votes=invalid,
    )
