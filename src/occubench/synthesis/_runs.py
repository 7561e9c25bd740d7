"""Stages e and f: run the agent on candidate tasks, with the plan or without it.

The candidates are written as a temporary dataset (``write_dataset``) and run by the
real occubench task through the runner (``run_eval``: an eval set per batch, so a
killed batch resumes) under the simulator; the verifier (and the task's checks) decide
each run, as in a benchmark run. The agent is the main model; ``simulator`` and
``verifier`` are model roles.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from inspect_ai.log import EvalLog, EvalSample, read_eval_log
from inspect_ai.model import Model
from inspect_ai.scorer import CORRECT
from pydantic import BaseModel, Field

from occubench.config import EvalOptions, RunConfig
from occubench.dataset import EnvConfig, Scenario, write_dataset
from occubench.defaults import DEFAULT_VERIFIER_VOTES
from occubench.grading import SCORER_NAME, Grade, render_trajectory
from occubench.protocols import Protocol
from occubench.results import SampleRow, read_runs
from occubench.roles import Role
from occubench.scale import BENCHMARK_TASK, run_eval
from occubench.synthesis._artifacts import StageResult, TokenUsage, add_usage
from occubench.synthesis._catalog import CatalogScenario
from occubench.synthesis._records import TaskDraft

MAX_EVIDENCE_RUNS = 2
"""Failed runs described to the generator when it is asked to repair a task."""
MAX_TRAJECTORY_CHARS = 4000


class RunError(RuntimeError):
    """A batch of runs could not be carried out (the eval itself failed)."""


@dataclass(frozen=True)
class RunModels:
    """The models of the runs: the agent under test and the two roles."""

    agent: Model
    simulator: Model
    verifier: Model


class Candidate(BaseModel):
    """One task to run, with its environment."""

    key: str = Field(description="The instance's id in the pipeline.")
    scenario: CatalogScenario
    env: EnvConfig
    task: TaskDraft


class RunOutcome(BaseModel):
    """The verdicts of n runs of one task."""

    with_plan: bool = Field(description="The agent was given the solution plan.")
    runs: int = Field(description="Runs made (epochs).")
    passed: int = Field(description="Runs the verifier and the checks passed.")
    errors: int = Field(description="Runs that ended in an infrastructure error (not scored).")
    error_messages: list[str] = Field(default_factory=list, description="Distinct errors.")
    evidence: list[str] = Field(
        default_factory=list, description="What went wrong in some failed runs (for repair)."
    )

    @property
    def scored(self) -> int:
        """Runs with a verdict."""
        return self.runs - self.errors

    @property
    def rate(self) -> float | None:
        """Share of scored runs that passed (None when none was scored)."""
        return self.passed / self.scored if self.scored else None


def run_candidates(
    candidates: Sequence[Candidate],
    models: RunModels,
    *,
    with_plan: bool,
    epochs: int,
    work_dir: Path,
    seed: int,
    votes: int = DEFAULT_VERIFIER_VOTES,
    protocol: Protocol = Protocol.OCCUBENCH,
) -> dict[str, StageResult[RunOutcome]]:
    """Run every candidate ``epochs`` times in one eval; the outcome of each, by key.

    Args:
        candidates: Tasks to run (keys must be unique).
        models: Agent, simulator and verifier.
        with_plan: Give the agent each task's solution plan.
        epochs: Runs per task.
        work_dir: Folder for the temporary dataset (``dataset/``) and the logs (``logs/``).
        seed: The task's seed.
        votes: Verifier votes per run.
        protocol: The runs' protocol.

    Raises:
        RunError: the eval failed as a whole.
    """
    if not candidates:
        return {}
    config = RunConfig(
        dataset=str(_write_candidates(candidates, work_dir / "dataset")),
        with_plan=with_plan,
        seed=seed,
        votes=votes,
        protocol=protocol,
    )
    logs, log = _run_once(config, models, epochs, work_dir)
    by_id = {i: c.key for i, c in enumerate(candidates, start=1)}
    outcomes = {
        c.key: RunOutcome(with_plan=with_plan, runs=0, passed=0, errors=0) for c in candidates
    }
    usage: dict[str, dict[str, TokenUsage]] = {c.key: {} for c in candidates}
    for row in read_runs(logs):
        key = by_id[int(row.task_id)]
        _count(outcomes[key], row)
        usage[key] = add_usage(usage[key], _row_usage(row))
    for sample in log.samples or []:
        outcome = outcomes[by_id[int(sample.id)]]
        if _failed(sample) and len(outcome.evidence) < MAX_EVIDENCE_RUNS:
            outcome.evidence.append(describe_failure(sample))
    return {
        key: StageResult[RunOutcome](value=outcome, usage=usage[key])
        for key, outcome in outcomes.items()
    }


def _write_candidates(candidates: Sequence[Candidate], folder: Path) -> Path:
    """The candidates as a dataset in ``folder`` (task ids from 1, in order); its folder."""
    return write_dataset(
        folder,
        tasks=[
            c.task.to_record(i, c.scenario.name, c.env.environment_name)
            for i, c in enumerate(candidates, start=1)
        ],
        envs={c.env.environment_name: c.env for c in candidates}.values(),
        scenarios={
            c.scenario.name: Scenario(
                category=c.scenario.industry,
                domain=c.scenario.domain,
                task_scenario_name=c.scenario.name,
            )
            for c in candidates
        }.values(),
    )


def _run_once(
    config: RunConfig, models: RunModels, epochs: int, work_dir: Path
) -> tuple[list[str], EvalLog]:
    """The logs of the benchmark task run as ``config`` says, and the first one, read.

    Raises:
        RunError: the eval set did not complete, or its log did not succeed.
    """
    evaluated = run_eval(
        BENCHMARK_TASK,
        config.task_args(),
        log_dir=str(work_dir / "logs"),
        model=models.agent,
        roles={Role.SIMULATOR: models.simulator, Role.VERIFIER: models.verifier},
        options=EvalOptions(),
        epochs=epochs,
    )
    if not evaluated.success or not evaluated.logs:
        raise RunError(f"runs in {work_dir}: the eval set did not complete")
    log = read_eval_log(evaluated.logs[0])
    if log.status != "success" or log.samples is None:
        message = log.error.message if log.error else f"eval ended with status {log.status}"
        raise RunError(f"runs in {work_dir}: {message}")
    return evaluated.logs, log


def _count(outcome: RunOutcome, row: SampleRow) -> None:
    """Count one run in ``outcome``: its verdict, or its error (each message once)."""
    outcome.runs += 1
    outcome.passed += row.passed is True
    if row.error is not None:
        outcome.errors += 1
        if row.error not in outcome.error_messages:
            outcome.error_messages.append(row.error)


def _row_usage(row: SampleRow) -> dict[str, TokenUsage]:
    return {
        role: TokenUsage(
            input_tokens=row.input_tokens.get(role, 0),
            output_tokens=row.output_tokens.get(role, 0),
            total_tokens=row.tokens.get(role, 0),
            input_tokens_cache_read=row.input_tokens_cache_read.get(role, 0),
            input_tokens_cache_write=row.input_tokens_cache_write.get(role, 0),
        )
        for role in row.tokens
    }


def _failed(sample: EvalSample) -> bool:
    score = (sample.scores or {}).get(SCORER_NAME)
    return sample.error is None and score is not None and score.value != CORRECT


def describe_failure(sample: EvalSample) -> str:
    """A failed run in words: why it stopped, failed checks, verifier feedback, trajectory."""
    score = (sample.scores or {})[SCORER_NAME]
    grade = Grade.of(score.metadata, passed=score.value == CORRECT)
    stop = grade.stop_reason.value if grade.stop_reason else None
    lines = [
        f"Run {sample.epoch}: failed. The agent stopped ({stop}) after {grade.tool_calls} "
        "tool calls."
    ]
    failed_checks = [c for c in grade.checks or [] if not c.passed]
    if failed_checks:
        lines.append("Deterministic checks failed:")
        lines += [f"- {c.check}: {c.detail}" for c in failed_checks]
    negative = [v for v in grade.votes or [] if v.is_correct is not True]
    if negative:
        lines.append(f"Verifier feedback: {negative[0].feedback}")
    trajectory = render_trajectory(sample.messages)
    if len(trajectory) > MAX_TRAJECTORY_CHARS:
        trajectory = trajectory[:MAX_TRAJECTORY_CHARS] + "\n[... trajectory cut ...]"
    lines += ["Trajectory:", trajectory]
    return "\n".join(lines)
