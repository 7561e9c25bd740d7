"""Simulator checks: the rules that judge an observation, for the audit and for a run.

``occubench audit`` applies the rules (``_rules``) to probe trajectories before a run; with
``sim_checks`` on, a run applies them to every observation as it arrives
(``ObservationChecker``), re-asks the simulator once when one fails, and marks a sample
that kept a failed observation as simulator-suspect.
"""

from occubench.simchecks._checker import (
    CheckFailure,
    KeptAnswer,
    ObservationChecker,
    SimCheck,
    SimCheckKind,
)
from occubench.simchecks._extract import (
    ERROR_KEYS,
    id_values,
    is_error,
    is_id_key,
    is_read_tool,
    is_scalar,
    key_paths,
    known_values,
    record_collections,
    scalar_tokens,
    state_scalars,
    stem,
)
from occubench.simchecks._rules import (
    Finding,
    call_text,
    contradictions,
    differences,
    entity_facts,
    fabrication,
    omission,
    preview,
    same_answer,
    schema_match,
)

__all__ = [
    "ERROR_KEYS",
    "CheckFailure",
    "Finding",
    "KeptAnswer",
    "ObservationChecker",
    "SimCheck",
    "SimCheckKind",
    "call_text",
    "contradictions",
    "differences",
    "entity_facts",
    "fabrication",
    "id_values",
    "is_error",
    "is_id_key",
    "is_read_tool",
    "is_scalar",
    "key_paths",
    "known_values",
    "omission",
    "preview",
    "record_collections",
    "same_answer",
    "scalar_tokens",
    "schema_match",
    "state_scalars",
    "stem",
]
