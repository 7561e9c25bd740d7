"""The compare rule: a simulator's answer and state held against the twin's, leaf by leaf.

One rule for every reader (the step-fidelity audit, the verdicts against the twin):

- two leaves are **equal** when both are numbers (booleans aside) within the relative
  tolerance of each other (``|a - b| <= tolerance * max(|a|, |b|)``), or otherwise the
  same JSON value (``1`` and ``true`` differ, ``"1"`` and ``1`` differ);
- an observation's **determined** leaves (``TwinStep.marking``) are compared at the same
  JSON Pointers in the answer: equal (matched), absent (missing), or present and unequal;
  leaves of the answer at pointers the twin's observation has no leaf at, outside its
  free subtrees, are **extra**;
- a **state** is compared leaf by leaf over the pointers either state has, the state the
  twin chose (``TwinStep.free_state``) aside: a leaf the simulator's state lacks, adds or
  holds with another value is a field that differs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, NamedTuple

from occubench.defaults import DEFAULT_TWIN_TOLERANCE
from occubench.simchecks import is_error
from occubench.twins._twin import FieldKind, Outcome, TwinStep, is_under, leaves


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def same_leaf(expected: Any, got: Any, tolerance: float = DEFAULT_TWIN_TOLERANCE) -> bool:
    """Whether two leaves are equal under the compare rule (module doc)."""
    if _number(expected) and _number(got):
        return bool(abs(expected - got) <= tolerance * max(abs(expected), abs(got)))
    return json.dumps(expected, sort_keys=True) == json.dumps(got, sort_keys=True)


def outcome_of(answer: Any) -> Outcome:
    """Success or error, as ``simchecks.is_error`` reads an answer (a non-object: success)."""
    return Outcome.ERROR if isinstance(answer, dict) and is_error(answer) else Outcome.SUCCESS


class FieldMatch(NamedTuple):
    """An answer's determined leaves against the twin's observation."""

    determined: int
    """The twin's determined leaves."""
    matched: int
    """Of those, equal in the answer."""
    missing: list[str]
    """Determined leaves the answer has no leaf at (JSON Pointers)."""
    differing: list[str]
    """Determined leaves the answer holds with another value."""
    extra: list[str]
    """Leaves of the answer the twin's observation has not, free subtrees aside."""


def compare_observation(
    step: TwinStep, answer: Any, tolerance: float = DEFAULT_TWIN_TOLERANCE
) -> FieldMatch:
    """The answer's determined leaves against the twin step's observation (module doc)."""
    marking = step.marking()
    got = dict(leaves(answer))
    expected = dict(leaves(step.observation))
    determined = [p for p, kind in marking.items() if kind is FieldKind.DETERMINED]
    missing = [p for p in determined if p not in got]
    differing = [
        p for p in determined if p in got and not same_leaf(expected[p], got[p], tolerance)
    ]
    extra = [p for p in got if p not in expected and not is_under(p, step.free)]
    return FieldMatch(
        determined=len(determined),
        matched=len(determined) - len(missing) - len(differing),
        missing=missing,
        differing=differing,
        extra=extra,
    )


class StateMatch(NamedTuple):
    """A simulator's state against the twin's, leaf by leaf."""

    fields: int
    """Leaves compared: every pointer either state has a leaf at."""
    matched: int
    """Of those, equal in both."""
    differing: list[str]
    """The pointers that differ (lacking, added or another value)."""


def compare_state(
    expected: dict[str, Any],
    got: dict[str, Any],
    tolerance: float = DEFAULT_TWIN_TOLERANCE,
    free: Sequence[str] = (),
) -> StateMatch:
    """The simulator's state against the twin's, ``free`` pointers aside (module doc)."""
    want, have = dict(leaves(expected)), dict(leaves(got))
    pointers = [p for p in [*want, *(p for p in have if p not in want)] if not is_under(p, free)]
    differing = [
        p
        for p in pointers
        if p not in want or p not in have or not same_leaf(want[p], have[p], tolerance)
    ]
    return StateMatch(
        fields=len(pointers), matched=len(pointers) - len(differing), differing=differing
    )
