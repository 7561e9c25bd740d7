"""Read Inspect logs of occubench runs into one tidy row per sample."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log, read_eval_log_samples
from inspect_ai.model import ModelUsage
from inspect_ai.scorer import CORRECT
from pydantic import BaseModel, Field, computed_field

from occubench.agent import episode_in
from occubench.config import CONFIG_METADATA, POINTS_METADATA, ProtocolPoints, RunConfig
from occubench.errors import ErrorSource, error_source
from occubench.grading import SCORER_NAME, Grade
from occubench.roles import Role

UNREAD_FIELDS = {"events", "messages", "attachments"}
"""Sample fields a row does not need: skipping them makes reading a log ~3x cheaper."""


class SampleRow(BaseModel):
    """One sample (task x epoch) of one run."""

    log: str = Field(description="Log file the sample comes from.")
    run_id: str = Field(description="Inspect eval id of the run.")
    agent_model: str
    reasoning_effort: str | None = Field(
        default=None, description="The agent's reasoning effort (Inspect GenerateConfig), if set."
    )
    simulator_model: str | None
    verifier_model: str | None
    env_mode: str
    fault_count: int
    fault_duration: int
    fault_engine: str
    seed: int
    epoch: int
    task_id: int | str
    scenario: str
    industry: str
    domain: str
    difficulty: int
    passed: bool | None = Field(description="The verdict; None when the sample errored.")
    votes_yes: int | None = Field(
        default=None, description="Judge votes for 'correct'; None when no judge ran."
    )
    votes_total: int | None = Field(default=None, description="Judge votes cast (k).")
    checks_passed: int | None = Field(
        default=None, description="Deterministic checks passed; None when the task has none."
    )
    checks_total: int | None = Field(default=None, description="Deterministic checks run.")
    error: str | None = Field(description="Infrastructure error, counted apart from verdicts.")
    error_source: ErrorSource | None = Field(
        default=None, description="Which part failed, for an errored sample."
    )
    protocol: str = Field(default="occubench", description="The protocol the run followed.")
    errors_count_as_failures: bool = Field(
        default=False,
        description="The run's protocol counts an errored sample as a failed task (paper).",
    )
    stop_reason: str | None
    tool_calls: int
    faults: list[dict[str, Any]] = Field(default_factory=list, description="Injected faults.")
    tokens: dict[str, int] = Field(default_factory=dict, description="Total tokens by role.")
    input_tokens: dict[str, int] = Field(default_factory=dict, description="Input tokens by role.")
    output_tokens: dict[str, int] = Field(default_factory=dict, description="Output by role.")
    input_tokens_cache_read: dict[str, int] = Field(
        default_factory=dict, description="Input tokens read from a prompt cache, by role."
    )
    input_tokens_cache_write: dict[str, int] = Field(
        default_factory=dict, description="Input tokens written to a prompt cache, by role."
    )
    wall_time: float | None = Field(description="Seconds the sample took.")
    cost: float | None = Field(
        default=None, description="Cost of all roles in USD, when prices are configured."
    )
    env_name: str = Field(default="", description="Environment the task ran in.")
    simulator_seed: int | None = Field(
        default=None, description="Seed the simulator generated with (None: unseeded)."
    )
    sim_fallback_model: str | None = Field(
        default=None, description="Simulator re-asked after a failed online check, if bound."
    )
    sim_checked: int | None = Field(
        default=None, description="Observations the online simulator checks looked at (None: off)."
    )
    simulator_suspect: bool | None = Field(
        default=None,
        description="The trajectory kept an observation that failed an online check (None: off).",
    )
    sim_check_failures: dict[str, int] = Field(
        default_factory=dict,
        description="Observations whose first answer failed each kind of online check.",
    )

    @computed_field  # type: ignore[prop-decorator]
    @property
    def sample_key(self) -> str:
        """Identify the sample across reports and reviews: run id, task id and epoch."""
        return f"{self.run_id}:{self.task_id}:{self.epoch}"

    @property
    def counted(self) -> bool:
        """Whether the row counts in completion rates.

        A row with a verdict counts; an errored row counts (as a failed task) only under
        a protocol that says so (the paper's CR is over all tasks).
        """
        return self.passed is not None or (self.error is not None and self.errors_count_as_failures)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def faults_applied(self) -> int:
        """Injected faults that changed what the agent saw."""
        return sum(bool(f.get("applied", True)) for f in self.faults)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def faults_retried(self) -> int:
        """Applied faults after which the agent called the same tool again."""
        return sum(bool(f.get("applied", True) and f.get("retried_later")) for f in self.faults)


def log_files(paths: Iterable[str | Path]) -> list[str]:
    """Every Inspect log under the given files or folders (sorted, no duplicates)."""
    found: list[str] = []
    for path in paths:
        if "://" in str(path):  # an Inspect log location (file:// or a remote store)
            found.append(str(path))
            continue
        p = Path(path)
        if p.is_dir():
            found += [info.name for info in list_eval_logs(str(p), recursive=True)]
        elif p.is_file():
            found.append(str(p))
        else:
            raise FileNotFoundError(f"no log file or folder at {p}")
    return sorted(dict.fromkeys(found))


def _role_model(log: EvalLog, role: Role) -> str | None:
    roles = log.eval.model_roles or {}
    config = roles.get(role.value)
    if isinstance(config, list):  # a role bound to several models (Inspect allows it)
        return ",".join(c.model for c in config)
    return config.model if config is not None else None


def _by_role(
    role_usage: dict[str, ModelUsage], total: dict[str, ModelUsage]
) -> dict[str, ModelUsage]:
    roles = dict(role_usage)
    agent = ModelUsage()
    for usage in total.values():
        agent = agent + usage
    for usage in role_usage.values():
        agent = ModelUsage(
            input_tokens=agent.input_tokens - usage.input_tokens,
            output_tokens=agent.output_tokens - usage.output_tokens,
            total_tokens=agent.total_tokens - usage.total_tokens,
            input_tokens_cache_read=(agent.input_tokens_cache_read or 0)
            - (usage.input_tokens_cache_read or 0),
            input_tokens_cache_write=(agent.input_tokens_cache_write or 0)
            - (usage.input_tokens_cache_write or 0),
        )
    roles[Role.AGENT.value] = agent
    return roles


def read_runs(paths: Iterable[str | Path]) -> list[SampleRow]:
    """Rows for every sample of every occubench log under ``paths``."""
    rows: list[SampleRow] = []
    for file in log_files(paths):
        header = read_eval_log(file, header_only=True)
        metadata = header.eval.metadata or {}
        config = RunConfig.model_validate(metadata.get(CONFIG_METADATA, {}))
        recorded = metadata.get(POINTS_METADATA)
        points = ProtocolPoints.model_validate(recorded) if recorded else config.points()
        verifier = _role_model(header, Role.VERIFIER)
        effort = header.eval.model_generate_config.reasoning_effort
        for sample in read_eval_log_samples(
            file, all_samples_required=False, exclude_fields=UNREAD_FIELDS
        ):
            md = sample.metadata or {}
            score = (sample.scores or {}).get(SCORER_NAME)
            grade = None
            if score is not None and sample.error is None:
                grade = Grade.of(score.metadata, passed=score.value == CORRECT)
            episode = episode_in(sample.store)
            usage = _by_role(sample.role_usage or {}, sample.model_usage or {})
            rows.append(
                SampleRow(
                    log=file,
                    run_id=header.eval.eval_id,
                    agent_model=config.agent_label(header.eval.model),
                    reasoning_effort=effort,
                    simulator_model=_role_model(header, Role.SIMULATOR),
                    verifier_model=verifier,
                    env_mode=config.env_mode.value,
                    fault_count=config.fault_count,
                    fault_duration=config.fault_duration,
                    fault_engine=points.fault_engine.value,
                    protocol=config.protocol.value,
                    errors_count_as_failures=points.errors_count_as_failures,
                    seed=config.seed,
                    epoch=sample.epoch,
                    task_id=sample.id,
                    scenario=str(md.get("scenario", "")),
                    industry=str(md.get("industry", "")),
                    domain=str(md.get("domain", "")),
                    difficulty=int(md.get("difficulty", 0)),
                    passed=None if grade is None else grade.passed,
                    votes_yes=None if grade is None else grade.votes_yes,
                    votes_total=None if grade is None or grade.votes is None else len(grade.votes),
                    checks_passed=None if grade is None else grade.checks_passed,
                    checks_total=None
                    if grade is None or grade.checks is None
                    else len(grade.checks),
                    error=sample.error.message if sample.error else None,
                    error_source=error_source(sample.error.traceback) if sample.error else None,
                    stop_reason=episode.stop_reason,
                    tool_calls=episode.tool_calls,
                    faults=list(episode.fault_log),
                    tokens={r: u.total_tokens for r, u in usage.items()},
                    input_tokens={r: u.input_tokens for r, u in usage.items()},
                    output_tokens={r: u.output_tokens for r, u in usage.items()},
                    input_tokens_cache_read={
                        r: u.input_tokens_cache_read or 0 for r, u in usage.items()
                    },
                    input_tokens_cache_write={
                        r: u.input_tokens_cache_write or 0 for r, u in usage.items()
                    },
                    wall_time=sample.total_time,
                    env_name=str(md.get("env_name", "")),
                    simulator_seed=config.simulator_seed,
                    sim_fallback_model=_role_model(header, Role.SIMULATOR_FALLBACK),
                    sim_checked=episode.sim_checked,
                    simulator_suspect=episode.simulator_suspect,
                    sim_check_failures=_check_failures(episode.steps),
                )
            )
    return rows


def _check_failures(steps: list[dict[str, Any]]) -> dict[str, int]:
    """Observations whose first answer failed each kind of online check (``SimStep.check``)."""
    counts: dict[str, int] = {}
    for step in steps:
        for failure in (step.get("check") or {}).get("failures", []):
            counts[failure["kind"]] = counts.get(failure["kind"], 0) + 1
    return counts
