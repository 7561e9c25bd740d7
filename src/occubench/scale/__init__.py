"""Running: the one runner, runs split into shards (processes or Ray tasks), sweeps.

Each local shard runs in ``python -m occubench.scale.worker``; ``exit_now`` and the
collector tuning of a long eval are in ``_interpreter``.
"""

from occubench.scale._demo import DEMO_SWEEP, demo_sweep, run_demo
from occubench.scale._execute import absolute_location, check_executor, execute
from occubench.scale._interpreter import exit_now
from occubench.scale._interrupt import (
    InterruptHooks,
    Interruption,
    stop_process_groups,
    stop_signals,
)
from occubench.scale._local import (
    ForkedProcess,
    Worker,
    WorkerPool,
    can_fork,
    run_local,
    start_shard,
    start_workers,
)
from occubench.scale._log_folder import (
    HeldFolder,
    LockOwner,
    LogFolderBusy,
    LogFolderError,
    hold_log_folder,
    missing_root,
    remove_unstarted,
)
from occubench.scale._log_housekeeping import move_aside_unreadable_logs, remove_superseded_logs
from occubench.scale._preflight import Preflight, PreflightFailure, PreflightReport, preflight
from occubench.scale._progress import ProgressView, ShardCounts, ShardState, read_shard_counts
from occubench.scale._ray import import_ray, run_ray
from occubench.scale._runner import BENCHMARK_TASK, EvalOutcome, run_eval, run_shard
from occubench.scale._shards import (
    merged_concurrency,
    merged_rows,
    plan_shards,
    selected_task_ids,
    shard_count,
    shards_for_latency,
    whole_run,
)
from occubench.scale._spec import Executor, RunSpec, ShardResult, ShardSpec, slug
from occubench.scale._sweep import (
    MAX_SWEEP_BYTES,
    MAX_SWEEP_DEPTH,
    MAX_SWEEP_RUNS,
    MAX_SWEEP_VALUES,
    PLACEHOLDER,
    AgentChoice,
    GridPoint,
    ModelChoice,
    Sweep,
    SweepRun,
    expand_sweep,
    labelled,
    load_sweep,
    load_sweeps,
    override,
    placeholders,
    shipped_sweeps,
    sweep_runs,
    sweep_shards,
)

__all__ = [
    "DEMO_SWEEP",
    "BENCHMARK_TASK",
    "EvalOutcome",
    "MAX_SWEEP_BYTES",
    "MAX_SWEEP_DEPTH",
    "MAX_SWEEP_RUNS",
    "MAX_SWEEP_VALUES",
    "PLACEHOLDER",
    "AgentChoice",
    "Executor",
    "ForkedProcess",
    "HeldFolder",
    "Interruption",
    "InterruptHooks",
    "LockOwner",
    "LogFolderBusy",
    "LogFolderError",
    "ModelChoice",
    "Preflight",
    "PreflightFailure",
    "PreflightReport",
    "ProgressView",
    "RunSpec",
    "ShardCounts",
    "ShardResult",
    "ShardSpec",
    "ShardState",
    "Sweep",
    "Worker",
    "WorkerPool",
    "absolute_location",
    "can_fork",
    "check_executor",
    "demo_sweep",
    "execute",
    "expand_sweep",
    "hold_log_folder",
    "import_ray",
    "labelled",
    "load_sweep",
    "load_sweeps",
    "merged_concurrency",
    "merged_rows",
    "missing_root",
    "move_aside_unreadable_logs",
    "override",
    "placeholders",
    "preflight",
    "plan_shards",
    "read_shard_counts",
    "remove_superseded_logs",
    "remove_unstarted",
    "run_demo",
    "run_eval",
    "run_local",
    "run_ray",
    "run_shard",
    "selected_task_ids",
    "shard_count",
    "shards_for_latency",
    "shipped_sweeps",
    "slug",
    "start_shard",
    "start_workers",
    "stop_process_groups",
    "stop_signals",
    "sweep_runs",
    "GridPoint",
    "SweepRun",
    "sweep_shards",
    "whole_run",
    "exit_now",
]
