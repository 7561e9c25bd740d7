"""Executable twins: environments implemented as code, the ground truth a simulator is held to.

A twin (``Twin``) answers each tool call from the config's state exactly as its config
reads, marks the observation fields the config leaves open as free, and reports the
state change of each call. ``twins``/``twin_for`` find them (the package's own; a user's
folder only when named). ``TwinFidelity`` is the record of a simulator measured against
them (``occubench audit --twin``), read by the report, bundles and the leaderboard.
``shape_problems`` is the one rule of an observation fitting its tool's ``example_output``
(``error_shapes``: the error examples a config's prompt gives).
"""

from occubench.twins._compare import (
    FieldMatch,
    StateMatch,
    compare_observation,
    compare_state,
    outcome_of,
    same_leaf,
)
from occubench.twins._fidelity import (
    TWIN_FIDELITY_VERSION,
    Feeding,
    FidelitySummary,
    StepMatch,
    TwinFidelity,
    fidelity_json,
    fidelity_records,
    first_drifts,
    is_exact,
    read_fidelity,
    summaries,
    summarise,
    write_fidelity,
)
from occubench.twins._registry import load_twins, package_twins, twin_for, twins
from occubench.twins._shape import error_shapes, json_type, shape_problems
from occubench.twins._twin import (
    Answer,
    ChangeKind,
    FieldKind,
    Outcome,
    StateChange,
    Twin,
    TwinStep,
    is_under,
    leaves,
    pointer_token,
    schema_problem,
    state_changes,
    tool,
)

__all__ = [
    "TWIN_FIDELITY_VERSION",
    "Answer",
    "ChangeKind",
    "Feeding",
    "FidelitySummary",
    "FieldMatch",
    "FieldKind",
    "Outcome",
    "StateChange",
    "StateMatch",
    "StepMatch",
    "Twin",
    "TwinFidelity",
    "TwinStep",
    "error_shapes",
    "fidelity_json",
    "fidelity_records",
    "compare_observation",
    "compare_state",
    "first_drifts",
    "is_exact",
    "is_under",
    "json_type",
    "leaves",
    "load_twins",
    "outcome_of",
    "package_twins",
    "pointer_token",
    "read_fidelity",
    "same_leaf",
    "schema_problem",
    "shape_problems",
    "state_changes",
    "summaries",
    "summarise",
    "tool",
    "twin_for",
    "twins",
    "write_fidelity",
]
