"""Model calls that survive what real endpoints do: unreadable answers, sample restarts.

``resilient(model)`` gives the model every occubench run uses: an unreadable provider
answer is retried at the call like a 5xx, and a restarted sample replays the calls its
earlier attempt already paid for. ``CallCounts`` (in each sample's store) counts both.
``gated_calls`` puts a gate before every call (the spending limit's).
"""

from occubench.calls._answers import (
    CallCounts,
    UnreadableAnswer,
    answer_problem,
    check_answer,
    count_unreadable,
    is_unreadable,
    watch_answers,
)
from occubench.calls._model import CallGate, ResilientModel, gated_calls, resilient
from occubench.calls._replay import AttemptChain, ReplayHooks, current_chain, request_key

__all__ = [
    "AttemptChain",
    "CallCounts",
    "CallGate",
    "ReplayHooks",
    "ResilientModel",
    "UnreadableAnswer",
    "answer_problem",
    "check_answer",
    "count_unreadable",
    "current_chain",
    "gated_calls",
    "is_unreadable",
    "request_key",
    "resilient",
    "watch_answers",
]
