"""``occubench run``: run the benchmark through the runner and print the summary.

Its options are the ``RunConfig`` fields (what the run computes), the ``EvalOptions``
fields (how it is carried out), the models and where it runs; the option parameters
carry the fields' names, so ``RunConfig`` and ``EvalOptions`` are built from them
directly (``tests/config/test_agreement.py`` checks that they match).
"""

from __future__ import annotations

import json
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import typer
from inspect_ai.model import GenerateConfig

from occubench.analysis import priced
from occubench.cli._common import (
    check_models,
    console,
    exit_with,
    from_options,
    interrupted,
    invoked_command,
    model_roles,
    terminal_rows,
    user_errors,
)
from occubench.config import (
    NO_AGENT_MODEL,
    EvalOptions,
    ReleasePrompts,
    RunConfig,
    checked_generate,
    role_values,
)
from occubench.costs import PriceTable, estimate_run, load_prices
from occubench.defaults import (
    DEFAULT_AGENT_TIME_LIMIT,
    DEFAULT_ATTEMPT_TIMEOUT,
    DEFAULT_DATE,
    DEFAULT_ENV_MODE,
    DEFAULT_FAULT_COUNT,
    DEFAULT_FAULT_DURATION,
    DEFAULT_FAULT_LATENCY,
    DEFAULT_LOG_MODEL_API,
    DEFAULT_LOG_REALTIME,
    DEFAULT_LOG_ROOT,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_RETRIES,
    DEFAULT_PROTOCOL,
    DEFAULT_SAMPLE_RETRIES,
    DEFAULT_SAMPLES_PER_CONNECTION,
    DEFAULT_SEED,
    DEFAULT_SHARD_MIN_SAMPLES,
    DEFAULT_SUBMIT_TOOL,
    DEFAULT_TIMEOUT,
    DEFAULT_VERIFIER_VOTES,
)
from occubench.errors import ErrorSource, ExitCode, UsageError
from occubench.report import estimate_table, summary_tables
from occubench.roles import Role
from occubench.scale import (
    Executor,
    Interruption,
    RunSpec,
    ShardResult,
    absolute_location,
    check_executor,
    execute,
    hold_log_folder,
    merged_rows,
    missing_root,
    plan_shards,
    read_shard_counts,
    remove_unstarted,
    run_shard,
    selected_task_ids,
    shard_count,
    stop_signals,
    whole_run,
)
from occubench.text import terminal_text


def run_log_dir(spec: RunSpec, shards: int, root: str | None) -> str:
    """The run's own log folder: ``ROOT/<agent>__<simulator>__<mode>-<digest>``.

    ``root`` is ``--log-dir`` (default: ``logs``). The name says what runs there, and
    the digest of what the run computes (and its shard count) lets the same command
    find the folder again, while several runs share one ``--log-dir``.
    """
    base = (root or DEFAULT_LOG_ROOT).rstrip("/")
    return f"{base}/{spec.folder_name(shards)}"


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"not a number: {text!r}") from None


def _count(text: str) -> int:
    if not text.isdigit():
        raise ValueError(f"not a whole number: {text!r}")
    return int(text)


_MAX_TOKENS_FIELDS = {
    Role.AGENT: "agent_max_tokens",
    Role.SIMULATOR: "simulator_max_tokens",
    Role.VERIFIER: "verifier_max_tokens",
}


def generation_settings(
    given: dict[str, Any],
) -> tuple[dict[Role, GenerateConfig], dict[str, int]]:
    """``--temperature``, ``--reasoning-effort`` (GenerateConfig per role) and ``--max-tokens``.

    Returns the settings per role and the ``RunConfig`` max-tokens fields to set (the
    protocol points that decide max_tokens).

    Raises:
        UsageError: an unknown role or value.
    """
    values: dict[Role, dict[str, Any]] = {}
    for option, field, parse in (
        ("--temperature", "temperature", _number),
        ("--reasoning-effort", "reasoning_effort", lambda v: v.lower()),
    ):
        for role, value in role_values(option, given[field], parse).items():
            values.setdefault(role, {})[field] = value
    settings: dict[Role, GenerateConfig] = {}
    for role, fields in values.items():
        try:
            settings[role] = checked_generate(fields)
        except ValueError as e:
            raise UsageError(f"{role.value}: {e}".splitlines()[0]) from None
    max_tokens = {}
    for role, value in role_values("--max-tokens", given["max_tokens"], _count).items():
        if role not in _MAX_TOKENS_FIELDS:
            raise UsageError(f"--max-tokens: the {role.value} role has no max_tokens setting")
        max_tokens[_MAX_TOKENS_FIELDS[role]] = value
    return settings, max_tokens


def run(
    ctx: typer.Context,
    agent_model: str | None = typer.Option(
        None,
        "--agent-model",
        "--model",
        help="Agent under test, an Inspect model name (for --agent-command: the model its "
        "OpenAI-compatible endpoint answers with; optional there).",
    ),
    simulator_model: str | None = typer.Option(
        None, help="Simulator (LES) model (required, here or as --model-role simulator=M)."
    ),
    verifier_model: str | None = typer.Option(
        None, help="Judge model (default: the simulator; tasks with checks use only checks)."
    ),
    dataset: str | None = typer.Option(
        None, help="Dataset folder, or 'reference' (default: $OCCUBENCH_DATASET)."
    ),
    model_role: list[str] | None = typer.Option(
        None,
        metavar="ROLE=MODEL",
        help="ROLE=MODEL, as Inspect spells it (repeatable): simulator, verifier, "
        "simulator_fallback.",
    ),
    task_ids: str | None = typer.Option(
        None, "--tasks", help="Only these task ids, e.g. 11,24,26."
    ),
    limit: int | None = typer.Option(
        None, min=1, help="Only the first N tasks of the selection (by id)."
    ),
    categories: str | None = typer.Option(None, help="Only these industries (comma-separated)."),
    domains: str | None = typer.Option(None, help="Only these domains (comma-separated)."),
    difficulty: str | None = typer.Option(None, help="Only these difficulty levels, e.g. 2,3."),
    env_mode: str = typer.Option(
        DEFAULT_ENV_MODE, help="E0 clean, E1 explicit, E2 implicit, E3 mixed."
    ),
    fault_count: int = typer.Option(DEFAULT_FAULT_COUNT, help="Fault events per task."),
    fault_duration: int = typer.Option(DEFAULT_FAULT_DURATION, help="Calls each fault lasts."),
    fault_engine: str | None = typer.Option(
        None, help="code (seeded, logged) or prompt (rules for the simulator; the paper's)."
    ),
    faults: str | None = typer.Option(
        None,
        help="Extra fault families, comma-separated, mixable: persistent, cascading, "
        "targeted, semantic, latency.",
    ),
    fault_latency: float = typer.Option(DEFAULT_FAULT_LATENCY, help="Seconds of a latency fault."),
    seed: int = typer.Option(DEFAULT_SEED, help="Seed of the fault plans."),
    with_plan: bool = typer.Option(False, help="Give the agent the task's solution plan."),
    state_mode: str = typer.Option(
        "history", help="history (state in the simulator's history) or explicit (JSON Patch)."
    ),
    votes: int = typer.Option(DEFAULT_VERIFIER_VOTES, help="k judge votes per sample."),
    date: str = typer.Option(DEFAULT_DATE, help="The fixed date agent and simulator are told."),
    cache: bool = typer.Option(False, help="Cache simulator and verifier responses."),
    protocol: str = typer.Option(
        DEFAULT_PROTOCOL,
        help="paper: the release's harness point by point; occubench: code-placed logged "
        "faults, validated arguments, errors apart. The options below override one point.",
    ),
    validate_tool_args: bool | None = typer.Option(
        None, help="Check tool arguments against the schema before the simulator sees them."
    ),
    max_turns: int | None = typer.Option(None, help="Agent model turns at most (0: no cap)."),
    max_tool_calls: int | None = typer.Option(None, help="Tool calls at most (0: no cap)."),
    stop_on_finish: bool | None = typer.Option(
        None, help="A turn finishing with reason 'stop' ends the loop after its tool calls."
    ),
    carry_reasoning: bool | None = typer.Option(
        None, help="Keep the agent's reasoning content across turns."
    ),
    agent_errors_end_loop: bool | None = typer.Option(
        None, help="An agent API failure ends the loop and is graded (else: an error)."
    ),
    agent_max_tokens: int | None = typer.Option(None, help="max_tokens of agent calls (0: unset)."),
    simulator_max_tokens: int | None = typer.Option(
        None, help="max_tokens of simulator calls (0: unset)."
    ),
    verifier_max_tokens: int | None = typer.Option(
        None, help="max_tokens of judge calls (0: unset)."
    ),
    simulator_retries: int | None = typer.Option(
        None, help="Re-asks of the simulator for an unusable reply."
    ),
    pass_raw_observation: bool | None = typer.Option(
        None, help="Pass the simulator's last raw reply on when none parses (else: an error)."
    ),
    agent_messages: str | None = typer.Option(
        None, help="paper or occubench: the agent prompt's layout."
    ),
    simulator_messages: str | None = typer.Option(
        None, help="paper or occubench: the simulator's messages, tags and reading."
    ),
    verifier_messages: str | None = typer.Option(
        None, help="paper or occubench: the judge's request and how its verdict is read."
    ),
    error_hints: bool | None = typer.Option(None, help="Code-engine error bodies advise a retry."),
    errors_count_as_failures: bool | None = typer.Option(
        None, help="Completion rates count errored samples as failed tasks."
    ),
    prompts_from: str | None = typer.Option(
        None, help="A clone of the public OccuBench repository: use its prompt wording."
    ),
    agent: str | None = typer.Option(
        None, help="An Inspect agent in place of the built-in loop: react, or module:function."
    ),
    agent_args: str | None = typer.Option(
        None, help="Arguments of the Inspect agent, a JSON object, e.g. '{\"submit\": false}'."
    ),
    agent_command: str | None = typer.Option(
        None,
        help="An agent program run per sample against its MCP endpoint, e.g. "
        "'python my_agent.py {url}' (placeholders and variables: see the README).",
    ),
    agent_time_limit: float = typer.Option(
        DEFAULT_AGENT_TIME_LIMIT, help="Seconds an agent program may run on one sample."
    ),
    submit_tool: str = typer.Option(
        DEFAULT_SUBMIT_TOOL, help="Name of the MCP tool an agent program submits with."
    ),
    sim_checks: bool | None = typer.Option(
        None,
        "--sim-checks/--no-sim-checks",
        help="Check every observation as it arrives; re-ask once on a failure; mark samples "
        "that kept a failed one simulator-suspect (default: the protocol's, on in occubench).",
    ),
    sim_fallback_model: str | None = typer.Option(
        None, help="Simulator re-asked after a failed check (default: the simulator)."
    ),
    simulator_seed: int | None = typer.Option(
        None, help="Seed the simulator generates with (providers that take one)."
    ),
    temperature: list[str] | None = typer.Option(
        None,
        metavar="[ROLE=]T",
        help="[ROLE=]T, repeatable: the temperature of a role (a bare T: the agent's).",
    ),
    reasoning_effort: list[str] | None = typer.Option(
        None,
        metavar="[ROLE=]EFFORT",
        help="[ROLE=]EFFORT, repeatable: none, minimal, low, medium, high, xhigh (a bare "
        "EFFORT: the agent's).",
    ),
    max_tokens: list[str] | None = typer.Option(
        None,
        metavar="[ROLE=]N",
        help="[ROLE=]N, repeatable: max_tokens of a role's calls (agent, simulator, "
        "verifier; a bare N: the agent's; same as --agent-max-tokens etc.).",
    ),
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
    replay_calls: bool = typer.Option(
        True,
        help="A restarted sample replays the model calls its earlier attempt made "
        "instead of paying for them again.",
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
    budget: float | None = typer.Option(
        None,
        help="Dollars the run may spend (needs --prices): no new sample starts once the spend "
        "would pass it; those in flight finish. Shards get an even share each.",
    ),
    log_dir: str | None = typer.Option(
        None,
        help="Folder or URL, e.g. s3://..., under which the run logs to a folder of its own "
        "named agent__simulator__mode-<hash of the arguments> (default: logs). Runs can "
        "share it; occubench report DIR reads them all.",
    ),
    display: str = typer.Option("rich", help="Inspect display: rich, plain, full or none."),
    preflight: bool = typer.Option(
        True,
        help="Before the first sample, resolve every role's model and send it a tiny "
        "request; a missing key or an unknown model stops the run (exit 2).",
    ),
    workers: int | None = typer.Option(
        None,
        min=1,
        help="Shards, each its own Inspect process (default: 1 below "
        f"{DEFAULT_SHARD_MIN_SAMPLES} samples, else the machine's cores; at most one per "
        "task; 1 = one in-process eval).",
    ),
    executor: Executor = typer.Option(  # noqa: B008 - an enum default is immutable
        Executor.LOCAL,
        case_sensitive=False,
        help="Where shards run: local processes, or Ray tasks (ray extra).",
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
    command = invoked_command(ctx, given)
    with stop_signals() as stop:
        try:
            _run(given, stop, command)
        except KeyboardInterrupt:
            interrupted(stop, 0, 0, "no log folder yet", command)


def _run(given: dict[str, Any], stop: Interruption, command: str) -> None:
    """The body of ``run`` (inside ``stop_signals``)."""
    agent_model = given["agent_model"]
    with user_errors():
        settings, max_tokens = generation_settings(given)
        config = from_options(RunConfig, {**given, **max_tokens})
        config = config.model_copy(update={"dataset": str(config.dataset_dir().resolve())})
        if config.prompts_from:  # a clone that lacks a constant is bad input: say so now
            ReleasePrompts.read(config.prompts_from)
        options = from_options(EvalOptions, given)
        executor = check_executor(given["executor"])
        try:
            resources = json.loads(given["ray_resources"]) if given["ray_resources"] else {}
        except json.JSONDecodeError as e:
            raise UsageError(f"--ray-resources is not JSON: {e}") from None
        selected = selected_task_ids(config)  # loaded once: the shard planner reuses it
        if given["limit"]:
            selected = selected[: given["limit"]]
            config = config.model_copy(update={"task_ids": selected})
        if not selected:  # Inspect would fail on an empty dataset, with a traceback
            raise UsageError(f"no task in {config.dataset} matches the selection")
        prices = given["prices"]
        price_table = load_prices(prices) if prices else None
        if agent_model is None and not config.agent_command:
            raise UsageError("--agent-model is required (optional only with --agent-command)")
        roles = model_roles(given)
        agent = agent_model or NO_AGENT_MODEL
        budget = given["budget"]
        if budget is not None:
            missing = [
                m
                for m in ([agent_model] if agent_model else []) + list(roles.values())
                if price_table is None or m not in price_table.models
            ]
            if missing:
                raise UsageError(
                    "--budget needs --prices with a price for every model of the run; no "
                    f"price for {', '.join(missing)}"
                )
        epochs = given["epochs"]
        estimate = estimate_run(config, agent=agent, roles=roles, epochs=epochs, prices=price_table)
        spec = RunSpec(
            agent=agent,
            roles=roles,
            config=config,
            epochs=epochs,
            generate=settings,
            options=options,
            log_dir="",
            resources=resources,
            prices=price_table,
        )
        display = given["display"].lower()
    shards = shard_count(given["workers"], len(selected), len(selected) * epochs)
    in_process = shards == 1 and executor is Executor.LOCAL
    out = run_log_dir(spec, 1 if in_process else shards, given["log_dir"])
    spec = spec.model_copy(update={"log_dir": absolute_location(out)})
    made = missing_root(spec.log_dir)  # removed again if the preflight refuses the run
    with ExitStack() as folder:  # one run per log folder: busy, read-only, full disk said now
        with user_errors():
            held = folder.enter_context(hold_log_folder(spec.log_dir))
        for note in held.notes:
            console.print(terminal_text(note), highlight=False)
        if given["preflight"]:
            try:
                check_models({Role.AGENT: agent, **roles})
            except typer.Exit:
                folder.close()
                if made is not None:
                    remove_unstarted(made)
                raise
        console.print(estimate_table(estimate))
        if budget is not None and (estimate.total_cost or 0) > budget:
            console.print(
                f"The estimate passes the budget of ${budget:,.4f}: the run will stop early.",
                highlight=False,
            )
        console.print(f"Logs: {out}  (run the same command again to resume)", highlight=False)
        with user_errors():
            planned = [whole_run(spec)] if in_process else plan_shards(spec, shards)
        total = sum(shard.samples for shard in planned)
        try:
            if in_process:
                results = [run_shard(planned[0], display=display)]
            else:
                results = execute(
                    planned,
                    executor,
                    parallel=len(planned),
                    ray_address=given["ray_address"],
                    console=None if display == "none" else console,
                )
        except KeyboardInterrupt:
            results = []
    try:  # a signal during the summary too: the logs say what was kept
        if stop.signal is not None or not results or any(r.interrupted for r in results):
            raise KeyboardInterrupt
        _summary(results, price_table, budget)
    except KeyboardInterrupt:
        counts = [read_shard_counts(shard.log_dir) for shard in planned]
        kept = sum(c.done - c.errors for c in counts)
        interrupted(stop, kept, total, out, command)


def _summary(
    results: list[ShardResult], price_table: PriceTable | None, budget: float | None
) -> None:
    """The run's summary tables and closing lines; the exit code of a run that is not OK."""
    for failed in (r for r in results if not r.success):
        console.print(f"shard {failed.index}/{failed.count}: {failed.error}", markup=False)
    rows = merged_rows(results)
    for table in summary_tables(terminal_rows(rows), price_table):
        console.print(table)
    refused = sum(r.error_source is ErrorSource.BUDGET for r in rows)
    errors = sum(r.error is not None for r in rows) - refused
    if errors:
        console.print(
            f"{errors} sample(s) ended in an infrastructure error (not scored); run the same "
            "command again to retry them."
        )
    if refused:
        spent = sum(r.cost or 0.0 for r in priced(rows, price_table)) if price_table else 0.0
        console.print(
            f"Budget of ${budget or 0:,.4f} reached (spent ${spent:,.4f}): {refused} sample(s) "
            "were not started; run the same command again with a larger --budget to run them.",
            highlight=False,
        )
    if not all(r.success for r in results) or refused:
        console.print("The run did not complete; run the same command again to resume.")
        exit_with(ExitCode.INCOMPLETE)
    if errors:
        exit_with(ExitCode.SAMPLE_ERRORS)
