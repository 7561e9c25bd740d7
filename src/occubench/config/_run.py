"""The run configuration: every setting that decides what a run computes.

``RunConfig`` is declared once: its fields are the ``occubench run`` options
(``occubench.cli``), the ``@task``'s parameters (``occubench.task``), a sweep file's keys
and the settings reference of the docs, all generated from them. Its protocol point
overrides are generated from ``ProtocolPoints`` (``ProtocolOverrides``). Settings that
do not change results (concurrency, retries, log buffering) are ``EvalOptions``.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Sequence
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator

from occubench.config._fields import Cli, aliases
from occubench.config._protocol import PRESETS, ProtocolOverrides, ProtocolPoints
from occubench.dataset import Dataset, TaskRecord, load_dataset, resolve_dataset_dir
from occubench.defaults import (
    DEFAULT_AGENT_TIME_LIMIT,
    DEFAULT_DATE,
    DEFAULT_PROTOCOL,
    DEFAULT_SUBMIT_TOOL,
    DEFAULT_VERIFIER_VOTES,
)
from occubench.errors import UsageError
from occubench.faults import EnvMode, FaultEngine, FaultFamily, FaultSettings, fault_type
from occubench.guard import DEFAULT_GUARD, ExploitGuard
from occubench.protocols import Protocol
from occubench.simulator import StateMode
from occubench.worlds import WorldConflicts, WorldMode

NO_AGENT_MODEL = "none/none"
"""Inspect's model that is never called: the main model of an agent-program run that uses none."""

CONFIG_METADATA = "config"
"""Key of a run's resolved ``RunConfig`` in its log's task metadata (``log.eval.metadata``)."""

POINTS_METADATA = "protocol"
"""Key of the run's resolved protocol points in its log's task metadata."""

RELEASE_METADATA = "release_prompts"
"""Key of the release files (and their SHA-256) a run took its prompt wording from."""

DATASET_DIGEST_METADATA = "dataset_digest"
"""Key of the digest of the dataset folder as the run read it (``dataset.content_digest``),
taken when the run starts: a bundle states it, and ``verify`` holds the bundle to it."""


def split_list(value: Any) -> Any:
    """A list from a comma-separated string or a single value (how ``-T`` arguments arrive).

    Empty items are dropped and an empty result is None; anything else is left for
    validation to judge.
    """
    if value is None:
        return None
    if isinstance(value, str | int) and not isinstance(value, bool):
        value = str(value).split(",")
    if isinstance(value, list | tuple):
        items = [v.strip() if isinstance(v, str) else v for v in value]
        items = [v for v in items if v != ""]
        return items or None
    return value


def _enum_value(enum: type[Enum], value: Any) -> Any:
    """Match an enum value case-insensitively (``e1`` is ``E1``); leave others as they are."""
    if isinstance(value, str) and not isinstance(value, Enum):
        for member in enum:
            if str(member.value).lower() == value.strip().lower():
                return member
    return value


def _family(value: Any) -> Any:
    """A fault family by name (any case); an unknown name is the registry's own error."""
    found = _enum_value(FaultFamily, value)
    if isinstance(value, str) and not isinstance(found, FaultFamily):
        fault_type(value.strip())  # raises, saying how to add a fault type
    return found


def _choice(annotation: Any) -> type[Enum] | None:
    """The enum a field's value is one member of (``X`` or ``X | None``), if any."""
    for candidate in (annotation, *getattr(annotation, "__args__", ())):
        if isinstance(candidate, type) and issubclass(candidate, Enum):
            return candidate
    return None


def _is_list(annotation: Any) -> bool:
    """Whether a field holds a list (``list[X]`` or ``list[X] | None``)."""
    candidates = (annotation, *getattr(annotation, "__args__", ()))
    return any(getattr(c, "__origin__", None) is list for c in candidates)


class _RunFields(FaultSettings):
    """``RunConfig``'s own fields, which come before the protocol point overrides."""

    model_config = ConfigDict(extra="forbid")

    dataset: str | None = Field(
        default=None,
        description="Dataset folder in the release layout, or 'reference' for the built-in "
        "suite (default: $OCCUBENCH_DATASET).",
    )
    task_ids: Annotated[list[int] | None, Cli(names=("--tasks",), metavar="ID,...")] = Field(
        default=None, description="Only these task ids (list, or comma-separated: 11,24,26)."
    )
    industries: list[str] | None = Field(
        default=None,
        validation_alias=AliasChoices("industries", "categories"),
        description="Only these industries (list, or comma-separated; 'categories' is its "
        "older name).",
    )
    domains: list[str] | None = Field(
        default=None, description="Only these domains (list, or comma-separated)."
    )
    difficulty: Annotated[list[int] | None, Cli(metavar="LEVEL,...")] = Field(
        default=None, description="Only these difficulty levels (list, or comma-separated: 2,3)."
    )
    with_plan: bool = Field(
        default=False,
        description="Give the agent the task's solution plan (the public release has none: "
        "such a run stops unless allow_missing_fields).",
    )
    allow_missing_fields: bool = Field(
        default=False,
        description="Run when a setting needs a task field some tasks lack (with_plan "
        "without a solution_plan, targeted faults without a reference_plan): those tasks "
        "run without it. Off: the run stops before it starts, naming how many lack it.",
    )
    state_mode: StateMode = Field(
        default=StateMode.HISTORY,
        description="history: the state lives in the simulator's history (the paper's way); "
        "explicit: a JSON state patched by the simulator (JSON Patch) and logged after every "
        "step (needed by state_equals checks).",
    )
    votes: int = Field(
        default=DEFAULT_VERIFIER_VOTES, ge=1, description="k verifier votes per sample."
    )
    date: str = Field(
        default=DEFAULT_DATE,
        description="The fixed date (YYYY-MM-DD) the agent and the simulator are told.",
    )
    cache: bool = Field(
        default=False, description="Cache simulator and verifier responses (Inspect's cache)."
    )
    protocol: Protocol = Field(
        default=Protocol(DEFAULT_PROTOCOL),
        description="paper: the release's harness point by point (the default); occubench: "
        "code-placed logged faults, validated tool arguments, errors counted apart. Any "
        "single point can be overridden by the setting of its name (those whose default is "
        "the protocol's).",
    )
    prompts_from: str | None = Field(
        default=None,
        description="A local clone of the public OccuBench repository: its prompt constants "
        "are read from it (parsed, never run) and used for the paper-style messages.",
    )
    agent: str | None = Field(
        default=None,
        description="An Inspect agent in place of the built-in loop: a registry name (react) "
        "or module:function; it gets the env's tools (tools=...) and drives the agent model.",
    )
    agent_args: Annotated[dict[str, Any], Cli(metavar="JSON")] = Field(
        default_factory=dict,
        description="Keyword arguments of the Inspect agent, a JSON object, e.g. "
        "'{\"submit\": false}'.",
    )
    agent_command: str | None = Field(
        default=None,
        description="An agent program run once per sample against that sample's MCP "
        "endpoint, e.g. 'python my_agent.py {url}' (placeholders {url}, {token}, "
        "{instruction_file}, {task_id}, {submit_tool}, {openai_base_url}, {anthropic_base_url}; "
        "see the README).",
    )
    agent_time_limit: float = Field(
        default=DEFAULT_AGENT_TIME_LIMIT,
        gt=0,
        description="Seconds an agent program may run on one sample; then it is stopped "
        "and the sample is an error.",
    )
    submit_tool: str = Field(
        default=DEFAULT_SUBMIT_TOOL,
        pattern=r"^[A-Za-z0-9_-]{1,64}$",
        description="Name of the MCP tool that submits the final answer and ends the episode.",
    )
    user_turns: int | None = Field(
        default=None,
        ge=1,
        description="The simulated user's turn budget on tasks with a user brief whose "
        "max_turns does not say (None: DEFAULT_USER_TURNS, 8); tasks without a user ignore it.",
    )
    simulator_seed: int | None = Field(
        default=None,
        description="Seed the simulator generates with, for providers that take one "
        "(None: unseeded); runs with several seeds measure the simulator's variance.",
    )
    simulator_seed_by_epoch: bool = Field(
        default=False,
        description="Each epoch's simulator generates with its own seed (simulator_seed, "
        "or 0, plus the epoch less one): each epoch is an independent simulator sample, "
        "for providers that take a seed.",
    )
    world: str | None = Field(
        default=None,
        description="A world (a folder, made when missing, or a packed file): recorded paths "
        "are answered from it without a simulator call (see world_mode).",
    )
    world_mode: WorldMode = Field(
        default=WorldMode.RECORD,
        description="record: the simulator answers the paths the world lacks and its answers "
        "are recorded; replay: the simulator is never asked, a path the world lacks is an "
        "infrastructure error (source world); replay-live: those paths are answered live, "
        "marked live and not recorded.",
    )
    world_conflicts: WorldConflicts = Field(
        default=WorldConflicts.WARN,
        description="A world holding different answers for one key (merged from disagreeing "
        "recordings, or edited): warn (say so before the run, answer with the earliest) or "
        "refuse (stop before the run).",
    )
    world_variant: Annotated[int | Literal["epoch"], Cli(metavar="K|epoch")] = Field(
        default=0,
        description="An independent sample of the world (0 by default); 'epoch': each epoch "
        "its own variant (by default epochs share the world's answers).",
    )
    twins: str | None = Field(
        default=None,
        description="A folder of your own twins (Python files, each a Twin subclass), over "
        "the package's: the twin simulators (occubench/twin, occubench/forgetful) answer "
        "from them and audit --twin holds simulators to them; twins are code and load only "
        "from a folder named here.",
    )
    exploit_guard: ExploitGuard = Field(
        default=DEFAULT_GUARD,
        description="The exploit guard (occubench.guard): each graded episode is checked for "
        "a simulator or judge steered by the agent (instructions in its arguments or answer, "
        "a forged transcript, observations that obey it, verdicts that quote it). flag: a "
        "suspected pass is reported (exploit_suspected, with its evidence) and keeps its "
        "verdict; zero: it is also graded a failure (reward 0); off: no check.",
    )


class MissingField(BaseModel):
    """A setting that needs a task field some of the run's tasks lack."""

    setting: str = Field(description="The setting, as the command line names it.")
    field: str = Field(description="The task field it needs.")
    tasks: list[int] = Field(description="The tasks that lack it.")
    of: int = Field(description="The tasks of the run.")

    def line(self) -> str:
        """The setting, the field and how many tasks lack it, in words."""
        shown = ", ".join(str(t) for t in self.tasks[:5]) + (", ..." if len(self.tasks) > 5 else "")
        return (
            f"--{self.setting.replace('_', '-')} needs each task's {self.field}, and "
            f"{len(self.tasks)} of the {self.of} tasks have none ({shown})"
        )


class RunConfig(ProtocolOverrides, _RunFields):
    """What a run computes (the ``occubench`` task's arguments).

    The dataset selection, the environment and its faults, the agent loop's limits, the
    simulator and the grading; then one override per protocol point (``ProtocolOverrides``).
    """

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _lenient_input(cls, data: Any) -> Any:
        """Comma-separated lists and case-insensitive choices, as the CLI and ``-T`` give them.

        A setting given under two of its names (``industries`` and its older name
        ``categories``) is refused rather than one of them silently winning.
        """
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for name, field in cls.model_fields.items():
            given = [key for key in (name, *aliases(name, field)) if key in data]
            if len(given) > 1:
                raise UsageError(f"{' and '.join(given)} name the same setting: give one")
            if not given:
                continue
            key = given[0]
            if _is_list(field.annotation):
                data[key] = split_list(data[key])
            enum = _choice(field.annotation)
            if enum is FaultFamily and isinstance(data[key], list):
                data[key] = [_family(v) for v in data[key]]
            elif enum is not None:
                data[key] = _enum_value(enum, data[key])
        if "faults" in data and data["faults"] is None:
            data["faults"] = []
        return data

    @field_validator("agent_args", mode="before")
    @classmethod
    def _json_object(cls, value: Any) -> Any:
        """Agent arguments given as JSON text (the CLI, ``-T``) are parsed."""
        if value is None or value == "":
            return {}
        if isinstance(value, str):
            try:
                return json.loads(value)
            except json.JSONDecodeError as e:
                raise UsageError(f"agent_args must be a JSON object: {e}") from None
        return value

    @model_validator(mode="after")
    def _one_agent(self) -> RunConfig:
        if self.agent and self.agent_command:
            raise UsageError("give either agent (an Inspect agent) or agent_command, not both")
        return self

    def agent_label(self, model: str) -> str:
        """What plays the agent, for reports: the model, or the agent system around it."""
        if self.agent_command:
            return f"command: {self.agent_command}" + (
                "" if model == NO_AGENT_MODEL else f" [{model}]"
            )
        if self.agent:
            return f"{self.agent} [{model}]"
        return "MCP client" if model == NO_AGENT_MODEL else model

    @field_validator("world_variant")
    @classmethod
    def _variant(cls, value: int | str) -> int | str:
        if isinstance(value, int) and value < 0:
            raise UsageError(f"world_variant must be 0 or more, or 'epoch', got {value}")
        return value

    @field_validator("date")
    @classmethod
    def _iso_date(cls, value: str) -> str:
        try:
            dt.date.fromisoformat(value)
        except ValueError:
            raise UsageError(f"date must be YYYY-MM-DD, got {value!r}") from None
        return value

    @model_validator(mode="after")
    def _checks_need_code_faults(self) -> RunConfig:
        if self.overrides().get("sim_checks") and self.simulator_places_faults():
            raise UsageError(
                "sim_checks cannot run with fault_engine=prompt: the faults the simulator "
                "is told to make would fail the checks; use fault_engine=code"
            )
        return self

    def overrides(self) -> dict[str, object]:
        """The protocol points this run sets itself (the others are its protocol's)."""
        values = {name: getattr(self, name) for name in ProtocolPoints.model_fields}
        return {name: value for name, value in values.items() if value is not None}

    def missing_fields(self, tasks: Sequence[TaskRecord]) -> list[MissingField]:
        """The settings of this run that need a task field some of ``tasks`` lack."""
        needs: list[tuple[bool, str, str, Callable[[TaskRecord], bool]]] = [
            (self.with_plan, "with_plan", "solution_plan", lambda t: bool(t.solution_plan)),
            (
                FaultFamily.TARGETED in self.faults,
                "faults=targeted",
                "reference_plan",
                lambda t: bool(t.reference_plan and t.reference_plan.steps),
            ),
        ]
        found = []
        for wanted, setting, field, has in needs:
            lacking = [t.task_id for t in tasks if not has(t)] if wanted else []
            if lacking:
                found.append(
                    MissingField(setting=setting, field=field, tasks=lacking, of=len(tasks))
                )
        return found

    def check_fields(self, tasks: Sequence[TaskRecord]) -> list[str]:
        """Lines on the settings that need a field some tasks lack (``missing_fields``).

        Returns:
            One line per such setting, said and gone on with (``allow_missing_fields``).

        Raises:
            UsageError: some setting needs such a field and the run does not allow it.
        """
        missing = self.missing_fields(tasks)
        if missing and not self.allow_missing_fields:
            raise UsageError(
                "; ".join(m.line() for m in missing) + ": the run would measure something "
                "else than asked; give --allow-missing-fields to run those tasks without it"
            )
        return [f"{m.line()}: those tasks run without it (--allow-missing-fields)" for m in missing]

    def injects_faults(self) -> bool:
        """Whether any fault reaches a sample: an env mode's events or a family."""
        return (self.env_mode is not EnvMode.E0 and self.fault_count > 0) or bool(self.faults)

    def normalized(self) -> RunConfig:
        """The same run with settings that cannot matter reset to their defaults.

        Without E1-E3 events the fault engine does nothing; without any fault the
        counts, duration, latency and seed do nothing; without a world its mode and variant
        do nothing. Two configurations that compute
        the same thing normalize alike (sweeps run them once; log folders match).
        """
        update: dict[str, Any] = {}
        defaults = type(self)()
        if self.env_mode is EnvMode.E0 or self.fault_count == 0:
            update["fault_engine"] = None
        if not self.injects_faults():
            for name in ("fault_count", "fault_duration", "fault_latency", "seed"):
                update[name] = getattr(defaults, name)
        if self.world is None:
            update["world_mode"] = defaults.world_mode
            update["world_variant"] = defaults.world_variant
        return self.model_copy(update=update)

    def epoch_simulator_seed(self, epoch: int) -> int | None:
        """The seed the simulator generates with in an epoch (1 for the first)."""
        if not self.simulator_seed_by_epoch:
            return self.simulator_seed
        return (self.simulator_seed or 0) + max(epoch - 1, 0)

    def asks_simulator(self) -> bool:
        """Whether a sample may ask the simulator model: not in a world's replay.

        A replay answers every call from the world; only a semantic fault, which the
        simulator writes, still asks it.
        """
        replay = self.world is not None and self.world_mode is WorldMode.REPLAY
        return not replay or FaultFamily.SEMANTIC in self.faults

    def simulator_places_faults(self) -> bool:
        """Whether the simulator is told to make E1-E3 faults (the prompt engine, events on)."""
        engine = self.fault_engine or PRESETS[self.protocol].fault_engine
        return (
            engine is FaultEngine.PROMPT
            and self.env_mode is not EnvMode.E0
            and (self.fault_count > 0)
        )

    def simulator_args(self) -> dict[str, Any]:
        """The simulator model's arguments this run gives it (``twins``, when named)."""
        return {"twins": self.twins} if self.twins is not None else {}

    def task_args(self) -> dict[str, Any]:
        """The configuration as the ``occubench`` task's keyword arguments (JSON values)."""
        return self.model_dump(mode="json")

    def dataset_dir(self) -> Path:
        """The dataset folder this configuration names (see ``resolve_dataset_dir``)."""
        return resolve_dataset_dir(self.dataset)

    def load_tasks(self) -> Dataset:
        """The dataset with only the selected tasks (and their env configs) loaded.

        Raises:
            DatasetError: the dataset is malformed or a filter names what it lacks.
            UsageError: no dataset is named.
        """
        return load_dataset(
            self.dataset_dir(),
            task_ids=self.task_ids,
            categories=self.industries,
            domains=self.domains,
            difficulties=self.difficulty,
        )
