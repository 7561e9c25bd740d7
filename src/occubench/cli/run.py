"""``occubench run``: run the benchmark through the runner and print the summary.

Its options are the ``RunConfig`` fields (what the run computes), the ``EvalOptions``
fields (how it is carried out), the models and where it runs; the option parameters
carry the fields' names, so ``RunConfig`` and ``EvalOptions`` are built from them
directly (``tests/config/test_agreement.py`` checks that they match).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import typer

from occubench.analysis import load_prices, summary_tables
from occubench.cli._common import console, from_options, terminal_rows, user_errors
from occubench.config import EvalOptions, RunConfig
from occubench.defaults import (
    DEFAULT_ATTEMPT_TIMEOUT,
    DEFAULT_DATE,
    DEFAULT_ENV_MODE,
    DEFAULT_FAULT_COUNT,
    DEFAULT_FAULT_DURATION,
    DEFAULT_FAULT_ENGINE,
    DEFAULT_FAULT_LATENCY,
    DEFAULT_LOG_MODEL_API,
    DEFAULT_LOG_REALTIME,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_RETRIES,
    DEFAULT_MAX_TOOL_CALLS,
    DEFAULT_SAMPLE_RETRIES,
    DEFAULT_SAMPLES_PER_CONNECTION,
    DEFAULT_SEED,
    DEFAULT_SIMULATOR_RETRIES,
    DEFAULT_TIMEOUT,
    DEFAULT_VERIFIER_VOTES,
)
from occubench.roles import Role
from occubench.scale import (
    Executor,
    RunSpec,
    absolute_location,
    check_executor,
    execute,
    merged_rows,
    plan_shards,
    run_shard,
    selected_task_ids,
    shard_count,
    whole_run,
)


def default_log_dir(spec: RunSpec, shards: int) -> Path:
    """A log folder named after what the run computes: the same command finds it again.

    The shard count is part of the name (shards log in subfolders); eval options are
    not (they do not change results).
    """
    what = {"run": spec.key(), "shards": shards}
    digest = hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()
    return Path("logs") / f"occubench-{spec.config.env_mode.value}-{digest[:10]}"


def run(
    agent_model: str = typer.Option(..., help="Agent under test, an Inspect model name."),
    simulator_model: str = typer.Option(..., help="Simulator (LES) model."),
    verifier_model: str | None = typer.Option(
        None, help="Judge model (default: the simulator; tasks with checks use only checks)."
    ),
    dataset: str | None = typer.Option(
        None, help="Dataset folder, or 'reference' (default: $OCCUBENCH_DATASET)."
    ),
    task_ids: str | None = typer.Option(
        None, "--tasks", help="Only these task ids, e.g. 11,24,26."
    ),
    categories: str | None = typer.Option(None, help="Only these industries (comma-separated)."),
    domains: str | None = typer.Option(None, help="Only these domains (comma-separated)."),
    difficulty: str | None = typer.Option(None, help="Only these difficulty levels, e.g. 2,3."),
    env_mode: str = typer.Option(
        DEFAULT_ENV_MODE, help="E0 clean, E1 explicit, E2 implicit, E3 mixed."
    ),
    fault_count: int = typer.Option(DEFAULT_FAULT_COUNT, help="Fault events per task."),
    fault_duration: int = typer.Option(DEFAULT_FAULT_DURATION, help="Calls each fault lasts."),
    fault_engine: str = typer.Option(DEFAULT_FAULT_ENGINE, help="code (seeded) or prompt (paper)."),
    faults: str | None = typer.Option(
        None, help="Extra fault families, mixable: persistent,cascading,targeted,semantic,latency."
    ),
    fault_latency: float = typer.Option(DEFAULT_FAULT_LATENCY, help="Seconds of a latency fault."),
    seed: int = typer.Option(DEFAULT_SEED, help="Seed of the fault plans."),
    with_plan: bool = typer.Option(False, help="Give the agent the task's solution plan."),
    state_mode: str = typer.Option(
        "history", help="history (state in the simulator's history) or explicit (JSON Patch)."
    ),
    max_tool_calls: int = typer.Option(DEFAULT_MAX_TOOL_CALLS, help="Tool calls per task."),
    votes: int = typer.Option(DEFAULT_VERIFIER_VOTES, help="k judge votes per sample."),
    simulator_retries: int = typer.Option(
        DEFAULT_SIMULATOR_RETRIES, help="Re-asks of the simulator for an unusable reply."
    ),
    date: str = typer.Option(DEFAULT_DATE, help="The fixed date agent and simulator are told."),
    cache: bool = typer.Option(False, help="Cache simulator and verifier responses."),
    epochs: int = typer.Option(1, min=1, help="Runs of each task."),
    max_connections: int = typer.Option(
        DEFAULT_MAX_CONNECTIONS,
        help="Concurrent requests per model: agent and simulator (the verifier gets this x votes).",
    ),
    max_samples: int | None = typer.Option(
        None,
        help=f"Samples run at once (default: {DEFAULT_SAMPLES_PER_CONNECTION} x max-connections).",
    ),
    log_realtime: bool = typer.Option(
        DEFAULT_LOG_REALTIME,
        help="Stream running samples to the log (live inspect view; costs CPU).",
    ),
    log_model_api: bool = typer.Option(
        DEFAULT_LOG_MODEL_API,
        help="Keep every model call's raw request and response in the log (failed calls "
        "are kept anyway; costs CPU and space).",
    ),
    log_buffer: int | None = typer.Option(
        None, help="Finished samples buffered before each log write (default: Inspect's)."
    ),
    retry_on_error: int = typer.Option(
        DEFAULT_SAMPLE_RETRIES, help="Retries of an errored sample."
    ),
    max_retries: int = typer.Option(
        DEFAULT_MAX_RETRIES, help="Retries of a model call (429, 5xx, timeouts), after the SDK's."
    ),
    timeout: int = typer.Option(DEFAULT_TIMEOUT, help="Seconds for a model call and its retries."),
    attempt_timeout: int = typer.Option(
        DEFAULT_ATTEMPT_TIMEOUT, help="Seconds for one attempt of a model call before a retry."
    ),
    prices: Path | None = typer.Option(
        None, help="Price table (YAML/JSON): adds cost per run, per task and per solved task."
    ),
    log_dir: str | None = typer.Option(
        None,
        help="Log folder or URL, e.g. s3://... (default: logs/occubench-<mode>-<hash "
        "of the arguments>).",
    ),
    display: str = typer.Option("rich", help="Inspect display: rich, plain, full or none."),
    workers: int | None = typer.Option(
        None,
        min=1,
        help="Shards, each its own Inspect process (default: the machine's cores, "
        "at most one per task; 1 = one in-process eval).",
    ),
    executor: Executor = typer.Option(  # noqa: B008 - an enum default is immutable
        Executor.LOCAL, help="Where shards run: local processes, or Ray tasks (ray extra)."
    ),
    ray_address: str | None = typer.Option(
        None, help="Ray cluster address (default: start a local Ray instance)."
    ),
    ray_resources: str | None = typer.Option(
        None, help="Ray resources each shard needs, JSON, e.g. '{\"node:10.0.0.5\": 0.01}'."
    ),
) -> None:
    """Run agents on the dataset's tasks in the simulator, grade them, print the summary.

    Running the same command again with the same log folder resumes: finished samples
    are kept, only missing or errored ones run.
    """
    given: dict[str, Any] = dict(locals())
    with user_errors():
        config = from_options(RunConfig, given)
        config = config.model_copy(update={"dataset": str(config.dataset_dir().resolve())})
        options = from_options(EvalOptions, given)
        check_executor(executor)
        resources = json.loads(ray_resources) if ray_resources else {}
        selected = selected_task_ids(config)  # loaded once: the shard planner reuses it
        if not selected:  # Inspect would fail on an empty dataset, with a traceback
            raise ValueError(f"no task in {config.dataset} matches the selection")
        price_table = load_prices(prices) if prices else None
        roles = {
            Role.SIMULATOR: simulator_model,
            **({Role.VERIFIER: verifier_model} if verifier_model else {}),
        }
        spec = RunSpec(
            agent=agent_model,
            roles=roles,
            config=config,
            epochs=epochs,
            options=options,
            log_dir="",
            resources=resources,
        )
    shards = shard_count(workers, len(selected))
    in_process = shards == 1 and executor is Executor.LOCAL
    out = log_dir or default_log_dir(spec, 1 if in_process else shards)
    spec = spec.model_copy(update={"log_dir": absolute_location(out)})
    console.print(f"Logs: {out}  (run the same command again to resume)", highlight=False)
    with user_errors():
        planned = [whole_run(spec)] if in_process else plan_shards(spec, shards)
    if in_process:
        results = [run_shard(planned[0], display=display)]
    else:
        results = execute(
            planned,
            executor,
            parallel=len(planned),
            ray_address=ray_address,
            console=None if display == "none" else console,
        )
    for failed in (r for r in results if not r.success):
        console.print(f"shard {failed.index}/{failed.count}: {failed.error}", markup=False)
    rows = merged_rows(results)
    for table in summary_tables(terminal_rows(rows), price_table):
        console.print(table)
    errors = sum(r.error is not None for r in rows)
    if errors:
        console.print(f"{errors} sample(s) ended in an infrastructure error (not scored).")
    if not all(r.success for r in results):
        console.print("The run did not complete; run the same command again to resume.")
        raise typer.Exit(1)
