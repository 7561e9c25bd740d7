"""Sweeps: a YAML grid of runs (agents x simulators x verifiers x any configuration axes).

A sweep file is validated by ``Sweep``: its top level is a ``RunConfig`` (every field of
a run settable, the base of every run), with the models and a ``grid`` of configuration
axes on top (``grid: {env_mode: [E0, E1], fault_count: [1, 2]}``). ``expand_sweep``
turns it into runs, each logging to ``LOG_DIR/<run name>-<digest of what it
computes>``, so the same file finds its runs again (resume), and a run shared by two
sweeps (say the E0 run of an agent in the main table and in the robustness sweep) is
one folder, run once.

Each run's configuration is normalized (``RunConfig.normalized``): an E0 run without
fault families is one run per (agent, simulator, verifier) with the default fault
settings recorded, whatever the fault axes say.

A sweep file is input like any other: it is read within bounds (``MAX_SWEEP_BYTES``,
``MAX_SWEEP_VALUES`` with aliases counted at their expanded size, ``MAX_SWEEP_DEPTH``;
``text.bounded_yaml``) before any object is built, and its size in runs (agents x
simulators x verifiers x the length of each grid axis) is computed before the grid is
expanded, and refused above ``MAX_SWEEP_RUNS``.

Shipped sweeps (``src/occubench/sweeps/*.yaml``) reproduce the paper's experiments with
its models, by their Inspect names (the published table's ``models`` maps the paper's
names to them); ``--agents`` / ``--simulators`` / ``--verifiers`` replace them (see
``override``). A sweep file may name ``placeholder/...`` models for the user to fill in
(a template); ``placeholders`` lists them and ``occubench sweep`` refuses to run them.
"""

from __future__ import annotations

import fnmatch
import json
import math
import os
from collections.abc import Sequence
from importlib.resources import files
from itertools import product
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from inspect_ai.model import GenerateConfig
from pydantic import BaseModel, ConfigDict, Field, model_validator

from occubench.config import EvalOptions, RunConfig, setting_names
from occubench.dataset import BUILTIN_DATASETS
from occubench.defaults import DEFAULT_DATASET_ENV, DEFAULT_RAY_NUM_CPUS, DEFAULT_SWEEP_LOG_DIR
from occubench.errors import UsageError
from occubench.redaction import redact, redact_settings
from occubench.roles import Role
from occubench.scale._execute import absolute_location
from occubench.scale._shards import plan_shards
from occubench.scale._spec import RoleSettings, RunSpec, ShardResult, ShardSpec, slug
from occubench.text import bounded_yaml

if TYPE_CHECKING:  # the analysis stack is heavy: worker processes never import it
    from occubench.results import SampleRow

PLACEHOLDER = "placeholder/"
"""Prefix of the model names in a template sweep that the user must replace."""

SWEEPS_DIR = "sweeps"
"""Folder of the shipped sweep files inside the occubench package."""

MAX_SWEEP_BYTES = 256 * 1024
"""Largest sweep file (the shipped ones are under 2 kB)."""
MAX_SWEEP_VALUES = 20_000
"""Most YAML values in a sweep file, an alias counting as the values it repeats."""
MAX_SWEEP_DEPTH = 32
"""Deepest nesting of lists and mappings in a sweep file."""
MAX_SWEEP_RUNS = 10_000
"""Most runs in one sweep (the paper's six sweeps hold 100 together, 79 once shared)."""


class ModelChoice(BaseModel):
    """A model of a sweep (simulator or verifier), by name or with its placement."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(description="Inspect model name.")
    resources: dict[str, float] = Field(
        default_factory=dict,
        description="Ray resources a shard using this model needs (e.g. the node serving it).",
    )
    generate: RoleSettings = Field(
        default_factory=GenerateConfig,
        description="Inspect GenerateConfig fields for this model in its role (e.g. "
        "reasoning_effort: high, temperature: 0); see occubench.config.checked_generate.",
    )

    @model_validator(mode="before")
    @classmethod
    def _from_name(cls, value: Any) -> Any:
        return {"model": value} if isinstance(value, str) else value


class AgentChoice(ModelChoice):
    """An agent of a sweep: a model, optionally with generate options of its own."""

    label: str | None = Field(
        default=None, description="Name in reports (default: the model and its options)."
    )

    def name(self) -> str:
        """The agent's label: given, or the model with its generate options.

        Secrets (an ``Authorization`` header) are redacted: the label names log folders
        and shows in reports.
        """
        if self.label:
            return redact(self.label)
        shown = redact_settings(self.generate.model_dump(exclude_unset=True))
        options = ",".join(f"{k}={v}" for k, v in sorted(shown.items()))
        return f"{self.model}[{options}]" if options else self.model


_MOVED_KEYS = {
    "env_modes": "grid: {env_mode: [...]}",
    "seeds": "grid: {seed: [...]}",
    "filters": "the top-level task_ids, industries, domains and difficulty",
}
"""Keys of the older sweep format, and where their content goes now."""


class GridPoint(NamedTuple):
    """One point of a sweep's grid."""

    axes: dict[str, Any]
    """The value of each grid axis at the point."""
    config: RunConfig
    """The run configuration there, normalized."""


class SweepRun(NamedTuple):
    """A run of a sweep and the shards it is split into."""

    run: RunSpec
    shards: int


class Sweep(RunConfig):
    """A grid of occubench runs, as written in a sweep YAML file.

    Every ``RunConfig`` field may be set at the top level (the base of every run);
    ``grid`` varies any of them; agents, simulators and verifiers are crossed with it.
    """

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Name of the sweep.")
    description: str = Field(default="", description="What the sweep measures.")
    agents: list[AgentChoice] = Field(min_length=1, description="Agents under test.")
    agent_generate: RoleSettings = Field(
        default_factory=GenerateConfig,
        description="GenerateConfig fields for every agent (e.g. reasoning_effort: high); "
        "an agent's own generate options win.",
    )
    simulators: list[ModelChoice] = Field(min_length=1, description="Simulators (LES).")
    verifiers: list[ModelChoice | None] = Field(
        default=[None], min_length=1, description="Judges; null = the simulator judges."
    )
    grid: dict[str, list[Any]] = Field(
        default_factory=dict,
        description="Configuration axes: RunConfig field -> values; every combination runs.",
    )
    epochs: int = Field(default=1, ge=1, description="Runs of each task.")
    shards: int = Field(default=1, ge=1, description="Shards per run (part of the log layout).")
    num_cpus: float = Field(default=DEFAULT_RAY_NUM_CPUS, gt=0, description="Ray CPUs per shard.")
    options: EvalOptions = Field(
        default_factory=EvalOptions, description="How every run is carried out."
    )
    log_dir: str | None = Field(default=None, description="Folder or URL of the sweep's runs.")

    @model_validator(mode="before")
    @classmethod
    def _older_keys(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        moved = [f"{key}: now {where}" for key, where in _MOVED_KEYS.items() if key in data]
        if isinstance(data.get("faults"), dict):
            moved.append(
                "faults: now lists fault families (persistent, cascading, ...); fault counts "
                "and durations are grid axes: grid: {fault_count: [...], fault_duration: [...]}"
            )
        if moved:
            raise UsageError("older sweep format; " + "; ".join(moved))
        return data

    @model_validator(mode="after")
    def _valid(self) -> Sweep:
        self._bounded()
        unknown = sorted(set(self.grid) - set(setting_names(RunConfig)))
        if unknown:
            raise UsageError(
                f"grid axes must be run configuration fields; unknown: {', '.join(unknown)} "
                f"(fields: {', '.join(RunConfig.model_fields)})"
            )
        empty = sorted(axis for axis, values in self.grid.items() if not values)
        if empty:
            raise UsageError(f"grid axes need at least one value: {', '.join(empty)}")
        self.configs()  # every point of the grid is a valid configuration, now (bounded)
        if self.options.budget is not None:
            raise UsageError(
                "options.budget: a sweep has no price table; give --budget and --prices to "
                "occubench run"
            )
        for what, names in (
            ("agent", [a.name() for a in self.agents]),
            ("simulator", [s.model for s in self.simulators]),
            ("verifier", [v.model if v else "" for v in self.verifiers]),
        ):
            repeated = sorted({n for n in names if names.count(n) > 1})
            if repeated:
                raise UsageError(
                    f"{what}s must differ; repeated: {', '.join(repeated)} "
                    "(give agents of one model a label or different generate options)"
                )
        return self

    def _bounded(self) -> None:
        """Refuse a grid of more than ``MAX_SWEEP_RUNS`` runs, counted before it is expanded."""
        sizes = [len(self.agents), len(self.simulators), len(self.verifiers)]
        axes = [len(values) for values in self.grid.values()]
        runs = math.prod(sizes + axes)
        if runs > MAX_SWEEP_RUNS:
            shown = " x ".join(
                f"{name} {n}"
                for name, n in zip(
                    ["agents", "simulators", "verifiers", *self.grid], sizes + axes, strict=True
                )
            )
            raise UsageError(
                f"grid: sweep {self.name} is {runs:,} runs ({shown}); a sweep holds at most "
                f"{MAX_SWEEP_RUNS:,} runs: split it into several sweep files"
            )

    def base(self) -> RunConfig:
        """The configuration every run starts from (the file's top-level fields)."""
        return RunConfig.model_validate(self.model_dump(include=set(RunConfig.model_fields)))

    def configs(self) -> list[GridPoint]:
        """Every point of the grid (its axis values) with its normalized configuration.

        An axis may name a field by an older name (``categories``); the point keeps it.
        """
        base = self.base().model_dump()
        fields = setting_names(RunConfig)
        axes = list(self.grid)
        points = [dict(zip(axes, values, strict=True)) for values in product(*self.grid.values())]

        def config(point: dict[str, Any]) -> RunConfig:
            chosen = {fields[axis]: value for axis, value in point.items()}
            return RunConfig.model_validate({**base, **chosen}).normalized()

        return [GridPoint(point, config(point)) for point in points]


def shipped_sweeps() -> list[str]:
    """Names of the sweep files that ship with occubench."""
    folder = files("occubench") / SWEEPS_DIR
    return sorted(p.name[: -len(".yaml")] for p in folder.iterdir() if p.name.endswith(".yaml"))


def load_sweep(name_or_path: str | Path) -> Sweep:
    """A sweep from a YAML file, or a shipped one by name (``paper-robustness``).

    The file is read within bounds (module doc).

    Raises:
        FileNotFoundError: when it is neither a file nor a shipped name.
        ValueError: when the file is over a bound or not YAML (``YamlBoundError``: file,
            line, field); ``ValidationError`` when it is not a sweep.

    """
    path = Path(name_or_path)
    source: Path | bytes
    if path.is_file():
        source, where = path, str(path)
    elif str(name_or_path) in shipped_sweeps():
        resource = files("occubench") / SWEEPS_DIR / f"{name_or_path}.yaml"
        source, where = resource.read_bytes(), f"shipped sweep {name_or_path}"
    else:
        raise FileNotFoundError(
            f"no sweep file {name_or_path}; shipped sweeps: " + ", ".join(shipped_sweeps())
        )
    data = bounded_yaml(
        source,
        where,
        max_bytes=MAX_SWEEP_BYTES,
        max_nodes=MAX_SWEEP_VALUES,
        max_depth=MAX_SWEEP_DEPTH,
    )
    return Sweep.model_validate(data)


def load_sweeps(names: Sequence[str]) -> list[Sweep]:
    """Sweeps from files or shipped names; a shell pattern (``'paper-*'``) picks shipped ones."""
    chosen: list[str] = []
    for name in names:
        if Path(name).is_file() or not any(c in name for c in "*?["):
            chosen.append(name)
            continue
        matched = fnmatch.filter(shipped_sweeps(), name)
        if not matched:
            raise FileNotFoundError(
                f"no shipped sweep matches {name}; shipped sweeps: " + ", ".join(shipped_sweeps())
            )
        chosen += matched
    return [load_sweep(name) for name in chosen]


def override(
    sweep: Sweep,
    *,
    agents: Sequence[str] | None = None,
    simulators: Sequence[str] | None = None,
    verifiers: Sequence[str] | None = None,
    dataset: str | None = None,
    log_dir: str | None = None,
) -> Sweep:
    """The sweep with the models (or dataset, log folder) the user names.

    ``agents`` replaces the agent models; the file's distinct generate options apply
    to each new model (so a reasoning-effort sweep keeps its levels). Simulators and
    verifiers are replaced as given; placements (``resources``) of replaced models go.
    """
    update: dict[str, Any] = {}
    if agents:
        given = [a.generate.model_dump(mode="json", exclude_unset=True) for a in sweep.agents]
        variants = list({json.dumps(g, sort_keys=True): g for g in given}.values())
        update["agents"] = [{"model": m, "generate": g} for m in agents for g in variants]
    if simulators:
        update["simulators"] = [{"model": m} for m in simulators]
    if verifiers:
        update["verifiers"] = [{"model": m} for m in verifiers]
    if dataset:
        update["dataset"] = dataset
    if log_dir:
        update["log_dir"] = log_dir
    return Sweep.model_validate({**sweep.model_dump(mode="json"), **update})


def placeholders(sweep: Sweep) -> list[str]:
    """Model names of the sweep still to be replaced (``placeholder/...``)."""
    names = [a.model for a in sweep.agents] + [s.model for s in sweep.simulators]
    names += [v.model for v in sweep.verifiers if v is not None]
    return sorted({n for n in names if n.startswith(PLACEHOLDER)})


def _dataset(value: str | None) -> str | None:
    chosen = value or os.environ.get(DEFAULT_DATASET_ENV)
    if chosen is None or chosen in BUILTIN_DATASETS:
        return chosen
    return absolute_location(chosen)


def _merged(*resources: dict[str, float]) -> dict[str, float]:
    merged: dict[str, float] = {}
    for mapping in resources:
        for key, amount in mapping.items():
            merged[key] = max(amount, merged.get(key, 0.0))
    return merged


_FAULT_AXES = ("env_mode", "fault_count", "fault_duration", "seed")


def _run_name(
    agent: AgentChoice,
    simulator: ModelChoice,
    verifier: ModelChoice | None,
    point: dict[str, Any],
    config: RunConfig,
) -> str:
    parts = [slug(agent.name()), slug(simulator.model)]
    if verifier is not None:
        parts.append(f"judge-{slug(verifier.model)}")
    mode = config.env_mode.value
    parts.append(
        f"{mode}-fc{config.fault_count}-fd{config.fault_duration}-s{config.seed}"
        if config.injects_faults()
        else mode
    )
    fields = setting_names(RunConfig)
    parts += [
        slug(f"{axis}-{getattr(config, fields[axis])}") for axis in point if axis not in _FAULT_AXES
    ]
    return "__".join(parts)


def _over(base: GenerateConfig, own: GenerateConfig) -> GenerateConfig:
    """``base`` with the fields ``own`` sets set as ``own`` sets them (an agent's own win)."""
    return base.model_copy(update=own.model_dump(exclude_unset=True))


def expand_sweep(sweep: Sweep) -> list[RunSpec]:
    """Every run of the grid, in a fixed order (agent, simulator, verifier, grid points)."""
    root = absolute_location(sweep.log_dir or DEFAULT_SWEEP_LOG_DIR)
    points = [
        (point, config.model_copy(update={"dataset": _dataset(config.dataset)}))
        for point, config in sweep.configs()
    ]
    runs: dict[str, RunSpec] = {}
    grid = product(sweep.agents, sweep.simulators, sweep.verifiers, points)
    for agent, simulator, verifier, (point, config) in grid:
        name = _run_name(agent, simulator, verifier, point, config)
        run = RunSpec(
            name=name,
            agent=agent.model,
            agent_label=agent.name(),
            roles={
                Role.SIMULATOR: simulator.model,
                **({Role.VERIFIER: verifier.model} if verifier else {}),
            },
            config=config,
            epochs=sweep.epochs,
            generate={
                role: settings
                for role, settings in (
                    (Role.AGENT, _over(sweep.agent_generate, agent.generate)),
                    (Role.SIMULATOR, simulator.generate),
                    (Role.VERIFIER, verifier.generate if verifier else GenerateConfig()),
                )
                if settings.model_fields_set
            },
            options=sweep.options,
            log_dir=root,
            resources=_merged(
                agent.resources, simulator.resources, verifier.resources if verifier else {}
            ),
            num_cpus=sweep.num_cpus,
        )
        log_dir = f"{root}/{name}-{run.key()}"
        runs.setdefault(log_dir, run.model_copy(update={"log_dir": log_dir}))
    return list(runs.values())


def sweep_runs(sweeps: Sequence[Sweep]) -> list[SweepRun]:
    """The runs of one or more sweeps with their shard counts; a run in two sweeps once."""
    seen: dict[str, SweepRun] = {}
    for sweep in sweeps:
        for run in expand_sweep(sweep):
            seen.setdefault(run.log_dir, SweepRun(run, sweep.shards))
    return list(seen.values())


def sweep_shards(runs: Sequence[SweepRun]) -> list[ShardSpec]:
    """Every shard of the runs (loads the dataset to deal the task ids)."""
    return [shard for run, count in runs for shard in plan_shards(run, count)]


def labelled(
    rows: Sequence[SampleRow], results: Sequence[ShardResult], runs: Sequence[RunSpec]
) -> list[SampleRow]:
    """Rows with each agent named by its sweep label (one model under several options)."""
    label = {run.name: run.agent_label for run in runs if run.agent_label}
    by_log = {log: label[r.run] for r in results if r.run in label for log in r.logs}
    return [
        row.model_copy(update={"agent_model": by_log[row.log]}) if row.log in by_log else row
        for row in rows
    ]
