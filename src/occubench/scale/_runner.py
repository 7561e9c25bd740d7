"""The one runner: every eval occubench starts goes through ``run_eval``.

A benchmark run in this process, a shard in a worker process or a Ray task, the demo,
the synthesis pipeline's trial runs and the fidelity audit all call ``run_eval``: an
Inspect eval set in its own log folder, so each gets ``.eval`` logs, sample retries,
resume (the same call again runs only what is missing) and ``inspect view``. Tasks
are named by their Inspect registry name (``occubench/occubench``) and given their
arguments, as ``inspect eval NAME -T ...`` would: Inspect resolves the name through
the package's entry point, so a log records the task and its arguments.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import rich
from inspect_ai import eval_set
from inspect_ai.hooks import Hooks, RunStart, SampleEnd, SampleStart, TaskStart, hooks
from inspect_ai.log import EvalLog, read_eval_log_sample_summaries
from inspect_ai.model import GenerateConfig, Model
from pydantic import BaseModel, Field

from occubench.calls import (
    TRANSPORT_SETTINGS,
    JournalPlace,
    ModelConcurrency,
    concurrency_report,
    config_digest,
    ignored_journals,
    journaled_calls,
    named_model,
    remove_all_journals,
    remove_journals,
    reset_concurrency,
    resilient,
    resumed_calls,
)
from occubench.config import EvalOptions, ResolvedRun
from occubench.costs import Spend, SpendGuard, estimate_run, spending_limit, usage_cost
from occubench.errors import UsageError
from occubench.providers import fast_path
from occubench.redaction import (
    model_secrets,
    redact_log_folder,
    redact_log_records,
    register_secrets,
    secrets_of_settings,
)
from occubench.results import read_runs
from occubench.roles import Role
from occubench.scale._interpreter import (
    expect_samples,
    gc_tuned,
    lean_inspect,
    quiet_inspect_logging,
    sample_finished,
    sample_started,
    tuned_gc,
)
from occubench.scale._log_folder import (
    LogFolderError,
    check_logs_written,
    hold_log_folder,
    log_folder_error,
)
from occubench.scale._log_housekeeping import mark_unfinished, remove_superseded_logs
from occubench.scale._spec import ShardResult, ShardSpec
from occubench.worlds import close_shared_worlds

logger = logging.getLogger(__name__)

BENCHMARK_TASK = "occubench/occubench"
"""Registry name of the benchmark task (``occubench.task.occubench``)."""
CTL_SERVER_ENV = "INSPECT_EVAL_CTL_SERVER"
"""Inspect's setting of its control-channel server (``inspect ctl``), honoured when set."""


@hooks(
    name="occubench_finished_samples",
    description="Frees finished samples' reference cycles while occubench runs an eval.",
)
class FinishedSamples(Hooks):
    """Counts finished samples for ``sample_finished`` (active inside ``tuned_gc`` only)."""

    def enabled(self) -> bool:
        """Only while occubench's tuned collector is on (``run_eval``)."""
        return gc_tuned()

    async def on_task_start(self, data: TaskStart) -> None:
        """An eval's task starts: the samples it will run (epochs included)."""
        samples = data.spec.dataset.samples
        if samples:
            expect_samples(samples * (data.spec.config.epochs or 1))

    async def on_sample_start(self, data: SampleStart) -> None:
        """A sample starts (its first attempt)."""
        sample_started()

    async def on_sample_end(self, data: SampleEnd) -> None:
        """A sample ended: maybe collect (see ``occubench.scale._interpreter``)."""
        sample_finished()

    async def on_run_start(self, data: RunStart) -> None:
        """An eval starts (Inspect's log handler exists): no record nothing writes."""
        quiet_inspect_logging()


class EvalOutcome(BaseModel):
    """What one eval set gave."""

    success: bool = Field(description="Every task of the eval set completed (errors recorded).")
    interrupted: bool = Field(
        default=False,
        description="The eval was stopped by Ctrl-C or SIGTERM: its logs are 'cancelled', "
        "with the samples that had finished.",
    )
    logs: list[str] = Field(description="Log files of the eval set, one per task.")
    notes: list[str] = Field(
        default_factory=list,
        description="What taking the log folder did: a stale lock taken over, logs moved aside.",
    )
    concurrency: list[ModelConcurrency] = Field(
        default_factory=list,
        description="Per model on the fast path: the requests in flight it reached, its "
        "rate-limited answers and Retry-After pauses.",
    )
    spend: Spend | None = Field(
        default=None, description="What the eval spent against its budget (None: no budget)."
    )
    resumed_calls: int = Field(
        default=0,
        description="Model calls answered from the journals an interrupted earlier run left "
        "(what resuming saved).",
    )
    ignored_journals: list[str] = Field(
        default_factory=list,
        description="Journals not replayed, each with its file, line and why (torn, edited, "
        "another configuration or version): their samples asked their models again.",
    )


def journal_place_of(
    log_dir: str, task: str, task_args: Mapping[str, Any], models: Mapping[str, Model], epochs: int
) -> JournalPlace | None:
    """Where an eval journals its samples' calls (None: a log folder that is not local).

    Keyed by a digest of its configuration: the task and its arguments, the epochs, and
    each role's model, endpoint and generate settings (those that change answers).
    """
    if "://" in log_dir and not log_dir.startswith("file://"):
        return None
    parts = {
        "task": task,
        "task_args": dict(task_args),
        "epochs": epochs,
        "models": {
            role: {
                "model": getattr(m.api, "qualified_model_name", None) or m.name,
                "base_url": m.api.base_url,
                "config": m.config.model_dump(exclude=set(TRANSPORT_SETTINGS), exclude_none=True),
            }
            for role, m in models.items()
        },
    }
    return JournalPlace(Path(log_dir.removeprefix("file://")), config_digest(parts))


def drop_journals(place: JournalPlace | None, locations: list[str], complete: bool) -> None:
    """Remove the journals of the samples the logs hold finished (all of them: ``complete``).

    A sample logged with an error (cancelled by an interrupt, or failed) is run again by
    the next run, which replays its journal.
    """
    if place is None or not place.folder.is_dir():
        return
    if complete:
        remove_all_journals(place)
        return
    logged: list[tuple[str | int, int]] = []
    for location in locations:
        try:
            logged += [
                (s.id, s.epoch)
                for s in read_eval_log_sample_summaries(location)
                if s.error is None and s.completed
            ]
        except Exception as e:  # noqa: BLE001 - a log that cannot be read keeps its journals
            logger.info("journals kept: %s cannot be read (%s)", location, e)
    remove_journals(place, logged)


def _model(
    value: str | Model,
    config: GenerateConfig,
    replay: bool,
    fast: bool,
    model_args: Mapping[str, Any] | None = None,
) -> Model:
    """A model built afresh from its name (not memoized) or as given, made resilient.

    Resilient (``occubench.calls``): unreadable answers retried at the call, restarted
    samples replaying the calls they paid for. Not memoized: each run reads the
    provider's base URL and key from the environment afresh, and a model never outlives
    the endpoint a test served it from. A model built here from an ``openai-api`` or
    ``vllm`` name goes on the lean path when ``fast`` (``occubench.providers.fast_path``);
    a model given built is used as it is (``model_args``: its provider's arguments, for a
    model built here).
    """
    if isinstance(value, Model):
        return resilient(value, replay=replay)
    return named_model(
        value,
        config,
        memoize=False,
        replay=replay,
        prepare=fast_path if fast else None,
        model_args=model_args,
    )


class _EndedLines:
    """A text stream that ends a line left open before the next write starts.

    Rich's live display, written to a file or a pipe rather than a terminal, leaves the
    last line of its final render without its newline, so Inspect's next line ("Completed
    all tasks ...") would be written on the end of it (after a line of padding).
    """

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.open = False

    def write(self, text: str) -> int:
        """Write ``text``, first ending the line the previous write left open."""
        if self.open and text and not text.startswith("\n"):
            self.stream.write("\n")
        if text:
            self.open = not text.endswith("\n")
        return int(self.stream.write(text))

    def close_line(self) -> None:
        """End the line the last write left open, if any."""
        if self.open:
            self.stream.write("\n")
            self.open = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


@contextlib.contextmanager
def _quiet_inspect(display: str) -> Iterator[None]:
    """Inspect's console while the block runs: silenced with no display, else lines ended.

    Silenced: its status lines, and the hooks banner it prints as the first model is built
    (on stdout, which ``serve`` keeps for the MCP protocol). Shown on a file or a pipe:
    every line it leaves open is ended (``_EndedLines``).
    """
    console = rich.get_console()
    quiet, console.quiet = console.quiet, console.quiet or display == "none"
    stdout = sys.stdout  # Inspect's display makes its own console, which writes here
    ended = None if display == "none" or stdout.isatty() else _EndedLines(stdout)
    if ended is not None:
        sys.stdout = ended
    try:
        yield
    finally:
        console.quiet = quiet
        if ended is not None:
            ended.close_line()
            sys.stdout = stdout


def run_eval(
    task: str,
    task_args: Mapping[str, Any],
    *,
    log_dir: str,
    model: str | Model,
    roles: Mapping[Role, str | Model],
    options: EvalOptions,
    generate: Callable[[Role], GenerateConfig] | None = None,
    max_samples: int | None = None,
    epochs: int = 1,
    display: str = "none",
    budget: SpendGuard | None = None,
    role_args: Mapping[Role, Mapping[str, Any]] | None = None,
) -> EvalOutcome:
    """Run a registered task as an Inspect eval set in ``log_dir`` (resumable).

    Args:
        task: Registry name of the task (``occubench/occubench``, ``occubench/audit``).
        task_args: The task's keyword arguments (JSON values).
        log_dir: Folder or fsspec URL of the eval set.
        model: The main model (the agent under test), by name or built.
        roles: Model roles by name or built (simulator, verifier, ...).
        options: Concurrency, retries, timeouts, log buffering.
        generate: Generate settings per role for models built here (default: the
            options' connections, retries and timeouts).
        max_samples: Samples at once (default: the options').
        epochs: Runs of each sample.
        display: Inspect's display (``none``, ``rich``, ``plain``, ``full``).
        budget: The spending limit of the eval (``occubench.costs._budget``; None: none).
        role_args: Provider arguments of the role models built here, by role (the
            simulator's ``twins`` folder).

    The collector is tuned and Inspect set for throughput while the eval runs
    (``tuned_gc``, ``lean_inspect``: trace level, no message snapshots), raw model
    calls are logged only with ``options.log_model_api`` (failed calls always), errors
    never fail the eval (they are recorded per sample), and logs a killed earlier attempt left
    behind are removed once the eval set has taken their samples. The models' secrets
    (keys, base URL credentials, secret headers and arguments) are registered and, with
    the environment's, redacted from Inspect's log records while it runs and from the
    log folder once it ends (``occubench.redaction``). A run its budget
    stopped (a sample not started, or stopped by a model call the budget could not cover)
    leaves its logs unfinished (``mark_unfinished``): the same call again runs those samples.
    The worlds its samples used are flushed to disk when the eval ends.
    """
    settings = generate or options.generate_config
    replay = options.replay_calls
    with (
        _quiet_inspect(display),
        hold_log_folder(log_dir) as held,
        tuned_gc(),
        lean_inspect(),
        spending_limit(budget),
    ):
        main, role_models = _built_models(model, roles, settings, options, role_args)
        register_secrets(secrets_of_settings(dict(task_args)))
        redact_log_records()
        for note in held.notes:
            logger.warning(note)
        reset_concurrency()  # each eval's limits start at their ceilings
        models = {Role.AGENT.value: main, **role_models}
        place = journal_place_of(log_dir, task, task_args, models, epochs) if replay else None
        run = _EvalSetRun(task, task_args, log_dir, epochs, display, options)
        success, logs = run.start(main, role_models, max_samples, place)
        return _outcome(success, logs, log_dir, budget, place, held.notes)


class _EvalSetRun(NamedTuple):
    """What ``run_eval`` hands Inspect's ``eval_set`` besides the models."""

    task: str
    task_args: Mapping[str, Any]
    log_dir: str
    epochs: int
    display: str
    options: EvalOptions

    def start(
        self,
        main: Model,
        role_models: dict[str, Model],
        max_samples: int | None,
        place: JournalPlace | None,
    ) -> tuple[bool, list[EvalLog]]:
        """Run the eval set; a log write that failed on the disk is one ``LogFolderError``."""
        options, log_dir = self.options, self.log_dir
        try:
            with journaled_calls(place):
                success, logs = eval_set(
                    tasks=self.task,
                    task_args=dict(self.task_args),
                    log_dir=log_dir,
                    model=main,
                    model_roles=role_models,
                    epochs=self.epochs,
                    max_samples=max_samples or options.samples_at_once(),
                    log_realtime=options.log_realtime,
                    log_model_api=options.log_model_api,
                    log_buffer=options.log_buffer,
                    retry_on_error=options.retry_on_error,
                    fail_on_error=False,
                    display=self.display,  # type: ignore[arg-type]
                    # Inspect's control server (an HTTP app for `inspect ctl`) costs each eval
                    # about half a second to start; off unless the environment asks for it
                    ctl_server=None if CTL_SERVER_ENV in os.environ else False,
                )
        except Exception as e:  # a log write that failed on the disk: one clear line
            problem = log_folder_error(e, log_dir)
            if problem is None:
                raise
            raise problem from None
        finally:
            close_shared_worlds()  # the worlds the run's samples recorded to, on disk
        return success, list(logs)


def _built_models(
    model: str | Model,
    roles: Mapping[Role, str | Model],
    settings: Callable[[Role], GenerateConfig],
    options: EvalOptions,
    role_args: Mapping[Role, Mapping[str, Any]] | None,
) -> tuple[Model, dict[str, Model]]:
    """The eval's main model and role models (by role name), their secrets registered."""
    replay, fast = options.replay_calls, options.fast_path
    main = _model(model, settings(Role.AGENT), replay, fast)
    role_models = {
        role.value: _model(m, settings(role), replay, fast, (role_args or {}).get(role))
        for role, m in roles.items()
    }
    for built in (main, *role_models.values()):
        register_secrets(model_secrets(built))
    return main, role_models


def _outcome(
    success: bool,
    logs: list[EvalLog],
    log_dir: str,
    budget: SpendGuard | None,
    place: JournalPlace | None,
    notes: list[str],
) -> EvalOutcome:
    """What an eval set gave, its log folder put in order.

    The logs are checked written, superseded ones removed, secrets redacted; a run
    its budget stopped leaves its logs unfinished; journals of a complete run dropped.
    """
    resumed, ignored = resumed_calls(), ignored_journals()
    locations = [log.location for log in logs]
    check_logs_written(locations, log_dir)
    interrupted = any(log.status == "cancelled" for log in logs)
    success = success and not interrupted
    remove_superseded_logs(locations)
    if "://" not in log_dir or log_dir.startswith("file://"):
        redact_log_folder(log_dir.removeprefix("file://"))
    spend = budget.spend.model_copy() if budget is not None else None
    if spend is not None and spend.reached:
        success = False
        mark_unfinished(
            locations,
            f"budget reached: {spend.refused} sample(s) not started, {spend.stopped} "
            "stopped by a model call it could not cover",
        )
    # an interrupted eval set may return no log at all: complete only with every log done
    complete = success and bool(logs) and all(log.status == "success" for log in logs)
    drop_journals(place, locations, complete)
    return EvalOutcome(
        success=success,
        interrupted=interrupted,
        logs=locations,
        notes=notes,
        concurrency=concurrency_report(),
        spend=spend,
        resumed_calls=resumed,
        ignored_journals=ignored,
    )


def shard_budget(spec: ShardSpec) -> SpendGuard | None:
    """The spending limit of one shard: its share of the budget, priced by the run's table.

    The expected cost of a sample before any finishes is the run's estimate of it.

    Raises:
        UsageError: a budget without prices.
    """
    limit = spec.budget()
    if limit is None:
        return None
    prices = spec.run.prices
    if prices is None:
        raise UsageError("a budget needs a price table (--prices)")
    estimate = estimate_run(
        ResolvedRun.of(spec.config()),
        agent=spec.run.agent,
        roles=spec.run.roles,
        epochs=spec.run.epochs,
        prices=prices,
        preflight=False,  # a sample's expected cost: the preflight is no sample's
    )
    return SpendGuard(
        limit,
        lambda model, usage: usage_cost(prices, model, usage) or 0.0,
        estimate.per_sample_cost or 0.0,
    )


def run_shard(
    spec: ShardSpec,
    *,
    models: Mapping[Role, Model] | None = None,
    display: str = "none",
) -> ShardResult:
    """Run one shard of a benchmark run (a whole run is one shard) through ``run_eval``.

    Usable in this process, in a worker process (``python -m occubench.scale.worker``)
    and in a Ray task: models are built here from their names with the run's generate
    settings, unless ``models`` gives them (in this process only). The shard then
    reads its own samples into the result, so that shards read their logs in parallel
    and the caller's summary needs no log reading.
    """
    given = models or {}
    with tuned_gc():  # one tuning for the eval and the reading of its logs
        try:
            outcome = run_eval(
                BENCHMARK_TASK,
                spec.config().task_args(),
                log_dir=spec.log_dir,
                model=given.get(Role.AGENT, spec.run.agent),
                roles={role: given.get(role, name) for role, name in spec.run.roles.items()},
                options=spec.run.options,
                generate=spec.generate_config,
                max_samples=spec.samples_at_once(),
                epochs=spec.run.epochs,
                display=display,
                budget=shard_budget(spec),
                role_args={Role.SIMULATOR: spec.config().simulator_args()},
            )
        except LogFolderError as e:  # busy, read-only, full: the shard did not run
            return spec.result(False, error=str(e))
        # the logs are still in the page cache; the results store (Parquet beside each
        # log) is left to the first report: building it here would import pyarrow and
        # pandas at the end of every run
        rows = read_runs(outcome.logs, cache=False)
    if outcome.success:
        error = None
    elif outcome.interrupted:
        error = "interrupted"
    elif outcome.spend is not None and outcome.spend.reached:
        error = "stopped by its budget"
    else:
        error = "the shard's eval set did not complete"
    return spec.result(
        outcome.success,
        interrupted=outcome.interrupted,
        logs=outcome.logs,
        rows=rows,
        concurrency=outcome.concurrency,
        error=error,
        spend=outcome.spend,
        resumed_calls=outcome.resumed_calls,
        ignored_journals=outcome.ignored_journals,
    )
