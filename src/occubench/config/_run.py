"""The run configuration: every setting that decides what a run computes.

``RunConfig`` is declared once. The ``@task`` validates its keyword arguments into it,
``occubench run`` builds it from its options, a sweep file uses it as its base, and a
shard spec carries it; ``tests/config/test_agreement.py`` checks that the task's
signature and the CLI's options name exactly these fields, with the same defaults.
Settings that do not change results (concurrency, retries, log buffering) are
``EvalOptions``.
"""

from __future__ import annotations

import datetime as dt
import json
from enum import Enum
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field, field_validator, model_validator

from occubench.config._protocol import PRESETS, ProtocolPoints
from occubench.dataset import Dataset, load_dataset, resolve_dataset_dir
from occubench.defaults import (
    DEFAULT_AGENT_TIME_LIMIT,
    DEFAULT_DATE,
    DEFAULT_PROTOCOL,
    DEFAULT_SUBMIT_TOOL,
    DEFAULT_VERIFIER_VOTES,
)
from occubench.faults import EnvMode, FaultEngine, FaultFamily, FaultSettings, fault_type
from occubench.protocols import MessageStyle, Protocol
from occubench.simulator import StateMode

NO_AGENT_MODEL = "none/none"
"""Inspect's model that is never called: the main model of an agent-program run that uses none."""

CONFIG_METADATA = "config"
"""Key of a run's resolved ``RunConfig`` in its log's task metadata (``log.eval.metadata``)."""

POINTS_METADATA = "protocol"
"""Key of the run's resolved protocol points in its log's task metadata."""

RELEASE_METADATA = "release_prompts"
"""Key of the release files (and their SHA-256) a run took its prompt wording from."""

_LIST_FIELDS = ("task_ids", "categories", "domains", "difficulty", "faults")
_ENUM_FIELDS: dict[str, type[Enum]] = {
    "env_mode": EnvMode,
    "fault_engine": FaultEngine,
    "state_mode": StateMode,
    "protocol": Protocol,
    "agent_messages": MessageStyle,
    "simulator_messages": MessageStyle,
    "verifier_messages": MessageStyle,
}


def _point(name: str, **constraints: Any) -> Any:
    """An override field of one protocol point: None (the protocol's value) or a value."""
    described = ProtocolPoints.model_fields[name].description
    return Field(default=None, description=f"{described} (default: the protocol's)", **constraints)


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


class RunConfig(FaultSettings):
    """What a run computes (the ``occubench`` task's arguments).

    The dataset selection, the environment and its faults, the agent loop's limits, the
    simulator and the grading.
    """

    model_config = ConfigDict(extra="forbid")

    dataset: str | None = Field(
        default=None,
        description="Dataset folder in the release layout, or 'reference' for the built-in "
        "suite (default: $OCCUBENCH_DATASET).",
    )
    task_ids: list[int] | None = Field(
        default=None, description="Only these task ids (list, or comma-separated: 11,24,26)."
    )
    categories: list[str] | None = Field(default=None, description="Only these industries.")
    domains: list[str] | None = Field(default=None, description="Only these domains.")
    difficulty: list[int] | None = Field(
        default=None, description="Only these difficulty levels (e.g. 2,3)."
    )
    with_plan: bool = Field(
        default=False, description="Give the agent the task's solution plan when it has one."
    )
    state_mode: StateMode = Field(
        default=StateMode.HISTORY,
        description="history: the state lives in the simulator's history (the paper's way); "
        "explicit: a JSON state patched by the simulator and logged after every step "
        "(needed by state_equals checks).",
    )
    votes: int = Field(default=DEFAULT_VERIFIER_VOTES, ge=1, description="k judge votes per task.")
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
        "code-placed logged faults, validated tool arguments, errors counted apart. The "
        "fields below override single points (None: the protocol's value).",
    )
    validate_tool_args: bool | None = _point("validate_tool_args")
    max_turns: int | None = _point("max_turns", ge=0)
    max_tool_calls: int | None = _point("max_tool_calls", ge=0)
    stop_on_finish: bool | None = _point("stop_on_finish")
    carry_reasoning: bool | None = _point("carry_reasoning")
    agent_errors_end_loop: bool | None = _point("agent_errors_end_loop")
    agent_max_tokens: int | None = _point("agent_max_tokens", ge=0)
    simulator_max_tokens: int | None = _point("simulator_max_tokens", ge=0)
    verifier_max_tokens: int | None = _point("verifier_max_tokens", ge=0)
    simulator_retries: int | None = _point("simulator_retries", ge=0)
    pass_raw_observation: bool | None = _point("pass_raw_observation")
    agent_messages: MessageStyle | None = _point("agent_messages")
    simulator_messages: MessageStyle | None = _point("simulator_messages")
    verifier_messages: MessageStyle | None = _point("verifier_messages")
    error_hints: bool | None = _point("error_hints")
    errors_count_as_failures: bool | None = _point("errors_count_as_failures")
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
    agent_args: dict[str, Any] = Field(
        default_factory=dict,
        description="Keyword arguments of the Inspect agent (a JSON object).",
    )
    agent_command: str | None = Field(
        default=None,
        description="An agent program run once per sample against that sample's MCP "
        "endpoint (placeholders {url}, {token}, {instruction_file}, {task_id}, "
        "{submit_tool}, {openai_base_url}; see the README).",
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
    sim_checks: bool | None = _point("sim_checks")
    simulator_seed: int | None = Field(
        default=None,
        description="Seed the simulator generates with, for providers that take one "
        "(None: unseeded); runs with several seeds measure the simulator's variance.",
    )

    @model_validator(mode="before")
    @classmethod
    def _lenient_input(cls, data: Any) -> Any:
        """Comma-separated lists and case-insensitive choices, as the CLI and ``-T`` give them."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for name in _LIST_FIELDS:
            if name in data:
                data[name] = split_list(data[name])
        if "faults" in data and data["faults"] is None:
            data["faults"] = []
        if isinstance(data.get("faults"), list):
            data["faults"] = [_family(v) for v in data["faults"]]
        for name, enum in _ENUM_FIELDS.items():
            if name in data:
                data[name] = _enum_value(enum, data[name])
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
                raise ValueError(f"agent_args must be a JSON object: {e}") from None
        return value

    @model_validator(mode="after")
    def _one_agent(self) -> RunConfig:
        if self.agent and self.agent_command:
            raise ValueError("give either agent (an Inspect agent) or agent_command, not both")
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

    @field_validator("date")
    @classmethod
    def _iso_date(cls, value: str) -> str:
        try:
            dt.date.fromisoformat(value)
        except ValueError:
            raise ValueError(f"date must be YYYY-MM-DD, got {value!r}") from None
        return value

    @model_validator(mode="after")
    def _checks_need_code_faults(self) -> RunConfig:
        if self.sim_checks and self.points().fault_engine is FaultEngine.PROMPT:
            if self._prompt_faults():
                raise ValueError(
                    "sim_checks cannot run with fault_engine=prompt: the faults the simulator "
                    "is told to make would fail the checks; use fault_engine=code"
                )
        return self

    def fault_settings(self) -> RunConfig:
        """This configuration with its fault engine resolved by the protocol (sessions, rules)."""
        return self.model_copy(update={"fault_engine": self.points().fault_engine})

    def injects_faults(self) -> bool:
        """Whether any fault reaches a sample: an env mode's events or a family."""
        return (self.env_mode is not EnvMode.E0 and self.fault_count > 0) or bool(self.faults)

    def normalized(self) -> RunConfig:
        """The same run with settings that cannot matter reset to their defaults.

        Without E1-E3 events the fault engine does nothing; without any fault the
        counts, duration, latency and seed do nothing. Two configurations that compute
        the same thing normalize alike (sweeps run them once; log folders match).
        """
        update: dict[str, Any] = {}
        defaults = type(self)()
        if self.env_mode is EnvMode.E0 or self.fault_count == 0:
            update["fault_engine"] = None
        if not self.injects_faults():
            for name in ("fault_count", "fault_duration", "fault_latency", "seed"):
                update[name] = getattr(defaults, name)
        return self.model_copy(update=update)

    def points(self) -> ProtocolPoints:
        """Every protocol point's value: the protocol's preset, then this run's overrides.

        The online simulator checks left to the protocol are off when the simulator is
        told to make the faults (``fault_engine=prompt`` with E1-E3): its faults would
        fail them. Asking for both is refused.
        """
        chosen = {
            name: getattr(self, name)
            for name in ProtocolPoints.model_fields
            if getattr(self, name) is not None
        }
        points = PRESETS[self.protocol].model_copy(update=chosen)
        if self.sim_checks is None and points.fault_engine is FaultEngine.PROMPT:
            if self._prompt_faults():
                points = points.model_copy(update={"sim_checks": False})
        return points

    def _prompt_faults(self) -> bool:
        """Whether E1-E3 events are on (the engine decides who makes them)."""
        return self.env_mode is not EnvMode.E0 and self.fault_count > 0

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
            ValueError: no dataset is named.
        """
        return load_dataset(
            self.dataset_dir(),
            task_ids=self.task_ids,
            categories=self.categories,
            domains=self.domains,
            difficulties=self.difficulty,
        )
