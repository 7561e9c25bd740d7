"""``occubench run``: run the benchmark through Inspect and print the summary."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import typer
from inspect_ai import eval_set
from inspect_ai.model import GenerateConfig, Model, get_model

from occubench.analysis import load_prices, read_runs, summary_tables
from occubench.cli._common import console, dataset_dir, terminal_rows, user_errors
from occubench.defaults import (
    DEFAULT_ATTEMPT_TIMEOUT,
    DEFAULT_ENV_MODE,
    DEFAULT_FAULT_COUNT,
    DEFAULT_FAULT_DURATION,
    DEFAULT_FAULT_ENGINE,
    DEFAULT_FAULT_LATENCY,
    DEFAULT_LOG_REALTIME,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_RETRIES,
    DEFAULT_MAX_TOOL_CALLS,
    DEFAULT_SAMPLE_RETRIES,
    DEFAULT_SAMPLES_PER_CONNECTION,
    DEFAULT_SEED,
    DEFAULT_TIMEOUT,
    DEFAULT_VERIFIER_VOTES,
)
from occubench.faults import FaultSettings, parse_families
from occubench.process import tuned_gc
from occubench.scale import (
    Executor,
    RunSpec,
    absolute_location,
    check_executor,
    execute,
    merged_rows,
    plan_shards,
    remove_superseded_logs,
    selected_task_ids,
    shard_count,
)
from occubench.simulator import StateMode
from occubench.task import occubench


def default_log_dir(spec: dict[str, Any]) -> Path:
    """A log folder named after the run's arguments: the same command finds it again."""
    digest = hashlib.sha256(json.dumps(spec, sort_keys=True, default=str).encode()).hexdigest()
    return Path("logs") / f"occubench-{spec['task_args']['env_mode']}-{digest[:10]}"


def role_model(name: str, config: GenerateConfig) -> Model:
    """A model (agent or role) with its own connection pool and retry settings.

    The settings go on each model, not only on the eval: Inspect passes max_retries and
    timeout on to role models but not attempt_timeout. Not memoized: each run reads the
    provider's base URL and key from the environment afresh.
    """
    return get_model(name, config=config, memoize=False)


def run(
    agent_model: str = typer.Option(..., help="Agent under test, an Inspect model name."),
    simulator_model: str = typer.Option(..., help="Simulator (LES) model."),
    verifier_model: str | None = typer.Option(
        None, help="Judge model (default: the simulator; tasks with checks use only checks)."
    ),
    dataset: Path | None = typer.Option(None, help="Dataset folder (default: $OCCUBENCH_DATASET)."),
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
    tasks: str | None = typer.Option(None, help="Only these task ids, e.g. 11,24,26."),
    categories: str | None = typer.Option(None, help="Only these industries (comma-separated)."),
    domains: str | None = typer.Option(None, help="Only these domains (comma-separated)."),
    difficulty: str | None = typer.Option(None, help="Only these difficulty levels, e.g. 2,3."),
    with_plan: bool = typer.Option(False, help="Give the agent the task's solution plan."),
    state_mode: str = typer.Option(
        "history", help="history (state in the simulator's history) or explicit (JSON Patch)."
    ),
    max_tool_calls: int = typer.Option(DEFAULT_MAX_TOOL_CALLS, help="Tool calls per task."),
    votes: int = typer.Option(DEFAULT_VERIFIER_VOTES, help="k judge votes per sample."),
    epochs: int = typer.Option(1, help="Runs of each task."),
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
    log_buffer: int | None = typer.Option(
        None, help="Finished samples buffered before each log write (default: Inspect's)."
    ),
    prices: Path | None = typer.Option(
        None, help="Price table (YAML/JSON): adds cost per run, per task and per solved task."
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
    cache: bool = typer.Option(False, help="Cache simulator and verifier responses."),
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
        "at most one per task; 1 = one in-process eval as before).",
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
    with user_errors():
        root = dataset_dir(dataset)
        FaultSettings(
            env_mode=env_mode,
            fault_count=fault_count,
            fault_duration=fault_duration,
            engine=fault_engine,
            seed=seed,
            families=parse_families(faults),
            latency_seconds=fault_latency,
        )
        StateMode(state_mode)
        check_executor(executor)
        resources = json.loads(ray_resources) if ray_resources else {}
        task_args = dict(
            dataset=str(root.resolve()),
            env_mode=env_mode,
            fault_count=fault_count,
            fault_duration=fault_duration,
            fault_engine=fault_engine,
            fault_families=faults,
            fault_latency=fault_latency,
            seed=seed,
            with_plan=with_plan,
            task_ids=tasks,
            categories=categories,
            domains=domains,
            difficulty=difficulty,
            max_tool_calls=max_tool_calls,
            votes=votes,
            cache=cache,
            state_mode=state_mode,
        )
        selected = selected_task_ids(task_args)  # loaded once: the shard planner reuses it
        if not selected:  # Inspect would fail on an empty dataset, with a traceback
            raise ValueError(f"no task in {root} matches the selection")
        price_table = load_prices(prices) if prices else None
    roles = {
        "simulator": simulator_model,
        **({"verifier": verifier_model} if verifier_model else {}),
    }
    spec = {"task_args": task_args, "agent": agent_model, "roles": roles, "epochs": epochs}
    shards = shard_count(workers, len(selected))
    sharded = shards > 1 or executor is not Executor.LOCAL
    if sharded:  # shards log in LOG_DIR/shard-i-of-N: their own default folder
        spec["shards"] = shards
    out = log_dir or default_log_dir(spec)  # retry settings left out: they do not change results
    config = GenerateConfig(
        max_connections=max_connections,
        max_retries=max_retries,
        timeout=timeout,
        attempt_timeout=attempt_timeout,
    )
    judge = config.merge(GenerateConfig(max_connections=max_connections * votes))  # k in parallel
    console.print(f"Logs: {out}  (run the same command again to resume)", highlight=False)
    if sharded:
        with user_errors():
            run_spec = RunSpec(
                agent=agent_model,
                roles=roles,
                task_args=task_args,
                epochs=epochs,
                generate=config.model_dump(exclude_none=True),
                role_generate={"verifier": judge.model_dump(exclude_none=True)},
                max_samples=max_samples or DEFAULT_SAMPLES_PER_CONNECTION * max_connections,
                retry_on_error=retry_on_error,
                eval_options={"log_realtime": log_realtime, "log_buffer": log_buffer},
                log_dir=absolute_location(out),
                resources=resources,
            )
        results = execute(
            plan_shards(run_spec, shards),
            executor,
            parallel=shards,
            ray_address=ray_address,
            console=None if display == "none" else console,
        )
        for failed in (r for r in results if not r.success):
            console.print(f"shard {failed.index}/{failed.count}: {failed.error}", markup=False)
        success, rows = all(r.success for r in results), merged_rows(results)
    else:
        with tuned_gc():
            success, logs = eval_set(
                occubench(**task_args),
                log_dir=str(out),
                model=role_model(agent_model, config),
                model_roles={
                    k: role_model(v, judge if k == "verifier" else config) for k, v in roles.items()
                },
                epochs=epochs,
                max_samples=max_samples or DEFAULT_SAMPLES_PER_CONNECTION * max_connections,
                log_realtime=log_realtime,
                log_buffer=log_buffer,
                retry_on_error=retry_on_error,
                fail_on_error=False,
                display=display,  # type: ignore[arg-type]
            )
            locations = [log.location for log in logs]
            remove_superseded_logs(locations)
            rows = read_runs(locations)
    for table in summary_tables(terminal_rows(rows), price_table):
        console.print(table)
    errors = sum(r.error is not None for r in rows)
    if errors:
        console.print(f"{errors} sample(s) ended in an infrastructure error (not scored).")
    if not success:
        console.print("The run did not complete; run the same command again to resume.")
        raise typer.Exit(1)
