"""Read a judge's verdict from the judge's own output, strictly."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from inspect_ai.model import CachePolicy, ChatMessage, GenerateConfig, Model
from pydantic import BaseModel, Field

from occubench.asking import ask

_FENCED = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


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

    The output should be that JSON object alone; a fenced block or an object embedded in
    prose is accepted, and then the last well-formed verdict object is taken.

    Raises:
        VerdictParseError: when no object with a boolean ``is_correct`` is found.
    """
    for candidate in [text.strip(), *reversed(_FENCED.findall(text))]:
        vote = _as_vote(_loads(candidate.strip()), text)
        if vote is not None:
            return vote
    decoder = json.JSONDecoder()
    found: Vote | None = None
    for start in [m.start() for m in re.finditer(r"\{", text)]:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        found = _as_vote(value, text) or found
    if found is None:
        raise VerdictParseError(f"no verdict object in: {text.strip()[:120]!r}")
    return found


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


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
        value = json.loads(found.group()) if found else None
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
