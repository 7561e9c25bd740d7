"""Sweeps: a YAML grid of runs (agents x simulators x verifiers x modes x faults x seeds).

A sweep file is validated by ``Sweep``; ``expand_sweep`` turns it into runs, each
logging to ``LOG_DIR/<run name>-<digest of what it computes>``, so the same file finds
its runs again (resume), and a run shared by two sweeps (say the E0 run of an agent in
the main table and in the robustness sweep) is one folder, run once.

E0 has no faults, so it is one run per (agent, simulator, verifier), with the default
fault settings and seed recorded, whatever the fault grid and seeds say.

Shipped sweeps (``src/occubench/sweeps/*.yaml``) reproduce the paper's experiments;
their model names start with ``placeholder/``: replace them with ``--agents`` /
``--simulators`` (see ``override``) or by editing a copy.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
from collections.abc import Sequence
from importlib.resources import files
from itertools import product
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from inspect_ai.model import GenerateConfig
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from occubench.defaults import (
    DEFAULT_ATTEMPT_TIMEOUT,
    DEFAULT_DATASET_ENV,
    DEFAULT_FAULT_COUNT,
    DEFAULT_FAULT_DURATION,
    DEFAULT_LOG_REALTIME,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_RETRIES,
    DEFAULT_MAX_TOOL_CALLS,
    DEFAULT_RAY_NUM_CPUS,
    DEFAULT_SAMPLE_RETRIES,
    DEFAULT_SAMPLES_PER_CONNECTION,
    DEFAULT_SEED,
    DEFAULT_SWEEP_LOG_DIR,
    DEFAULT_TIMEOUT,
    DEFAULT_VERIFIER_VOTES,
)
from occubench.faults import EnvMode, FaultEngine
from occubench.reference._suite import REFERENCE_DATASET
from occubench.scale._execute import absolute_location
from occubench.scale._shards import plan_shards
from occubench.scale._spec import RunSpec, ShardResult, ShardSpec

if TYPE_CHECKING:  # the analysis stack is heavy: worker processes never import it
    from occubench.analysis import SampleRow

PLACEHOLDER = "placeholder/"
"""Prefix of the model names in shipped sweeps that the user must replace."""

SWEEPS_DIR = "sweeps"
"""Folder of the shipped sweep files inside the occubench package."""


class ModelChoice(BaseModel):
    """A model of a sweep (simulator or verifier), by name or with its placement."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(description="Inspect model name.")
    resources: dict[str, float] = Field(
        default_factory=dict,
        description="Ray resources a shard using this model needs (e.g. the node serving it).",
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
    generate: dict[str, Any] = Field(
        default_factory=dict,
        description="Inspect GenerateConfig fields for this agent (e.g. reasoning_effort: high).",
    )

    @field_validator("generate")
    @classmethod
    def _generate_config(cls, value: dict[str, Any]) -> dict[str, Any]:
        GenerateConfig(**value)  # unknown fields and bad values are errors now, not at run time
        return value

    def name(self) -> str:
        """The agent's label: given, or the model with its generate options."""
        if self.label:
            return self.label
        options = ",".join(f"{k}={v}" for k, v in sorted(self.generate.items()))
        return f"{self.model}[{options}]" if options else self.model


class FaultGrid(BaseModel):
    """Fault counts x fault durations, for the perturbed modes (E1-E3)."""

    model_config = ConfigDict(extra="forbid")

    fault_count: list[int] = Field(default=[DEFAULT_FAULT_COUNT], min_length=1)
    fault_duration: list[int] = Field(default=[DEFAULT_FAULT_DURATION], min_length=1)


class TaskFilters(BaseModel):
    """Which tasks of the dataset every run of the sweep takes (all when empty)."""

    model_config = ConfigDict(extra="forbid")

    tasks: str | list[int] | None = Field(default=None, description="Task ids.")
    categories: str | list[str] | None = Field(default=None, description="Industries.")
    domains: str | list[str] | None = Field(default=None, description="Domains.")
    difficulty: str | list[int] | None = Field(default=None, description="Difficulty levels.")


class RunOptions(BaseModel):
    """Eval options of every run (they do not change results)."""

    model_config = ConfigDict(extra="forbid")

    max_connections: int = Field(
        default=DEFAULT_MAX_CONNECTIONS,
        description="Requests at once per model in one run (split over its shards).",
    )
    max_samples: int | None = Field(
        default=None,
        description="Samples at once in one run, split over its shards (default: "
        f"{DEFAULT_SAMPLES_PER_CONNECTION} x max_connections).",
    )
    log_realtime: bool = Field(
        default=DEFAULT_LOG_REALTIME, description="Stream running samples to the log."
    )
    retry_on_error: int = DEFAULT_SAMPLE_RETRIES
    max_retries: int = DEFAULT_MAX_RETRIES
    timeout: int = DEFAULT_TIMEOUT
    attempt_timeout: int = DEFAULT_ATTEMPT_TIMEOUT


class Sweep(BaseModel):
    """A grid of occubench runs, as written in a sweep YAML file."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    dataset: str | None = Field(
        default=None, description="Dataset folder, or 'reference' (default: $OCCUBENCH_DATASET)."
    )
    filters: TaskFilters = Field(default_factory=TaskFilters)
    agents: list[AgentChoice] = Field(min_length=1)
    simulators: list[ModelChoice] = Field(min_length=1)
    verifiers: list[ModelChoice | None] = Field(
        default=[None], min_length=1, description="Judges; null = the simulator judges."
    )
    env_modes: list[EnvMode] = Field(default=[EnvMode.E0], min_length=1)
    faults: FaultGrid = Field(default_factory=FaultGrid)
    fault_engine: FaultEngine = FaultEngine.CODE
    seeds: list[int] = Field(default=[DEFAULT_SEED], min_length=1)
    epochs: int = Field(default=1, ge=1)
    with_plan: bool = False
    max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS
    votes: int = DEFAULT_VERIFIER_VOTES
    cache: bool = False
    shards: int = Field(default=1, ge=1, description="Shards per run (part of the log layout).")
    num_cpus: float = Field(default=DEFAULT_RAY_NUM_CPUS, gt=0, description="Ray CPUs per shard.")
    options: RunOptions = Field(default_factory=RunOptions)
    log_dir: str | None = Field(default=None, description="Folder or URL of the sweep's runs.")

    @model_validator(mode="after")
    def _distinct(self) -> Sweep:
        for what, names in (
            ("agent", [a.name() for a in self.agents]),
            ("simulator", [s.model for s in self.simulators]),
            ("verifier", [v.model if v else "" for v in self.verifiers]),
        ):
            repeated = sorted({n for n in names if names.count(n) > 1})
            if repeated:
                raise ValueError(
                    f"{what}s must differ; repeated: {', '.join(repeated)} "
                    "(give agents of one model a label or different generate options)"
                )
        return self


def shipped_sweeps() -> list[str]:
    """Names of the sweep files that ship with occubench."""
    folder = files("occubench") / SWEEPS_DIR
    return sorted(p.name[: -len(".yaml")] for p in folder.iterdir() if p.name.endswith(".yaml"))


def load_sweep(name_or_path: str | Path) -> Sweep:
    """A sweep from a YAML file, or a shipped one by name (``paper-robustness``).

    Raises:
        FileNotFoundError: when it is neither a file nor a shipped name.
        ValueError: when the file is not YAML; ``ValidationError`` when it is not a sweep.

    """
    path = Path(name_or_path)
    if path.is_file():
        text, where = path.read_text(), str(path)
    elif str(name_or_path) in shipped_sweeps():
        resource = files("occubench") / SWEEPS_DIR / f"{name_or_path}.yaml"
        text, where = resource.read_text(), f"shipped sweep {name_or_path}"
    else:
        raise FileNotFoundError(
            f"no sweep file {name_or_path}; shipped sweeps: " + ", ".join(shipped_sweeps())
        )
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ValueError(f"{where}: not valid YAML: {e}") from None
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
        variants = list(
            {json.dumps(a.generate, sort_keys=True): a.generate for a in sweep.agents}.values()
        )
        update["agents"] = [AgentChoice(model=m, generate=g) for m in agents for g in variants]
    if simulators:
        update["simulators"] = [ModelChoice(model=m) for m in simulators]
    if verifiers:
        update["verifiers"] = [ModelChoice(model=m) for m in verifiers]
    if dataset:
        update["dataset"] = dataset
    if log_dir:
        update["log_dir"] = log_dir
    return Sweep.model_validate({**sweep.model_dump(), **update})


def placeholders(sweep: Sweep) -> list[str]:
    """Model names of the sweep still to be replaced (``placeholder/...``)."""
    names = [a.model for a in sweep.agents] + [s.model for s in sweep.simulators]
    names += [v.model for v in sweep.verifiers if v is not None]
    return sorted({n for n in names if n.startswith(PLACEHOLDER)})


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._=-]+", "_", text).strip("_")


def _dataset(value: str | None) -> str | None:
    chosen = value or os.environ.get(DEFAULT_DATASET_ENV)
    if chosen is None or chosen == REFERENCE_DATASET:
        return chosen
    return absolute_location(chosen)


def _merged(*resources: dict[str, float]) -> dict[str, float]:
    merged: dict[str, float] = {}
    for mapping in resources:
        for key, amount in mapping.items():
            merged[key] = max(amount, merged.get(key, 0.0))
    return merged


def _fault_points(sweep: Sweep, mode: EnvMode) -> list[tuple[int, int, int]]:
    if mode is EnvMode.E0:
        return [(DEFAULT_FAULT_COUNT, DEFAULT_FAULT_DURATION, DEFAULT_SEED)]
    return list(product(sweep.faults.fault_count, sweep.faults.fault_duration, sweep.seeds))


def _run_name(
    agent: AgentChoice,
    simulator: ModelChoice,
    verifier: ModelChoice | None,
    mode: EnvMode,
    fc: int,
    fd: int,
    seed: int,
) -> str:
    parts = [_slug(agent.name()), _slug(simulator.model)]
    if verifier is not None:
        parts.append(f"judge-{_slug(verifier.model)}")
    parts.append(mode.value if mode is EnvMode.E0 else f"{mode.value}-fc{fc}-fd{fd}-s{seed}")
    return "__".join(parts)


def expand_sweep(sweep: Sweep) -> list[RunSpec]:
    """Every run of the grid, in a fixed order (agent, simulator, verifier, mode, fc, fd, seed)."""
    root = absolute_location(sweep.log_dir or DEFAULT_SWEEP_LOG_DIR)
    options = sweep.options
    generate = GenerateConfig(
        max_connections=options.max_connections,
        max_retries=options.max_retries,
        timeout=options.timeout,
        attempt_timeout=options.attempt_timeout,
    ).model_dump(exclude_none=True)
    judge = {"max_connections": options.max_connections * sweep.votes}  # k votes at once
    fixed = dict(
        dataset=_dataset(sweep.dataset),
        fault_engine=sweep.fault_engine.value,
        with_plan=sweep.with_plan,
        task_ids=sweep.filters.tasks,
        categories=sweep.filters.categories,
        domains=sweep.filters.domains,
        difficulty=sweep.filters.difficulty,
        max_tool_calls=sweep.max_tool_calls,
        votes=sweep.votes,
        cache=sweep.cache,
    )
    runs: list[RunSpec] = []
    grid = product(sweep.agents, sweep.simulators, sweep.verifiers, sweep.env_modes)
    for agent, simulator, verifier, mode in grid:
        for fc, fd, seed in _fault_points(sweep, mode):
            name = _run_name(agent, simulator, verifier, mode, fc, fd, seed)
            run = RunSpec(
                name=name,
                agent=agent.model,
                agent_label=agent.name(),
                roles={
                    "simulator": simulator.model,
                    **({"verifier": verifier.model} if verifier else {}),
                },
                task_args={
                    **fixed,
                    "env_mode": mode.value,
                    "fault_count": fc,
                    "fault_duration": fd,
                    "seed": seed,
                },
                epochs=sweep.epochs,
                generate=generate,
                agent_generate=agent.generate,
                role_generate={"verifier": judge} if verifier else {},
                max_samples=options.max_samples
                or DEFAULT_SAMPLES_PER_CONNECTION * options.max_connections,
                retry_on_error=options.retry_on_error,
                eval_options={"log_realtime": options.log_realtime},
                log_dir=root,
                resources=_merged(
                    agent.resources, simulator.resources, verifier.resources if verifier else {}
                ),
                num_cpus=sweep.num_cpus,
            )
            runs.append(run.model_copy(update={"log_dir": f"{root}/{name}-{run.key()}"}))
    return runs


def sweep_runs(sweeps: Sequence[Sweep]) -> list[tuple[RunSpec, int]]:
    """The runs of one or more sweeps with their shard counts; a run in two sweeps once."""
    seen: dict[str, tuple[RunSpec, int]] = {}
    for sweep in sweeps:
        for run in expand_sweep(sweep):
            seen.setdefault(run.log_dir, (run, sweep.shards))
    return list(seen.values())


def sweep_shards(runs: Sequence[tuple[RunSpec, int]]) -> list[ShardSpec]:
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
