"""The failure taxonomy: why an agent's trajectory failed, one class per failure.

A failed trajectory gets the class of the first thing that made it fail, so that fixing
that one thing is what the class points to. ``simulator_caused`` is not the agent's
failure: the trajectory rests on an observation that contradicts the environment's own
configuration (its initial state, its tools' outputs, or an earlier observation with no
change in between), and is reported apart.
"""

from __future__ import annotations

from enum import Enum


class FailureClass(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """Why a trajectory failed (see ``DEFINITIONS``)."""

    SKIPPED_CHECK = "skipped_check"
    WRONG_ORDER = "wrong_order"
    VIOLATED_CONSTRAINT = "violated_constraint"
    DEGRADED_VALUE = "degraded_value"
    ABANDONED_AFTER_ERROR = "abandoned_after_error"
    GAVE_UP_EARLY = "gave_up_early"
    TOOL_MISUSE = "tool_misuse"
    WRONG_ANSWER = "wrong_answer"
    SIMULATOR_CAUSED = "simulator_caused"


DEFINITIONS: dict[FailureClass, str] = {
    FailureClass.SKIPPED_CHECK: "Skipped a required check: the agent answered without a look-up "
    "or verification step the task requires (a required tool was never called, or never with "
    "the entity the task names).",
    FailureClass.WRONG_ORDER: "Wrong order: the steps were all taken, but not in the order the "
    "task requires (acted before checking, confirmed before reading).",
    FailureClass.VIOLATED_CONSTRAINT: "Violated a stated constraint: the agent did something the "
    "task or the environment forbids (a forbidden action, a limit passed, an excluded value "
    "stated).",
    FailureClass.DEGRADED_VALUE: "Used a degraded or missing value: the agent took data that was "
    "truncated, nulled, missing or stale at face value and built its answer on it, without "
    "reading it again.",
    FailureClass.ABANDONED_AFTER_ERROR: "Abandoned after an error: a tool returned an error and "
    "the agent stopped, or answered without the data, instead of retrying or working around it.",
    FailureClass.GAVE_UP_EARLY: "Gave up early: the agent stopped with the task unfinished and no "
    "error to blame (no final answer, the call limit reached in loops, or a declared inability).",
    FailureClass.TOOL_MISUSE: "Tool misuse: calls the environment could not take (wrong or "
    "missing arguments, an unknown tool, a malformed call) that kept the agent from the data.",
    FailureClass.WRONG_ANSWER: "Wrong final answer: the needed data was read correctly, but the "
    "final answer states a wrong or incomplete result (a computation, a choice, a value).",
    FailureClass.SIMULATOR_CAUSED: "Simulator-caused: the failure rests on an observation that "
    "contradicts the environment's configuration (initial state, tool outputs, earlier "
    "observations): the environment, not the agent, went wrong.",
}
"""What each class means; the judge is given these words."""
