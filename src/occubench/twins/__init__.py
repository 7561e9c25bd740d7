"""Executable twins: environments implemented as code, the ground truth a simulator is held to.

A twin (``Twin``) answers each tool call from the config's state exactly as its config
reads, marks the observation fields the config leaves open as free, and reports the
state change of each call. ``twins``/``twin_for`` find them (the package's own; a user's
folder only when named). ``TwinFidelity`` is the record of a simulator measured against
them (``occubench audit --twin``), read by the report, bundles and the leaderboard.
``shape_problems`` is the one rule of an observation fitting its tool's ``example_output``
(``error_shapes``: the error examples a config's prompt gives). ``candidate_calls`` are
the calls a twin is tried on (the conformance test, the audit's write probe);
``TwinTrajectory`` the calls replayed against it, on disk a JSON list
(``read_trajectories``).
"""

from occubench.twins._calls import (
    Call,
    PlannedCalls,
    candidate_calls,
    plan_calls,
    solution_plan_calls,
    state_values,
)
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
    TwinCall,
    TwinFidelity,
    TwinTrajectory,
    fidelity_json,
    fidelity_records,
    first_drifts,
    is_exact,
    read_fidelity,
    read_trajectories,
    summaries,
    summarise,
    trajectories_json,
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
    "Call",
    "ChangeKind",
    "Feeding",
    "FidelitySummary",
    "FieldMatch",
    "FieldKind",
    "Outcome",
    "PlannedCalls",
    "StateChange",
    "StateMatch",
    "StepMatch",
    "Twin",
    "TwinCall",
    "TwinFidelity",
    "TwinStep",
    "TwinTrajectory",
    "candidate_calls",
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
    "plan_calls",
    "pointer_token",
    "read_fidelity",
    "read_trajectories",
    "same_leaf",
    "schema_problem",
    "shape_problems",
    "solution_plan_calls",
    "state_changes",
    "state_values",
    "summaries",
    "summarise",
    "tool",
    "trajectories_json",
    "twin_for",
    "twins",
    "write_fidelity",
]
