"""Results: logs read into sample rows, the Parquet results store, trajectories read from logs."""

from occubench.results._provenance import ProvenanceCheck, check_provenance
from occubench.results._release import (
    RELEASE_ARGS,
    RELEASE_RESULTS,
    ReleaseArgs,
    ReleaseResult,
    is_release_results,
    read_release_args,
    read_release_results,
    release_run_name,
)
from occubench.results._row import Harness, SampleRow, WireTokens
from occubench.results._runs import (
    agent_error_lines,
    log_files,
    read_runs,
    run_fields,
    some_log_files,
    unread_lines,
)
from occubench.results._store import (
    EXPORT_FILE,
    LogReadError,
    log_header,
    log_samples,
    write_parquet,
)
from occubench.results._trajectory import Trajectory, read_trajectories

__all__ = [
    "agent_error_lines",
    "RELEASE_ARGS",
    "RELEASE_RESULTS",
    "Harness",
    "ReleaseArgs",
    "ReleaseResult",
    "is_release_results",
    "read_release_args",
    "read_release_results",
    "release_run_name",
    "ProvenanceCheck",
    "check_provenance",
    "Trajectory",
    "read_trajectories",
    "SampleRow",
    "WireTokens",
    "log_files",
    "some_log_files",
    "read_runs",
    "run_fields",
    "unread_lines",
    "EXPORT_FILE",
    "LogReadError",
    "log_header",
    "log_samples",
    "write_parquet",
]
