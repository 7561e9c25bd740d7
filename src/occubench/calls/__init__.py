"""Model calls that survive what real endpoints do: unreadable answers, sample restarts.

``resilient(model)`` gives the model every occubench run uses: an unreadable provider
answer is retried at the call like a 5xx, and a restarted sample replays the calls its
earlier attempt already paid for, or, on resume, the calls an interrupted run journaled
for it (``journaled_calls``: the runner's call journals in the log folder).
``CallCounts`` (in each sample's store) counts both.
``ask`` is the generate, parse, re-ask loop every role uses; ``approx_tokens`` and its
kin count tokens roughly (the scripted models' usage, the estimate before a run);
``gated_calls`` puts a gate before every call (the spending limit's); ``failure_text``
says a failed call in a few words (the provider's own message).
``AdaptiveLimit`` is the window of requests in flight to one model that follows the
endpoint (grows with answers, halves on 429s, waits out Retry-After); ``limit_for``
gives the process's one per model and ``concurrency_report`` what each reached.
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
from occubench.calls._asking import Asked, ask
from occubench.calls._concurrency import (
    AdaptiveLimit,
    Attempt,
    ModelConcurrency,
    concurrency_report,
    limit_for,
    reset_concurrency,
)
from occubench.calls._failures import failure_text, refusal_status
from occubench.calls._journal import (
    JOURNAL_FOLDER,
    Journal,
    JournalEntry,
    JournalHeader,
    JournalPlace,
    JournalProblem,
    config_digest,
    ignored_journals,
    journaled_calls,
    read_journal,
    remove_all_journals,
    remove_journals,
    resumed_calls,
)
from occubench.calls._model import (
    TRANSPORT_SETTINGS,
    CallGate,
    ResilientModel,
    gated_calls,
    named_model,
    quiet_startup,
    resilient,
    sample_cache_key,
)
from occubench.calls._replay import AttemptChain, ReplayHooks, current_chain, request_key
from occubench.calls._tokens import (
    approx_tokens,
    message_tokens,
    prompt_tokens,
    prompt_tokens_ceiling,
    reply_tokens,
)

__all__ = [
    "JOURNAL_FOLDER",
    "Journal",
    "JournalEntry",
    "JournalHeader",
    "JournalPlace",
    "JournalProblem",
    "config_digest",
    "ignored_journals",
    "journaled_calls",
    "read_journal",
    "remove_all_journals",
    "remove_journals",
    "resumed_calls",
    "TRANSPORT_SETTINGS",
    "AdaptiveLimit",
    "Attempt",
    "AttemptChain",
    "CallCounts",
    "CallGate",
    "ModelConcurrency",
    "ReplayHooks",
    "ResilientModel",
    "UnreadableAnswer",
    "answer_problem",
    "check_answer",
    "concurrency_report",
    "count_unreadable",
    "current_chain",
    "failure_text",
    "gated_calls",
    "is_unreadable",
    "limit_for",
    "request_key",
    "named_model",
    "quiet_startup",
    "reset_concurrency",
    "resilient",
    "sample_cache_key",
    "watch_answers",
    "approx_tokens",
    "message_tokens",
    "prompt_tokens",
    "refusal_status",
    "reply_tokens",
    "ask",
    "Asked",
    "prompt_tokens_ceiling",
]
