"""Planning a run: what a command asks for, checked against the data, as the runner runs it.

``run``, ``floor`` and ``sweep`` ask for runs; ``plan_run`` turns a ``RunRequest`` (the
command's options, parsed) into a ``RunPlan`` (the ``RunSpec``, its selection, its
executor and how many shards it may take), saying every problem of the input before any
model call or log folder. The commands print what the plan says and carry it out.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from occubench.config import (
    NO_AGENT_MODEL,
    EvalOptions,
    ResolvedRun,
    RunConfig,
    protocol_points,
    run_clamp_notes,
)
from occubench.costs import PriceTable, load_prices
from occubench.dataset import EnvConfig, TaskRecord
from occubench.defaults import DEFAULT_LOG_ROOT
from occubench.errors import UsageError
from occubench.roles import Role
from occubench.scale._execute import check_executor
from occubench.scale._shards import selected_task_ids, shard_count, shards_for_latency
from occubench.scale._spec import Executor, RoleSettings, RunSpec, ShardSpec
from occubench.scale._sweep import Sweep, SweepRun, placeholders, sweep_shards

Warn = Callable[[str], None]
"""Where a plan says a warning as it meets it (a problem that does not stop the run)."""


class RunRequest(BaseModel):
    """A run as a command asks for it: its options parsed, nothing checked against the data."""

    model_config = ConfigDict(extra="forbid")

    agent_model: str | None = Field(description="The agent under test (None: an agent program).")
    roles: dict[Role, str] = Field(description="The model of each other role, by role.")
    config: RunConfig = Field(description="What the run computes.")
    options: EvalOptions = Field(default_factory=EvalOptions, description="How it is carried out.")
    generate: dict[Role, RoleSettings] = Field(
        default_factory=dict, description="GenerateConfig fields per role."
    )
    limit: int | None = Field(default=None, description="Only the first N selected tasks.")
    epochs: int = Field(default=1, ge=1, description="Runs of each task.")
    prices: Path | None = Field(default=None, description="The price table's file.")
    log_root: str | None = Field(
        default=None, description="The folder under which the run's own folder is made."
    )
    workers: int | None = Field(default=None, description="Shards asked for (None: chosen).")
    executor: Executor = Field(default=Executor.LOCAL, description="Where shards run.")
    resources: dict[str, float] = Field(
        default_factory=dict, description="Ray resources each shard needs."
    )
    ray_address: str | None = Field(default=None, description="The Ray cluster (None: local).")
    preflight: bool = Field(default=True, description="Try every model before the first sample.")


class RunPlan(BaseModel):
    """A checked run: its spec (no log folder yet), its selection, where and in how many shards."""

    model_config = ConfigDict(extra="forbid")

    spec: RunSpec = Field(description="The run, its log folder not yet chosen.")
    resolved: ResolvedRun = Field(description="The run's configuration, resolved once.")
    selected: list[int] = Field(description="The task ids the run runs, sorted.")
    executor: Executor = Field(description="Where its shards run.")
    log_root: str | None = Field(description="The folder its own folder is made under.")
    workers: int | None = Field(description="Shards asked for (None: chosen by the run).")
    ray_address: str | None = Field(description="The Ray cluster (None: a local instance).")
    preflight: bool = Field(description="Whether every model is tried before the first sample.")
    notes: list[str] = Field(
        default_factory=list, description="What each provider is sent, if not as asked."
    )

    @property
    def samples(self) -> int:
        """Samples of the run: tasks x epochs."""
        return len(self.selected) * self.spec.epochs

    @property
    def in_flight(self) -> int:
        """Samples the run has in flight at once."""
        return min(self.samples, self.spec.options.samples_at_once())

    @property
    def local(self) -> bool:
        """Whether its shards run as processes of this machine."""
        return self.executor is Executor.LOCAL

    @property
    def most(self) -> int:
        """The most shards the run takes (``shard_count``)."""
        return shard_count(self.workers, len(self.selected), self.samples, self.in_flight)

    @property
    def sticky(self) -> bool:
        """Whether its shard count is fixed before the preflight (asked for, or not local)."""
        return self.workers is not None or not self.local

    def log_dir(self, shards: int) -> str:
        """The run's own log folder for ``shards`` shards (``run_log_dir``)."""
        return run_log_dir(self.spec, shards, self.log_root)

    def shards(self, latency: float | None) -> int:
        """The run's shards: fixed, those of a started folder (resume), else by latency."""
        if self.sticky:
            return self.most
        return run_shards(self.spec, self.log_root, self.most, self.in_flight, latency)


def run_log_dir(spec: RunSpec, shards: int, root: str | None) -> str:
    """The run's own log folder: ``ROOT/<agent>__<simulator>__<mode>-<digest>``.

    ``root`` is ``--log-dir`` (default: ``logs``). The name says what runs there, and
    the digest of what the run computes (and its shard count) lets the same command
    find the folder again, while several runs share one ``--log-dir``.
    """
    base = (root or DEFAULT_LOG_ROOT).rstrip("/")
    return f"{base}/{spec.folder_name(shards)}"


def run_shards(
    spec: RunSpec, root: str | None, most: int, in_flight: int, latency: float | None
) -> int:
    """The run's shards, at most ``most``.

    Those of its log folder under ``root`` if it was started before (resume), else as
    many as its endpoints' latency needs (``shards_for_latency``). A remote root is not
    looked in: the run takes ``most``.
    """
    return started_shards(spec, root, most) or shards_for_latency(most, in_flight, latency)


def started_shards(spec: RunSpec, root: str | None, most: int) -> int | None:
    """The shard count of the run's newest folder under ``root`` (None: none started).

    A remote root is not looked in: the run takes ``most``.
    """
    base = (root or DEFAULT_LOG_ROOT).rstrip("/")
    if "://" in base and not base.startswith("file://"):
        return most
    started = [
        (folder.stat().st_mtime, count)
        for count in range(1, max(most, os.cpu_count() or 1) + 1)
        if (folder := Path(base.removeprefix("file://")) / spec.folder_name(count)).is_dir()
    ]
    return max(started)[1] if started else None


def selected_run(config: RunConfig, limit: int | None, dataset: str | None = None) -> RunConfig:
    """The run with its dataset folder made absolute and its selection fixed (``limit``).

    Raises:
        UsageError: no task matches (named by ``dataset``, default: the folder).
    """
    folder = str(config.dataset_dir().resolve())
    config = config.model_copy(update={"dataset": folder})
    selected = selected_task_ids(config)  # loaded once: the shard planner reuses it
    if limit:
        selected = selected[:limit]
        config = config.model_copy(update={"task_ids": selected})
    if not selected:  # Inspect would fail on an empty dataset, with a traceback
        raise UsageError(f"no task in {dataset or folder} matches the selection")
    return config


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


def tasks_with_user(tasks: list[TaskRecord], roles: dict[Role, str]) -> None:
    """Refuse a run whose tasks have a simulated user when it names no user model.

    Raises:
        UsageError: naming the tasks with a ``user`` brief.
    """
    talking = [t.task_id for t in tasks if t.user is not None]
    if talking and Role.USER not in roles:
        shown = ", ".join(map(str, talking[:10])) + (" ..." if len(talking) > 10 else "")
        raise UsageError(
            f"{len(talking)} task(s) have a simulated user (a 'user' brief): {shown}; give "
            "--user-model MODEL (or --model-role user=MODEL), or leave those tasks out"
        )


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


def check_budget(request: RunRequest, prices: PriceTable | None) -> None:
    """A ``--budget`` needs a price for every model and a max_tokens on every call.

    Raises:
        UsageError: a model without a price, or a role whose calls set no max_tokens.
    """
    if request.options.budget is None:
        return
    agent = [request.agent_model] if request.agent_model else []
    missing = [
        m for m in agent + list(request.roles.values()) if prices is None or m not in prices.models
    ]
    if missing:
        raise UsageError(
            "--budget needs --prices with a price for every model of the run; no "
            f"price for {', '.join(missing)}"
        )
    unbounded = unbounded_roles(request.config)
    if unbounded:
        raise UsageError(
            "--budget bounds each model call's cost by its max_tokens, and the "
            f"{', '.join(r.value for r in unbounded)} calls of this protocol set none: "
            "give them one, e.g. " + " ".join(f"--max-tokens {r.value}=16384" for r in unbounded)
        )


def check_world(config: RunConfig) -> str | None:
    """Open the run's world as its mode needs; the line on its conflicting keys, if any.

    Raises:
        UsageError: a world that cannot be used as asked.
    """
    from occubench.agent import conflicted_world, open_run_world

    world = open_run_world(config)
    return None if world is None else conflicted_world(world, config)


def plan_run(request: RunRequest, warn: Warn) -> RunPlan:
    """Check a run against its data and models; the plan the runner carries out.

    ``warn`` is told each problem that does not stop the run, as it is met (a setting
    the data ignores, a world with conflicting answers).

    Raises:
        UsageError: anything that would stop the run (said before any model call).
    """
    executor = check_executor(request.executor)
    config = selected_run(request.config, request.limit)
    loaded = config.load_tasks()
    for line in config.check_fields(loaded.tasks):
        warn(f"Warning: {line}")
    if config.world is not None:  # shards and workers find it from any folder
        config = config.model_copy(update={"world": str(Path(config.world).expanduser().resolve())})
    resolved = ResolvedRun.of(config)  # a clone that lacks a prompt is bad input: said now
    conflicts = check_world(config)
    if conflicts is not None:
        warn(conflicts)
    prices = load_prices(request.prices) if request.prices else None
    if request.agent_model is None and not config.agent_command:
        raise UsageError("--agent-model is required (optional only with --agent-command)")
    tasks_with_user(loaded.tasks, request.roles)
    envs = [loaded.envs[t.env_name] for t in loaded.tasks]
    config = checked_twins(config, request.roles[Role.SIMULATOR], envs)
    check_budget(request, prices)
    agent = request.agent_model or NO_AGENT_MODEL
    spec = RunSpec(
        agent=agent,
        roles=request.roles,
        config=config,
        epochs=request.epochs,
        generate=request.generate,
        options=request.options,
        log_dir="",
        resources=request.resources,
        prices=prices,
    )
    models = {Role.AGENT: agent, **request.roles}  # what each provider is sent, if not as asked
    notes = [c.line() for c in run_clamp_notes(models, spec.generate_config, resolved.points)]
    return RunPlan(
        spec=spec,
        resolved=resolved,
        selected=selected_task_ids(config),
        executor=executor,
        log_root=request.log_root,
        workers=request.workers,
        ray_address=request.ray_address,
        preflight=request.preflight,
        notes=notes,
    )


def plan_sweep(sweeps: list[Sweep], runs: list[SweepRun]) -> list[ShardSpec]:
    """The shards of a sweep's runs, once every model is named and every world can be used.

    Raises:
        UsageError: a placeholder model left in a sweep, a dataset or a world that cannot
            be used as asked.
    """
    missing = sorted({name for s in sweeps for name in placeholders(s)})
    if missing:
        raise UsageError(
            f"the sweep names placeholder models ({', '.join(missing)}): "
            "replace them with --agents, --simulators, --verifiers or edit a "
            "copy of the sweep file"
        )
    shards = sweep_shards(runs)
    for run, _ in runs:
        check_world(run.config)  # a world that cannot be used as asked: said now
    return shards
