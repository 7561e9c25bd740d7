"""Read a judge's verdict from the judge's own output, strictly."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from inspect_ai.model import CachePolicy, ChatMessage, GenerateConfig, Model
from pydantic import BaseModel, Field

from occubench.calls import ask
from occubench.text import json_text, loads


class Vote(BaseModel):
    """One judge vote."""

    is_correct: bool | None = Field(description="The verdict; None when the output was invalid.")
    feedback: str = Field(
        default="", description="The judge's reasons, or why the vote is invalid."
    )
    raw: str = Field(default="", description="The judge's output, as given.")


class VerdictParseError(ValueError):
    """The output holds no verdict object."""


def parse_verdict(text: str) -> Vote:
    """Parse ``{"is_correct": bool, "feedback": str}`` from a judge's output.

    The output should be that JSON object alone. Every top-level JSON object in the text
    is read, in text order (alone, fenced or embedded in prose alike); those with a
    boolean ``is_correct`` are verdicts, and the last one is the vote. Verdicts that
    disagree make the output unreadable (a judge that drafts ``true`` and ends ``false``,
    or quotes an agent's fake verdict next to its own, has not given one verdict).

    Raises:
        VerdictParseError: no object with a boolean ``is_correct``, or verdicts that
            disagree.
    """
    verdicts = [vote for value in _objects(text) if (vote := _as_vote(value, text))]
    if not verdicts:
        raise VerdictParseError(f"no verdict object in: {text.strip()[:120]!r}")
    if len({v.is_correct for v in verdicts}) > 1:
        said = ", ".join(str(v.is_correct).lower() for v in verdicts)
        raise VerdictParseError(f"the output holds verdicts that disagree ({said}), not one")
    return verdicts[-1]


def _objects(text: str) -> list[Any]:
    """The top-level JSON objects of ``text`` in order (an object inside another is part of it)."""
    decoded, decoder, found = json_text(text), json.JSONDecoder(), []
    start = decoded.find("{")
    while start >= 0:
        try:
            value, end = decoder.raw_decode(decoded, start)
        except (json.JSONDecodeError, RecursionError):
            start = decoded.find("{", start + 1)
            continue
        found.append(value)
        start = decoded.find("{", end)
    return found


def _as_vote(value: Any, raw: str) -> Vote | None:
    if not isinstance(value, dict) or not isinstance(value.get("is_correct"), bool):
        return None
    feedback = value.get("feedback", "")
    return Vote(is_correct=value["is_correct"], feedback=str(feedback), raw=raw)


_GREEDY_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_paper_verdict(text: str) -> Vote:
    """Read a verdict as the release reads it: never unreadable, a failure is a False vote.

    The first ``{`` to the last ``}`` (greedy, across lines) is parsed as JSON and
    ``bool(is_correct)`` is the vote (so ``"is_correct": "false"``, a non-empty string,
    counts as true, as it does there); anything else is a False vote.
    """
    found = _GREEDY_OBJECT.search(text or "")
    try:
        value = loads(found.group()) if found else None
    except (json.JSONDecodeError, RecursionError):
        value = None
    if not isinstance(value, dict):
        return Vote(is_correct=False, feedback="Verification error", raw=text or "")
    return Vote(
        is_correct=bool(value.get("is_correct", False)),
        feedback=str(value.get("feedback", "")),
        raw=text,
    )


def majority(votes: list[Vote]) -> bool:
    """Strict majority of ``True`` among all k votes; invalid votes and ties fail."""
    return sum(v.is_correct is True for v in votes) * 2 > len(votes)


def combined_verdict(
    checks_passed: int | None,
    checks_total: int | None,
    votes_yes: int | None,
    votes_total: int | None,
    *,
    exploit_zeroed: bool = False,
) -> bool:
    """The combination rule (the scorer's module doc), from counts.

    Every check that ran passed, and the judge, if it voted, gave a strict majority for
    'correct', and the exploit guard did not grade the pass a failure
    (``exploit_guard=zero``). The one statement of the rule: the scorer grades with it,
    and ``verify`` recomputes each logged verdict from the checks and votes its sample
    records.
    """
    checks_hold = checks_total is None or checks_passed == checks_total
    judge_holds = votes_total is None or (votes_yes or 0) * 2 > votes_total
    return checks_hold and judge_holds and not exploit_zeroed


async def ask_verdict(
    model: Model,
    messages: Sequence[ChatMessage],
    *,
    retries: int,
    reask: str,
    cache: bool | CachePolicy = False,
    config: GenerateConfig | None = None,
) -> Vote:
    """Ask a judge for one verdict, re-asked ``retries`` times while it gives none.

    Returns:
        The vote, or an invalid vote (``is_correct`` None) saying why, with the last output.
    """
    asked = await ask(
        model,
        messages,
        parse_verdict,
        attempts=retries + 1,
        reask=lambda _: reask,
        errors=(VerdictParseError,),
        cache=cache,
        config=config,
    )
    if asked.value is not None:
        return asked.value
    return Vote(is_correct=None, feedback=f"invalid vote: {asked.problem}", raw=asked.last_text)
