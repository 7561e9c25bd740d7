"""Read Inspect logs of occubench runs into one tidy row per sample."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log, read_eval_log_samples
from inspect_ai.model import ModelUsage
from pydantic import BaseModel, Field, computed_field

SCORER = "occubench_scorer"
UNREAD_FIELDS = {"events", "messages", "attachments"}
"""Sample fields a row does not need: skipping them makes reading a log ~3x cheaper."""
AGENT = "agent"


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

    @computed_field  # type: ignore[prop-decorator]
    @property
    def sample_key(self) -> str:
        """Identify the sample across reports and reviews: run id, task id and epoch."""
        return f"{self.run_id}:{self.task_id}:{self.epoch}"

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


def _role_model(log: EvalLog, role: str) -> str | None:
    roles = log.eval.model_roles or {}
    config = roles.get(role)
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
    roles[AGENT] = agent
    return roles


def _verdict(metadata: dict[str, Any]) -> dict[str, int | None]:
    """Judge votes and deterministic checks from the scorer's metadata."""
    votes = metadata.get("votes")
    checks = metadata.get("checks")
    return {
        "votes_yes": None if votes is None else sum(v.get("is_correct") is True for v in votes),
        "votes_total": None if votes is None else len(votes),
        "checks_passed": None if checks is None else sum(bool(c.get("passed")) for c in checks),
        "checks_total": None if checks is None else len(checks),
    }


def read_runs(paths: Iterable[str | Path]) -> list[SampleRow]:
    """Rows for every sample of every occubench log under ``paths``."""
    rows: list[SampleRow] = []
    for file in log_files(paths):
        header = read_eval_log(file, header_only=True)
        args = header.eval.task_args or {}
        meta = header.eval.metadata or {}
        verifier = _role_model(header, "verifier")
        effort = header.eval.model_generate_config.reasoning_effort
        for sample in read_eval_log_samples(
            file, all_samples_required=False, exclude_fields=UNREAD_FIELDS
        ):
            md = sample.metadata or {}
            score = (sample.scores or {}).get(SCORER)
            store = sample.store or {}
            usage = _by_role(sample.role_usage or {}, sample.model_usage or {})
            rows.append(
                SampleRow(
                    log=file,
                    run_id=header.eval.eval_id,
                    agent_model=header.eval.model,
                    reasoning_effort=effort,
                    simulator_model=_role_model(header, "simulator"),
                    verifier_model=verifier,
                    env_mode=str(meta.get("env_mode", args.get("env_mode", "E0"))),
                    fault_count=int(meta.get("fault_count", 0)),
                    fault_duration=int(meta.get("fault_duration", 0)),
                    fault_engine=str(meta.get("fault_engine", "code")),
                    seed=int(meta.get("seed", 0)),
                    epoch=sample.epoch,
                    task_id=sample.id,
                    scenario=str(md.get("scenario", "")),
                    industry=str(md.get("industry", "")),
                    domain=str(md.get("domain", "")),
                    difficulty=int(md.get("difficulty", 0)),
                    passed=None if sample.error or score is None else score.value == "C",
                    **_verdict((score.metadata if score is not None else None) or {}),
                    error=sample.error.message if sample.error else None,
                    stop_reason=store.get("Episode:stop_reason"),
                    tool_calls=int(store.get("Episode:tool_calls", 0)),
                    faults=list(store.get("Episode:fault_log") or []),
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
                )
            )
    return rows
