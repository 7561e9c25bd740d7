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
from enum import Enum
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field, field_validator, model_validator

from occubench.dataset import Dataset, load_dataset, resolve_dataset_dir
from occubench.defaults import (
    DEFAULT_DATE,
    DEFAULT_MAX_TOOL_CALLS,
    DEFAULT_SIMULATOR_RETRIES,
    DEFAULT_VERIFIER_VOTES,
)
from occubench.faults import EnvMode, FaultEngine, FaultFamily, FaultSettings, fault_type
from occubench.simulator import StateMode

CONFIG_METADATA = "config"
"""Key of a run's resolved ``RunConfig`` in its log's task metadata (``log.eval.metadata``)."""

_LIST_FIELDS = ("task_ids", "categories", "domains", "difficulty", "faults")
_ENUM_FIELDS: dict[str, type[Enum]] = {
    "env_mode": EnvMode,
    "fault_engine": FaultEngine,
    "state_mode": StateMode,
}


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
    max_tool_calls: int = Field(
        default=DEFAULT_MAX_TOOL_CALLS, ge=1, description="Tool calls allowed per task."
    )
    votes: int = Field(default=DEFAULT_VERIFIER_VOTES, ge=1, description="k judge votes per task.")
    simulator_retries: int = Field(
        default=DEFAULT_SIMULATOR_RETRIES,
        ge=0,
        description="Re-asks of the simulator for a reply without a usable observation.",
    )
    date: str = Field(
        default=DEFAULT_DATE,
        description="The fixed date (YYYY-MM-DD) the agent and the simulator are told.",
    )
    cache: bool = Field(
        default=False, description="Cache simulator and verifier responses (Inspect's cache)."
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

    @field_validator("date")
    @classmethod
    def _iso_date(cls, value: str) -> str:
        try:
            dt.date.fromisoformat(value)
        except ValueError:
            raise ValueError(f"date must be YYYY-MM-DD, got {value!r}") from None
        return value

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
            update["fault_engine"] = defaults.fault_engine
        if not self.injects_faults():
            for name in ("fault_count", "fault_duration", "fault_latency", "seed"):
                update[name] = getattr(defaults, name)
        return self.model_copy(update=update)

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
