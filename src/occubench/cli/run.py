"""``occubench run``: run the benchmark through the runner and print the summary.

Its own options are the models and where the run goes; the options of what the run
computes (``RunConfig``) and of how it is carried out (``EvalOptions``) are generated
from those models' fields (``with_settings``), so ``RunConfig`` and ``EvalOptions`` are
built from them directly.
"""

from __future__ import annotations

import json
import os
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from occubench.cli._common import (
    check_models,
    console,
    err_console,
    exit_with,
    from_options,
    interrupted,
    invoked_command,
    model_roles,
    stopped_by_preflight,
    tasks_with_user,
    terminal_rows,
    user_errors,
)
from occubench.cli._options import (
    Display,
    Epochs,
    Executor,
    Limit,
    ModelRole,
    Prices,
    RayAddress,
    RunPreflight,
    RunSimulatorModel,
    VerifierModel,
)
from occubench.cli._settings import executor_named, with_settings
from occubench.config import (
    MAX_TOKENS_POINTS,
    NO_AGENT_MODEL,
    EvalOptions,
    ResolvedRun,
    RunConfig,
    checked_generate,
    protocol_points,
    role_values,
    run_clamp_notes,
)
from occubench.defaults import DEFAULT_LOG_ROOT, DEFAULT_SHARD_MIN_SAMPLES
from occubench.errors import ErrorSource, ExitCode, UsageError
from occubench.roles import Role
from occubench.text import terminal_plain, terminal_text

if TYPE_CHECKING:
    from inspect_ai.model import GenerateConfig

    from occubench.costs import PriceTable, RunEstimate, Spend
    from occubench.dataset import EnvConfig
    from occubench.results import SampleRow
    from occubench.scale import Interruption, RunSpec, ShardResult


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
        raise UsageError(f"not a number: {text!r}") from None


def _count(text: str) -> int:
    if not text.isdigit():
        raise UsageError(f"not a whole number: {text!r}")
    return int(text)


def generation_settings(
    given: dict[str, Any],
) -> tuple[dict[Role, GenerateConfig], dict[str, int]]:
    """``--temperature``, ``--reasoning-effort``, ``--reasoning-tokens`` and ``--max-tokens``.

    The first three are GenerateConfig fields per role (``checked_generate``: a
    reasoning budget is 1 token or more); max_tokens is a protocol point per role.

    Returns the settings per role and the ``RunConfig`` max-tokens fields to set (the
    protocol points that decide max_tokens).

    Raises:
        UsageError: an unknown role or value.
    """
    values: dict[Role, dict[str, Any]] = {}
    for option, field, parse in (
        ("--temperature", "temperature", _number),
        ("--reasoning-effort", "reasoning_effort", lambda v: v.lower()),
        ("--reasoning-tokens", "reasoning_tokens", _count),
    ):
        for role, value in role_values(option, given.get(field), parse).items():
            values.setdefault(role, {})[field] = value
    settings: dict[Role, GenerateConfig] = {}
    for role, fields in values.items():
        try:
            settings[role] = checked_generate(fields)
        except ValueError as e:
            raise UsageError(f"{role.value}: {e}".splitlines()[0]) from None
    max_tokens = {}
    for role, value in role_values("--max-tokens", given["max_tokens"], _count).items():
        if role not in MAX_TOKENS_POINTS:
            raise UsageError(f"--max-tokens: the {role.value} role has no max_tokens setting")
        max_tokens[MAX_TOKENS_POINTS[role]] = value
    return settings, max_tokens


def checked_twins(config: RunConfig, simulator: str, envs: list[EnvConfig]) -> RunConfig:
    """The run with its ``--twins`` folder made absolute, once the twin simulator can run it.

    Raises:
        UsageError: what ``check_twin_run`` refuses.
    """
    from occubench.scripted import check_twin_run

    folder = None if config.twins is None else Path(config.twins).expanduser().resolve()
    check_twin_run(
        simulator, folder, envs, simulator_places_faults=config.simulator_places_faults()
    )
    return config if folder is None else config.model_copy(update={"twins": str(folder)})


def unbounded_roles(config: RunConfig) -> list[Role]:
    """The roles whose calls the run makes without max_tokens (``--budget`` needs one).

    The agent's only for the built-in loop: an Inspect agent or an agent program sets
    its calls' own (a call without one is refused under a budget).
    """
    points = protocol_points(config)
    bounds = {
        Role.AGENT: points.agent_max_tokens or bool(config.agent or config.agent_command),
        Role.SIMULATOR: points.simulator_max_tokens,
        Role.VERIFIER: points.verifier_max_tokens,
    }
    return [role for role, bound in bounds.items() if not bound]


@with_settings(RunConfig, EvalOptions)
def run(
    ctx: typer.Context,
    agent_model: Annotated[
        str | None,
        typer.Option(
            "--agent-model",
            "--model",
            help="Agent under test, an Inspect model name (for --agent-command: the model its "
            "OpenAI-compatible endpoint answers with; optional there).",
        ),
    ] = None,
    simulator_model: RunSimulatorModel = None,
    verifier_model: VerifierModel = None,
    sim_fallback_model: Annotated[
        str | None,
        typer.Option(
            help="Simulator re-asked after a failed online check (default: the simulator)."
        ),
    ] = None,
    user_model: Annotated[
        str | None,
        typer.Option(
            help="The simulated user of tasks with a 'user' brief (required when the selection "
            "has one; tasks without a user never call it)."
        ),
    ] = None,
    model_role: ModelRole = None,
    temperature: Annotated[
        list[str] | None,
        typer.Option(
            metavar="[ROLE=]T",
            help="[ROLE=]T, repeatable: the temperature of a role (a bare T: the agent's).",
        ),
    ] = None,
    reasoning_effort: Annotated[
        list[str] | None,
        typer.Option(
            metavar="[ROLE=]EFFORT",
            help="[ROLE=]EFFORT, repeatable: none, minimal, low, medium, high, xhigh (a bare "
            "EFFORT: the agent's).",
        ),
    ] = None,
    reasoning_tokens: Annotated[
        list[str] | None,
        typer.Option(
            metavar="[ROLE=]N",
            help="[ROLE=]N, repeatable: the thinking budget of a role's calls in tokens, 1 or "
            "more (Anthropic budget_tokens, Gemini thinking budget; a bare N: the agent's).",
        ),
    ] = None,
    max_tokens: Annotated[
        list[str] | None,
        typer.Option(
            metavar="[ROLE=]N",
            help="[ROLE=]N, repeatable: max_tokens of a role's calls (agent, simulator, "
            "verifier; a bare N: the agent's; same as --agent-max-tokens etc.).",
        ),
    ] = None,
    limit: Limit = None,
    epochs: Epochs = 1,
    prices: Prices = None,
    log_dir: Annotated[
        str | None,
        typer.Option(
            help="Folder or URL, e.g. s3://..., under which the run logs to a folder of its own "
            "named agent__simulator__mode-<hash of the arguments> (default: logs). Runs can "
            "share it; occubench report DIR reads them all."
        ),
    ] = None,
    display: Display = "rich",
    preflight: RunPreflight = True,
    workers: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Shards, each its own Inspect process (default: 1 below "
            f"{DEFAULT_SHARD_MIN_SAMPLES} samples, else the machine's cores; at most one per "
            "task; 1 = one in-process eval).",
        ),
    ] = None,
    executor: Executor = "local",
    ray_address: RayAddress = None,
    ray_resources: Annotated[
        str | None,
        typer.Option(
            help="Ray resources each shard needs, JSON, e.g. '{\"node:10.0.0.5\": 0.01}'."
        ),
    ] = None,
    **settings: Any,
) -> None:
    """Run agents on the dataset's tasks in the simulator, grade them, print the summary.

    Running the same command again with the same log folder resumes: finished samples
    are kept, only missing or errored ones run.
    """
    given: dict[str, Any] = dict(locals())
    given.update(given.pop("settings"))  # every option by name: the command's and the settings'
    command = invoked_command(ctx, given)
    from occubench.scale import stop_signals  # the runner, with Inspect: now the run starts

    with stop_signals() as stop:
        try:
            _run(given, stop, command)
        except KeyboardInterrupt:
            interrupted(stop, 0, 0, "no log folder yet", command)


def _run(given: dict[str, Any], stop: Interruption, command: str) -> None:
    """The body of ``run`` (inside ``stop_signals``)."""
    from occubench.costs import estimate_run, load_prices
    from occubench.report import estimate_table
    from occubench.scale import (
        Executor,
        FollowUp,
        Preflight,
        RunSpec,
        absolute_location,
        check_executor,
        execute,
        hold_log_folder,
        missing_root,
        plan_shards,
        read_shard_counts,
        remove_unstarted,
        run_calls,
        run_shard,
        selected_task_ids,
        shard_count,
        start_workers,
        warm_eval_imports,
        whole_run,
    )

    agent_model = given["agent_model"]
    with user_errors():
        settings, max_tokens = generation_settings(given)
        config = from_options(RunConfig, {**given, **max_tokens})
        config = config.model_copy(update={"dataset": str(config.dataset_dir().resolve())})
        options = from_options(EvalOptions, given)
        executor = check_executor(executor_named(given["executor"]))
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
        loaded = config.load_tasks()
        for line in config.check_fields(loaded.tasks):  # a setting the data
            err_console.print(f"Warning: {terminal_plain(line)}", markup=False, highlight=False)
        if config.world is not None:  # shards and workers find it from any folder
            config = config.model_copy(
                update={"world": str(Path(config.world).expanduser().resolve())}
            )
        resolved = ResolvedRun.of(config)  # a clone that lacks a prompt is bad input: said now
        from occubench.agent import conflicted_world, open_run_world

        world = open_run_world(config)  # a world that cannot be used as asked: said now
        warning = None if world is None else conflicted_world(world, config)
        if warning is not None:
            err_console.print(terminal_plain(warning), markup=False, highlight=False)
        prices = given["prices"]
        price_table = load_prices(prices) if prices else None
        if agent_model is None and not config.agent_command:
            raise UsageError("--agent-model is required (optional only with --agent-command)")
        roles = model_roles(given)
        tasks_with_user(loaded.tasks, roles)
        config = checked_twins(
            config, roles[Role.SIMULATOR], [loaded.envs[t.env_name] for t in loaded.tasks]
        )
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
            unbounded = unbounded_roles(config)
            if unbounded:
                raise UsageError(
                    "--budget bounds each model call's cost by its max_tokens, and the "
                    f"{', '.join(r.value for r in unbounded)} calls of this protocol set none: "
                    "give them one, e.g. "
                    + " ".join(f"--max-tokens {r.value}=16384" for r in unbounded)
                )
        epochs = given["epochs"]
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
        models = {Role.AGENT: agent, **roles}  # what each provider is sent, if not as asked
        for clamp in run_clamp_notes(models, spec.generate_config, resolved.points):
            console.print(f"Note: {terminal_plain(clamp.line())}", markup=False, highlight=False)
    samples = len(selected) * epochs
    in_flight = min(samples, options.samples_at_once())
    local = executor is Executor.LOCAL
    most = shard_count(given["workers"], len(selected), samples, in_flight)
    root = given["log_dir"]

    estimating: Future[RunEstimate] | None = None

    def estimate_meanwhile(in_process: bool) -> None:
        """Start the estimate in a thread (after the forks: a fork copies no thread).

        It is made while the preflight waits on the endpoints, so no shard waits for it,
        and printed once the shards have started (``show_estimate``). A run that will
        run in this process (``in_process``) also imports there what its eval imports
        at its start (``warm_eval_imports``), which workers do while they wait.
        """
        nonlocal estimating

        def prepare() -> RunEstimate:
            if in_process:
                warm_eval_imports()
            return estimate_run(
                resolved,
                agent=agent,
                roles=roles,
                epochs=epochs,
                prices=price_table,
                preflight=given["preflight"],
            )

        thread = ThreadPoolExecutor(1, "estimate")
        estimating = thread.submit(prepare)
        thread.shutdown(wait=False)  # the thread ends with its one task

    def show_estimate() -> None:
        """The run's estimate (made meanwhile, printed while the run starts)."""
        assert estimating is not None  # started before the preflight
        with user_errors():
            estimate = estimating.result()
        console.print(estimate_table(estimate))
        for note in estimate.notes:
            console.print(f"Not counted: {note}.", highlight=False)
        if budget is not None and (estimate.total_cost or 0) > budget:
            console.print(
                f"The estimate passes the budget of ${budget:,.4f}: the run will stop early.",
                highlight=False,
            )

    # the log folder first (read-only, full disk, busy: said before any model call), for
    # the shards the run may take; the preflight's models are built (their providers
    # imported), then the shard workers start (forks of this process where they can be),
    # then the preflight's requests go out while the workers get ready: nothing runs
    # before it passes. Its latency may then ask for fewer shards (another folder).
    sticky = given["workers"] is not None or not local
    first = most if sticky else _shards(spec, root, most, in_flight, None)
    probe = run_log_dir(spec, 1 if first == 1 and local else first, root)
    made = missing_root(absolute_location(probe))
    with ExitStack() as stack:
        try:
            with user_errors():
                held = stack.enter_context(hold_log_folder(absolute_location(probe)))
            checks = Preflight(run_calls(spec)) if given["preflight"] else None
            pool = stack.enter_context(start_workers(most)) if local and most > 1 else None
            estimate_meanwhile(in_process=local and pool is None)
            # the first turns now; the second turns while the run starts (a refusal stops it)
            latency = check_models(checks, follow_up=False) if checks is not None else None
            follow = FollowUp(checks, stop) if checks is not None else None
        except typer.Exit:
            stack.close()
            if made is not None:
                remove_unstarted(made)
            raise
        shards = first if sticky else _shards(spec, root, most, in_flight, latency)
        whole = shards == 1 and local  # in this process (which holds the run's folder)
        out = run_log_dir(spec, 1 if whole else shards, root)
        spec = spec.model_copy(update={"log_dir": absolute_location(out)})
        if out != probe:
            with user_errors():
                held = stack.enter_context(hold_log_folder(spec.log_dir))
        for note in held.notes:
            console.print(terminal_text(note), highlight=False)
        with user_errors():
            planned = [whole_run(spec)] if whole else plan_shards(spec, shards)
        total = sum(shard.samples for shard in planned)
        console.print(f"Logs: {out}  (run the same command again to resume)", highlight=False)
        try:
            if whole:
                if pool is not None:
                    pool.dismiss_rest()
                show_estimate()
                results = [run_shard(planned[0], display=display)]
            else:
                if not local:
                    show_estimate()
                results = execute(
                    planned,
                    executor,
                    parallel=len(planned),
                    ray_address=given["ray_address"],
                    console=None if display == "none" else console,
                    pool=pool,
                    started=show_estimate if local else None,
                )
        except KeyboardInterrupt:
            results = []
        refused = follow.finish() if follow is not None else []
    if out != probe and made is not None:  # the folder held for more shards: not used
        remove_unstarted(Path(absolute_location(probe)))
    if refused:  # the wire refused the second turn: every sample would meet it
        counts = [read_shard_counts(shard.log_dir) for shard in planned]
        lines = [failure.line() for failure in refused]
        stopped_by_preflight(lines, sum(c.done - c.errors for c in counts), total, out)
    try:  # a signal during the summary too: the logs say what was kept
        if stop.signal is not None or not results or any(r.interrupted for r in results):
            raise KeyboardInterrupt
        _summary(results, price_table, budget)
    except KeyboardInterrupt:
        counts = [read_shard_counts(shard.log_dir) for shard in planned]
        kept = sum(c.done - c.errors for c in counts)
        interrupted(stop, kept, total, out, command)


def _shards(
    spec: RunSpec, root: str | None, most: int, in_flight: int, latency: float | None
) -> int:
    """The run's shards, at most ``most``.

    Those of its log folder under ``root`` if it was started before (resume), else as
    many as its endpoints' latency needs (``shards_for_latency``). A remote root is not
    looked in: the run takes ``most``.
    """
    from occubench.scale import shards_for_latency

    base = (root or DEFAULT_LOG_ROOT).rstrip("/")
    if "://" in base and not base.startswith("file://"):
        return most
    started = [
        (folder.stat().st_mtime, count)
        for count in range(1, max(most, os.cpu_count() or 1) + 1)
        if (folder := Path(base.removeprefix("file://")) / spec.folder_name(count)).is_dir()
    ]
    if started:
        return max(started)[1]  # the newest
    return shards_for_latency(most, in_flight, latency)


def _summary(
    results: list[ShardResult], price_table: PriceTable | None, budget: float | None
) -> None:
    """The run's summary tables and closing lines; the exit code of a run that is not OK."""
    from occubench.costs import combined
    from occubench.report import summary_tables
    from occubench.results import agent_error_lines, unread_lines
    from occubench.scale import merged_concurrency, merged_rows

    for failed in (r for r in results if not r.success):
        console.print(f"shard {failed.index}/{failed.count}: {failed.error}", markup=False)
    rows = merged_rows(results)
    for table in summary_tables(terminal_rows(rows), price_table):
        console.print(table)
    for reached in merged_concurrency(results):
        console.print(terminal_text(f"Requests in flight, {reached.line()}"), highlight=False)
    for line in unread_lines(rows):
        console.print(terminal_plain(line), markup=False, highlight=False)
    for problem in (p for r in results for p in r.ignored_journals):
        why = terminal_plain(problem)
        err_console.print(
            f"Warning: call journal ignored (its calls were asked again): {why}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    saved = sum(r.resumed_calls for r in results)
    if saved:
        console.print(resumed_line(saved), markup=False, highlight=False, soft_wrap=True)
    refused = sum(r.error_source is ErrorSource.BUDGET for r in rows)
    errors = sum(r.error is not None for r in rows) - refused
    if errors:
        console.print(
            f"{errors} sample(s) ended in an infrastructure error (not scored); run the same "
            "command again to retry them."
        )
    spend = combined([r.spend for r in results if r.spend is not None])
    if budget is not None and spend is not None:
        console.print(budget_line(spend), highlight=False)
    if not all(r.success for r in results) or refused:
        console.print("The run did not complete; run the same command again to resume.")
        exit_with(ExitCode.INCOMPLETE)
    if errors:
        exit_with(ExitCode.SAMPLE_ERRORS)
    nothing = nothing_made(rows)
    if nothing is not None:
        err_console.print(terminal_plain(nothing), markup=False, highlight=False, soft_wrap=True)
        exit_with(ExitCode.NOTHING_MADE)
    graded_errors = agent_error_lines(rows)
    for line in graded_errors:
        err_console.print(f"Warning: {terminal_plain(line)}", markup=False, highlight=False)
    if graded_errors:
        exit_with(ExitCode.AGENT_ERRORS)


def resumed_line(saved: int) -> str:
    """The summary's line on what resuming saved (``saved``: calls answered from journals)."""
    return (
        f"Resumed: {saved} model call(s) answered from the journals of the interrupted run "
        "(not paid again)."
    )


def nothing_made(rows: list[SampleRow]) -> str | None:
    """One line when the run made nothing it was asked for, else None.

    Nothing usable: a run that asked for faults (E1-E3) and had none placed in any scored
    sample, or a run with a world whose samples neither recorded nor read an entry. Under
    the prompt engine the simulator places the faults and nothing logs them, so only an
    offline scripted simulator (which follows no fault rule) is known to have placed none.
    """
    from occubench.faults import EnvMode, FaultEngine
    from occubench.scripted import SCRIPTED_PROVIDER

    scored = [r for r in rows if r.error is None]
    asked = [r for r in scored if r.env_mode is not EnvMode.E0]
    if asked and not any(r.faults for r in asked):
        modes = ", ".join(sorted({r.env_mode.value for r in asked}))
        by_code = [r for r in asked if r.fault_engine is FaultEngine.CODE]
        simulators = {r.simulator_model or "" for r in asked}
        scripted = sorted(m for m in simulators if m.startswith(f"{SCRIPTED_PROVIDER}/"))
        head = f"No fault was placed in the {len(asked)} sample(s) run in {modes}: "
        if by_code:
            calls = sum(r.tool_calls for r in by_code)
            return head + (
                f"the agent made {calls} tool call(s) for the fault plan to land on "
                "(an agent that gives up before calling a tool meets none)."
            )
        if scripted and len(scripted) == len(simulators):
            return head + (
                f"the prompt engine (the paper protocol's) asks the simulator to place them, "
                f"and {', '.join(scripted)} follows no fault rule; "
                "give --protocol occubench or --fault-engine code."
            )
    with_world = [r for r in scored if r.world is not None]
    if with_world and not any(r.world_hits or r.simulator_calls for r in with_world):
        worlds = ", ".join(sorted({str(r.world) for r in with_world}))
        return (
            f"Nothing was recorded in or read from the world {worlds}: its "
            f"{len(with_world)} sample(s) made no tool call the world could answer."
        )
    return None


def budget_line(spend: Spend) -> str:
    """The summary's line on the budget: what was spent of it and what it stopped."""
    spent = f"spent ${spend.spent:,.4f} of the budget of ${spend.limit:,.4f}"
    done = f"{spend.finished} sample(s) finished"
    if not spend.reached:
        return f"Budget: {spent}; {done}."
    return (
        f"Budget reached: {spent}; {done}, {spend.refused} not started, {spend.stopped} "
        "stopped by a model call it could not cover. The same command again runs them "
        "(each invocation may spend its --budget)."
    )
