"""Scale-out: a run split into shards (processes or Ray tasks), and sweeps of runs."""

from occubench.scale._execute import absolute_location, check_executor, execute
from occubench.scale._local import run_local, start_shard
from occubench.scale._progress import ProgressView, ShardCounts, ShardState, read_shard_counts
from occubench.scale._ray import import_ray, run_ray
from occubench.scale._shards import (
    merged_rows,
    plan_shards,
    run_shard,
    selected_task_ids,
    shard_count,
    split_concurrency,
)
from occubench.scale._spec import Executor, RunSpec, ShardResult, ShardSpec
from occubench.scale._superseded import remove_superseded_logs
from occubench.scale._sweep import (
    PLACEHOLDER,
    AgentChoice,
    FaultGrid,
    ModelChoice,
    RunOptions,
    Sweep,
    TaskFilters,
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
    "PLACEHOLDER",
    "AgentChoice",
    "Executor",
    "FaultGrid",
    "ModelChoice",
    "ProgressView",
    "RunOptions",
    "RunSpec",
    "ShardCounts",
    "ShardResult",
    "ShardSpec",
    "ShardState",
    "Sweep",
    "TaskFilters",
    "absolute_location",
    "check_executor",
    "execute",
    "expand_sweep",
    "import_ray",
    "labelled",
    "load_sweep",
    "load_sweeps",
    "merged_rows",
    "override",
    "placeholders",
    "plan_shards",
    "read_shard_counts",
    "remove_superseded_logs",
    "run_local",
    "run_ray",
    "run_shard",
    "selected_task_ids",
    "shard_count",
    "shipped_sweeps",
    "split_concurrency",
    "start_shard",
    "sweep_runs",
    "sweep_shards",
]
