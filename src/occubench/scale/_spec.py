"""Runs and shards as plain data: what a worker process or a Ray task is given.

Only model names and options travel (never model objects, never secrets): a worker
rebuilds the models from their names, and API keys and base URLs come from the
environment it inherits.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from enum import Enum
from typing import Annotated, Any

from inspect_ai.model import GenerateConfig
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    SerializationInfo,
)

from occubench.calls import ModelConcurrency
from occubench.config import EvalOptions, RunConfig, checked_generate
from occubench.costs import PriceTable, Spend
from occubench.defaults import DEFAULT_RAY_NUM_CPUS
from occubench.results import SampleRow
from occubench.roles import Role


def slug(text: str) -> str:
    """Text as a safe folder-name part (model names: ``openai/gpt-5`` -> ``openai_gpt-5``)."""
    return re.sub(r"[^A-Za-z0-9._=-]+", "_", text).strip("_")


def _checked(value: Any) -> Any:
    """Fields given as a mapping are checked: unknown ones refused (GenerateConfig ignores them)."""
    return checked_generate(value) if isinstance(value, Mapping) else value


def _as_given(config: GenerateConfig, info: SerializationInfo) -> dict[str, Any]:
    return config.model_dump(mode=info.mode, exclude_unset=True)


RoleSettings = Annotated[GenerateConfig, BeforeValidator(_checked), PlainSerializer(_as_given)]
"""A model's generation settings in its role: Inspect ``GenerateConfig`` fields.

Given as a mapping of its fields (a sweep file, the command's options), unknown fields
refused; written back as the fields given (``model_fields_set``), so a sweep file and a
run's digest read as they were written.
"""


class Executor(str, Enum):  # noqa: UP042 - same str-Enum style as EnvMode
    """Where the shards of a run execute."""

    LOCAL = "local"
    """One OS process per shard on this machine."""
    RAY = "ray"
    """One Ray task per shard, on a local or remote Ray cluster."""


_NO_WORLD = {"world", "world_mode", "world_variant"}
"""Settings left out of a run's key without a world: a run started before worlds existed
keeps its log folder."""
_NO_TWINS = {"twins"}
"""Left out of a run's key when no folder of twins is named (a run started before keeps
its log folder)."""
_NO_USER_TURNS = {"user_turns"}
"""Left out of a run's key when no user turn budget is set (a run started before keeps
its log folder)."""


class RunSpec(BaseModel):
    """One occubench run: its configuration, the models by name, how it is carried out."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(default="run", description="Label of the run in progress views and reports.")
    agent: str = Field(description="Agent under test (Inspect model name).")
    agent_label: str | None = Field(
        default=None,
        description="Name the agent goes by in reports (default: the model name); tells apart "
        "one model under several generate options.",
    )
    roles: dict[Role, str] = Field(description="Model role -> model name (simulator, verifier).")
    config: RunConfig = Field(description="What the run computes (the task's arguments).")
    epochs: int = Field(default=1, ge=1, description="Runs of each task.")
    generate: dict[Role, RoleSettings] = Field(
        default_factory=dict,
        description="GenerateConfig fields per role (e.g. agent: {reasoning_effort: high}, "
        "simulator: {temperature: 0}), on top of the run's connections and retries.",
    )
    options: EvalOptions = Field(
        default_factory=EvalOptions,
        description="How the run is carried out (connections, retries, log buffering).",
    )
    log_dir: str = Field(description="Folder or fsspec URL of the run; shards log in subfolders.")
    resources: dict[str, float] = Field(
        default_factory=dict,
        description='Ray custom resources each shard needs, e.g. {"node:10.0.0.5": 0.01}.',
    )
    num_cpus: float = Field(default=DEFAULT_RAY_NUM_CPUS, description="Ray CPUs each shard takes.")
    prices: PriceTable | None = Field(
        default=None, description="Prices of the run's models (the budget prices usage with)."
    )

    def key(self) -> str:
        """A short digest of what the run computes (options, log folder and label left out)."""
        what = {
            **self.model_dump(mode="json", include={"agent", "roles", "epochs"}),
            **({"generate": self.model_dump(mode="json")["generate"]} if self.generate else {}),
            "config": self.config.normalized().model_dump(mode="json", exclude=self._unkeyed()),
        }
        text = json.dumps(what, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:10]

    def _unkeyed(self) -> set[str]:
        """The settings left out of the key when unset: the world's, twins, the user's budget."""
        return (
            (_NO_WORLD if self.config.world is None else set())
            | (_NO_TWINS if self.config.twins is None else set())
            | (_NO_USER_TURNS if self.config.user_turns is None else set())
        )

    def generate_config(self, role: Role, shards: int = 1) -> GenerateConfig:
        """The generate settings of one model in one of ``shards`` shards of the run.

        Connections are split over the shards (``EvalOptions.generate_config``); the
        role's own settings (``generate``) go on top.
        """
        config = self.options.generate_config(role, votes=self.config.votes, shards=shards)
        own = self.generate.get(role)
        return config if own is None else config.merge(own)

    def folder_name(self, shards: int) -> str:
        """The name of the run's log folder: agent, simulator, judge, mode, a digest.

        The digest covers what the run computes and the shard count (shards log in
        subfolders), so the same command finds its folder again, and two different runs
        never share one (several runs can log under one ``--log-dir``).
        """
        what = json.dumps({"run": self.key(), "shards": shards}, sort_keys=True)
        digest = hashlib.sha256(what.encode()).hexdigest()[:8]
        parts = [slug(self.agent_label or self.agent), slug(self.roles[Role.SIMULATOR])]
        if Role.VERIFIER in self.roles:
            parts.append(f"judge-{slug(self.roles[Role.VERIFIER])}")
        parts.append(self.config.env_mode.value)
        return "__".join(parts) + f"-{digest}"


class ShardSpec(BaseModel):
    """One shard of a run: the same task arguments, narrowed to some task ids."""

    run: RunSpec
    index: int = Field(ge=1, description="1-based shard number.")
    count: int = Field(ge=1, description="Shards the run is split into.")
    task_ids: list[int] = Field(description="Task ids this shard runs (a slice of the selection).")
    whole: bool = Field(
        default=False,
        description="The whole run as one shard in the caller's process: it logs in the "
        "run's own folder, not in a shard subfolder.",
    )

    @property
    def name(self) -> str:
        """The shard's label: the run's name and its number."""
        return f"{self.run.name} [{self.index}/{self.count}]"

    @property
    def samples(self) -> int:
        """Samples this shard runs (tasks x epochs)."""
        return len(self.task_ids) * self.run.epochs

    @property
    def log_dir(self) -> str:
        """The shard's own log folder: a subfolder of the run's, or the run's for a whole run."""
        if self.whole:
            return self.run.log_dir
        return f"{self.run.log_dir.rstrip('/')}/shard-{self.index}-of-{self.count}"

    def generate_config(self, role: Role) -> GenerateConfig:
        """The generate settings of one model in this shard (its share of connections)."""
        return self.run.generate_config(role, shards=self.count)

    def budget(self) -> float | None:
        """This shard's share of the run's budget (None: no budget)."""
        total = self.run.options.budget
        return None if total is None else total / self.count

    def samples_at_once(self) -> int:
        """Samples in flight in this shard (its share of the run's)."""
        return self.run.options.samples_at_once(shards=self.count)

    def config(self) -> RunConfig:
        """The run's configuration with ``task_ids`` narrowed to this shard's ids."""
        return self.run.config.model_copy(update={"task_ids": list(self.task_ids)})

    def result(self, success: bool, **fields: Any) -> ShardResult:
        """This shard's result: ``success`` and the rest (logs, rows, error) as given."""
        return ShardResult(
            index=self.index,
            count=self.count,
            run=self.run.name,
            log_dir=self.log_dir,
            success=success,
            **fields,
        )


class ShardResult(BaseModel):
    """What running one shard gave."""

    index: int
    count: int
    run: str = Field(description="Name of the run the shard belongs to.")
    log_dir: str
    success: bool = Field(description="Every sample of the shard completed (errors recorded).")
    interrupted: bool = Field(
        default=False, description="The shard was stopped by Ctrl-C or SIGTERM (logs kept)."
    )
    logs: list[str] = Field(default_factory=list, description="Log files of the shard's eval set.")
    rows: list[SampleRow] = Field(
        default_factory=list,
        description="The shard's samples, read from its logs by the shard (for the summary).",
    )
    error: str | None = Field(default=None, description="Why the shard did not finish.")
    concurrency: list[ModelConcurrency] = Field(
        default_factory=list,
        description="Per model on the fast path: the requests in flight the shard reached, "
        "its rate-limited answers and Retry-After pauses.",
    )
    spend: Spend | None = Field(
        default=None, description="What the shard spent against its budget (None: no budget)."
    )
    resumed_calls: int = Field(
        default=0,
        description="Model calls answered from the journals an interrupted earlier run of the "
        "shard left (what resuming saved).",
    )
    ignored_journals: list[str] = Field(
        default_factory=list,
        description="Journals not replayed, each with its file, line and why: their samples "
        "asked their models again.",
    )
