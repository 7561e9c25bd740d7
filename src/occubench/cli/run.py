"""``occubench run``: run the benchmark through the runner and print the summary.

Its own options are the models and where the run goes; the options of what the run
computes (``RunConfig``) and of how it is carried out (``EvalOptions``) are generated
from those models' fields (``with_settings``), so ``RunConfig`` and ``EvalOptions`` are
built from them directly. The run is planned by the runner (``occubench.scale.plan_run``)
and carried out here: the log folder, the preflight and the shards, then the summary.
"""

from __future__ import annotations

import json
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NamedTuple

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
    terminal_rows,
    user_errors,
)
from occubench.cli._options import (
    Display,
    Epochs,
    Limit,
    ModelRole,
    Prices,
    RayAddress,
    RunPreflight,
    RunSimulatorModel,
    ShardExecutor,
    UserModel,
    VerifierModel,
)
from occubench.cli._settings import executor_named, with_settings
from occubench.config import (
    MAX_TOKENS_POINTS,
    EvalOptions,
    RunConfig,
    checked_generate,
    role_values,
)
from occubench.defaults import DEFAULT_SHARD_MIN_SAMPLES
from occubench.errors import ErrorSource, ExitCode, UsageError
from occubench.roles import Role
from occubench.text import terminal_plain, terminal_text

if TYPE_CHECKING:
    from inspect_ai.model import GenerateConfig

    from occubench.costs import PriceTable, RunEstimate, Spend
    from occubench.results import SampleRow
    from occubench.scale import (
        FollowUp,
        HeldFolder,
        Interruption,
        PreflightFailure,
        RunPlan,
        RunRequest,
        ShardResult,
        ShardSpec,
        WorkerPool,
    )

AgentModel = Annotated[
    str | None,
    typer.Option(
        "--agent-model",
        "--model",
        help="Agent under test, an Inspect model name (for --agent-command: the model its "
        "OpenAI-compatible endpoint answers with; optional there).",
    ),
]
SimFallbackModel = Annotated[
    str | None,
    typer.Option(help="Simulator re-asked after a failed online check (default: the simulator)."),
]
Temperature = Annotated[
    list[str] | None,
    typer.Option(
        metavar="[ROLE=]T",
        help="[ROLE=]T, repeatable: the temperature of a role (a bare T: the agent's).",
    ),
]
ReasoningEffort = Annotated[
    list[str] | None,
    typer.Option(
        metavar="[ROLE=]EFFORT",
        help="[ROLE=]EFFORT, repeatable: none, minimal, low, medium, high, xhigh (a bare "
        "EFFORT: the agent's).",
    ),
]
ReasoningTokens = Annotated[
    list[str] | None,
    typer.Option(
        metavar="[ROLE=]N",
        help="[ROLE=]N, repeatable: the thinking budget of a role's calls in tokens, 1 or "
        "more (Anthropic budget_tokens, Gemini thinking budget; a bare N: the agent's).",
    ),
]
MaxTokens = Annotated[
    list[str] | None,
    typer.Option(
        metavar="[ROLE=]N",
        help="[ROLE=]N, repeatable: max_tokens of a role's calls (agent, simulator, "
        "verifier; a bare N: the agent's; same as --agent-max-tokens etc.).",
    ),
]
RunLogDir = Annotated[
    str | None,
    typer.Option(
        help="Folder or URL, e.g. s3://..., under which the run logs to a folder of its own "
        "named agent__simulator__mode-<hash of the arguments> (default: logs). Runs can "
        "share it; occubench report DIR reads them all."
    ),
]
Workers = Annotated[
    int | None,
    typer.Option(
        min=1,
        help="Shards, each its own Inspect process (default: 1 below "
        f"{DEFAULT_SHARD_MIN_SAMPLES} samples, else the machine's cores; at most one per "
        "task; 1 = one in-process eval).",
    ),
]
RayResources = Annotated[
    str | None,
    typer.Option(help="Ray resources each shard needs, JSON, e.g. '{\"node:10.0.0.5\": 0.01}'."),
]


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


def run_request(given: dict[str, Any]) -> RunRequest:
    """The run ``run``'s options ask for (``occubench.scale.RunRequest``).

    Raises:
        UsageError: an option that does not parse (a role, a number, JSON, an executor).
    """
    from occubench.scale import Executor, RunRequest

    settings, max_tokens = generation_settings(given)
    config = from_options(RunConfig, {**given, **max_tokens})
    options = from_options(EvalOptions, given)
    executor = Executor(executor_named(given["executor"]))
    try:
        resources = json.loads(given["ray_resources"]) if given["ray_resources"] else {}
    except json.JSONDecodeError as e:
        raise UsageError(f"--ray-resources is not JSON: {e}") from None
    return RunRequest(
        agent_model=given["agent_model"],
        roles=model_roles(given),
        config=config,
        options=options,
        generate=settings,
        limit=given["limit"],
        epochs=given["epochs"],
        prices=given["prices"],
        log_root=given["log_dir"],
        workers=given["workers"],
        executor=executor,
        resources=resources,
        ray_address=given["ray_address"],
        preflight=given["preflight"],
    )


def planned_run(request: RunRequest) -> RunPlan:
    """Plan the run (``occubench.scale.plan_run``), saying its warnings and notes.

    Bad input ends the command (``user_errors``: exit 2).
    """
    from occubench.scale import plan_run

    def warn(line: str) -> None:
        err_console.print(terminal_plain(line), markup=False, highlight=False)

    with user_errors():
        plan = plan_run(request, warn)
    for note in plan.notes:
        console.print(f"Note: {terminal_plain(note)}", markup=False, highlight=False)
    return plan


@with_settings(RunConfig, EvalOptions)
def run(
    ctx: typer.Context,
    agent_model: AgentModel = None,
    simulator_model: RunSimulatorModel = None,
    verifier_model: VerifierModel = None,
    sim_fallback_model: SimFallbackModel = None,
    user_model: UserModel = None,
    model_role: ModelRole = None,
    temperature: Temperature = None,
    reasoning_effort: ReasoningEffort = None,
    reasoning_tokens: ReasoningTokens = None,
    max_tokens: MaxTokens = None,
    limit: Limit = None,
    epochs: Epochs = 1,
    prices: Prices = None,
    log_dir: RunLogDir = None,
    display: Display = "rich",
    preflight: RunPreflight = True,
    workers: Workers = None,
    executor: ShardExecutor = "local",
    ray_address: RayAddress = None,
    ray_resources: RayResources = None,
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
            with user_errors():
                request = run_request(given)
            _run(planned_run(request), display.lower(), stop, command)
        except KeyboardInterrupt:
            interrupted(stop, 0, 0, "no log folder yet", command)


class _Estimate:
    """The run's estimate: made in a thread while the preflight waits, printed as it starts."""

    def __init__(self, plan: RunPlan) -> None:
        self.plan = plan
        self.made: Future[RunEstimate] | None = None

    def start(self, in_process: bool) -> None:
        """Start the estimate in a thread (after the forks: a fork copies no thread).

        A run that will run in this process (``in_process``) also imports there what
        its eval imports at its start (``warm_eval_imports``), which workers do while
        they wait.
        """
        from occubench.costs import estimate_run
        from occubench.scale import warm_eval_imports

        spec = self.plan.spec

        def prepare() -> RunEstimate:
            if in_process:
                warm_eval_imports()
            return estimate_run(
                self.plan.resolved,
                agent=spec.agent,
                roles=spec.roles,
                epochs=spec.epochs,
                prices=spec.prices,
                preflight=self.plan.preflight,
            )

        thread = ThreadPoolExecutor(1, "estimate")
        self.made = thread.submit(prepare)
        thread.shutdown(wait=False)  # the thread ends with its one task

    def show(self) -> None:
        """Print the estimate (made meanwhile), and whether it passes the budget."""
        from occubench.report import estimate_table

        assert self.made is not None  # started before the preflight
        with user_errors():
            estimate = self.made.result()
        console.print(estimate_table(estimate))
        for note in estimate.notes:
            console.print(f"Not counted: {note}.", highlight=False)
        budget = self.plan.spec.options.budget
        if budget is not None and (estimate.total_cost or 0) > budget:
            console.print(
                f"The estimate passes the budget of ${budget:,.4f}: the run will stop early.",
                highlight=False,
            )


class _Started(NamedTuple):
    """What the run holds once its log folder is taken and its preflight's first turn passed."""

    held: HeldFolder
    pool: WorkerPool | None
    follow: FollowUp | None
    latency: float | None


class _Carried(NamedTuple):
    """A run carried out: its folder, its shards, their results, the preflight's refusals."""

    out: str
    planned: list[ShardSpec]
    results: list[ShardResult]
    refused: list[PreflightFailure]


def _start(
    stack: ExitStack, plan: RunPlan, probe: str, estimate: _Estimate, stop: Interruption
) -> _Started:
    """Hold the log folder, build the preflight's models, start the workers, try the models.

    The log folder first (read-only, full disk, busy: said before any model call); the
    preflight's models are built (their providers imported), then the shard workers
    start (forks of this process where they can be), then the preflight's first turns
    go out while the workers get ready (the second turns while the run starts: a
    refusal stops it). Nothing runs before the first turns pass.
    """
    from occubench.scale import (
        FollowUp,
        Preflight,
        absolute_location,
        hold_log_folder,
        run_calls,
        start_workers,
    )

    with user_errors():
        held = stack.enter_context(hold_log_folder(absolute_location(probe)))
    checks = Preflight(run_calls(plan.spec)) if plan.preflight else None
    many = plan.local and plan.most > 1
    pool = stack.enter_context(start_workers(plan.most)) if many else None
    estimate.start(in_process=plan.local and pool is None)
    if checks is None:
        return _Started(held, pool, None, None)
    latency = check_models(checks, follow_up=False)
    return _Started(held, pool, FollowUp(checks, stop), latency)


def _carry_out(plan: RunPlan, display: str, stop: Interruption) -> _Carried:
    """Take the run's log folder, pass the preflight, run its shards.

    The folder is first chosen for the shards the run may take; the preflight's latency
    may then ask for fewer (another folder), and the folder held for more is removed if
    this run made it and nothing started there.
    """
    from occubench.scale import (
        absolute_location,
        hold_log_folder,
        missing_root,
        plan_shards,
        remove_unstarted,
        whole_run,
    )

    estimate = _Estimate(plan)
    first = plan.shards(None)
    probe = plan.log_dir(1 if first == 1 and plan.local else first)
    made = missing_root(absolute_location(probe))
    with ExitStack() as stack:
        try:
            started = _start(stack, plan, probe, estimate, stop)
        except typer.Exit:
            stack.close()
            if made is not None:
                remove_unstarted(made)
            raise
        shards = plan.shards(started.latency)
        whole = shards == 1 and plan.local  # in this process (which holds the run's folder)
        out = plan.log_dir(1 if whole else shards)
        spec = plan.spec.model_copy(update={"log_dir": absolute_location(out)})
        held = started.held
        if out != probe:
            with user_errors():
                held = stack.enter_context(hold_log_folder(spec.log_dir))
        for note in held.notes:
            console.print(terminal_text(note), highlight=False)
        with user_errors():
            planned = [whole_run(spec)] if whole else plan_shards(spec, shards)
        console.print(f"Logs: {out}  (run the same command again to resume)", highlight=False)
        results = _shards_run(planned, whole, plan, started.pool, estimate, display)
        refused = started.follow.finish() if started.follow is not None else []
    if out != probe and made is not None:  # the folder held for more shards: not used
        remove_unstarted(Path(absolute_location(probe)))
    return _Carried(out, planned, results, refused)


def _shards_run(
    planned: list[ShardSpec],
    whole: bool,
    plan: RunPlan,
    pool: WorkerPool | None,
    estimate: _Estimate,
    display: str,
) -> list[ShardResult]:
    """Run the shards: a whole run in this process, else on the executor (none: stopped)."""
    from occubench.scale import execute, run_shard

    try:
        if whole:
            if pool is not None:
                pool.dismiss_rest()
            estimate.show()
            return [run_shard(planned[0], display=display)]
        if not plan.local:
            estimate.show()
        return execute(
            planned,
            plan.executor,
            parallel=len(planned),
            ray_address=plan.ray_address,
            console=None if display == "none" else console,
            pool=pool,
            started=estimate.show if plan.local else None,
        )
    except KeyboardInterrupt:
        return []


def _run(plan: RunPlan, display: str, stop: Interruption, command: str) -> None:
    """Carry out the planned run (inside ``stop_signals``) and print its summary."""
    from occubench.scale import read_shard_counts

    carried = _carry_out(plan, display, stop)
    total = sum(shard.samples for shard in carried.planned)

    def kept() -> int:
        counts = [read_shard_counts(shard.log_dir) for shard in carried.planned]
        return sum(c.done - c.errors for c in counts)

    if carried.refused:  # the wire refused the second turn: every sample would meet it
        lines = [failure.line() for failure in carried.refused]
        stopped_by_preflight(lines, kept(), total, carried.out)
    results = carried.results
    try:  # a signal during the summary too: the logs say what was kept
        if stop.signal is not None or not results or any(r.interrupted for r in results):
            raise KeyboardInterrupt
        _summary(results, plan.spec.prices, plan.spec.options.budget)
    except KeyboardInterrupt:
        interrupted(stop, kept(), total, carried.out, command)


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
