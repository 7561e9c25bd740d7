"""The fidelity audit: probe every environment through each simulator and score it.

Each simulator answers the same probe trajectories (``_probes``) through the
``Simulator`` class, exactly as in a run; the answers are checked (``_metrics``) and a
seeded sample of first-pass observations is judged for rule invention by the verifier
(``_judge``). The audit of one simulator is an Inspect eval (``_audit_eval``: probe
trajectories as samples, their checks as the scorer's metadata), run through the runner,
so it has logs, retries, resume and ``inspect view`` like a run.

Scores. A part's score is the mean of its checks (each in [0, 1]; ``None`` when nothing
was checked). The fidelity score is the weighted mean of the parts that were measured
(weights ``DEFAULT_FIDELITY_WEIGHTS``, all equal by default). An environment is flagged
on a part whose score there falls below ``flag_below``, with examples of the failures.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path

from inspect_ai.log import read_eval_log, read_eval_log_samples
from inspect_ai.model import Model
from inspect_ai.util import Store
from pydantic import BaseModel, Field

from occubench.config import EvalOptions
from occubench.dataset import Dataset, EnvConfig, load_dataset, resolve_dataset_dir
from occubench.defaults import (
    DEFAULT_AUDIT_CONCURRENCY,
    DEFAULT_AUDIT_FLAG_BELOW,
    DEFAULT_AUDIT_PLANS_PER_ENV,
    DEFAULT_AUDIT_RULE_CHECKS,
    DEFAULT_DATE,
    DEFAULT_FIDELITY_WEIGHTS,
    DEFAULT_SEED,
)
from occubench.errors import UsageError
from occubench.fidelity._audit_eval import (
    AUDIT_SCORER,
    AuditGrade,
    AuditSample,
    AuditWorld,
    ProbeRun,
    audit_probes,
)
from occubench.fidelity._metrics import FidelityCheck, FidelityMetric
from occubench.fidelity._probes import ProbeTrajectory, TrajectoryResult
from occubench.roles import Role
from occubench.scale import run_eval
from occubench.worlds import WorldMode, shared_world

AUDIT_TASK = "occubench/fidelity_audit"
"""Registry name of the audit task (``occubench.task.fidelity_audit``)."""

MAX_EXAMPLES = 3
"""Failed checks quoted in one environment flag."""

NO_VERIFIER = "not judged: no verifier model given (--verifier-model)"


class PartScore(BaseModel):
    """One part of the fidelity score."""

    metric: FidelityMetric = Field(description="Which part.")
    score: float | None = Field(description="Mean of the checks in [0, 1]; None if none ran.")
    checked: int = Field(description="Checks made.")
    failed: int = Field(description="Checks that did not fully pass.")
    note: str = Field(default="", description="Why the part was not measured, if it was not.")


class Flag(BaseModel):
    """A part an environment fails under one simulator."""

    metric: FidelityMetric = Field(description="The failing part.")
    score: float = Field(description="The part's score in this environment.")
    examples: list[str] = Field(description="Failed checks, quoted.")


class EnvAudit(BaseModel):
    """One environment under one simulator."""

    env_name: str = Field(description="Environment.")
    parts: dict[FidelityMetric, PartScore] = Field(description="Part scores in this environment.")
    flags: list[Flag] = Field(description="Parts scoring below the flag threshold.")
    checks: list[FidelityCheck] = Field(description="Every check made.")
    trajectories: list[TrajectoryResult] = Field(description="Calls and observations.")


class SimulatorAudit(BaseModel):
    """The audit of one simulator model."""

    model: str = Field(description="Simulator model.")
    score: float | None = Field(description="Fidelity: weighted mean of the measured parts.")
    parts: dict[FidelityMetric, PartScore] = Field(description="Part scores over all environments.")
    environments: list[EnvAudit] = Field(description="Per-environment results.")
    errors: list[str] = Field(description="Simulator errors that ended a trajectory early.")


class AuditReport(BaseModel):
    """Everything the fidelity audit measured (``occubench audit --out``)."""

    dataset: str = Field(description="Dataset folder audited.")
    date: str = Field(description="Date given to the simulators.")
    seed: int = Field(description="Seed of the rule-invention sample.")
    verifier_model: str | None = Field(description="Judge of rule invention (None: not judged).")
    rule_checks: int = Field(description="Observations per simulator sampled for the judge.")
    weights: dict[FidelityMetric, float] = Field(description="Weights of the parts in the score.")
    flag_below: float = Field(description="An environment part scoring below this is flagged.")
    probes: list[ProbeTrajectory] = Field(description="The probe trajectories every simulator ran.")
    simulators: list[SimulatorAudit] = Field(description="One audit per simulator.")


def part_scores(
    checks: Sequence[FidelityCheck], *, judged: bool = True
) -> dict[FidelityMetric, PartScore]:
    """Pool checks into one score per part (``judged``: whether rule invention was judged)."""
    parts = {}
    for metric in FidelityMetric:
        values = [c.value for c in checks if c.metric == metric]
        note = NO_VERIFIER if metric == FidelityMetric.RULE_INVENTION and not judged else ""
        parts[metric] = PartScore(
            metric=metric,
            score=sum(values) / len(values) if values else None,
            checked=len(values),
            failed=sum(v < 1 for v in values),
            note=note,
        )
    return parts


def fidelity_score(
    parts: Mapping[FidelityMetric, PartScore], weights: Mapping[FidelityMetric, float]
) -> float | None:
    """Weighted mean of the parts that were measured (None if none was)."""
    measured = [(weights.get(m, 0.0), p.score) for m, p in parts.items() if p.score is not None]
    total = sum(w for w, _ in measured)
    return sum(w * s for w, s in measured) / total if total > 0 else None


def _flags(
    parts: Mapping[FidelityMetric, PartScore], checks: Sequence[FidelityCheck], below: float
) -> list[Flag]:
    return [
        Flag(
            metric=metric,
            score=part.score,
            examples=list(
                dict.fromkeys(c.detail for c in checks if c.metric == metric and c.value < 1)
            )[:MAX_EXAMPLES],
        )
        for metric, part in parts.items()
        if part.score is not None and part.score < below
    ]


def _name(value: str | Model) -> str:
    return value if isinstance(value, str) else str(value)


def _simulator_audit(
    log: str,
    envs: Mapping[str, EnvConfig],
    weights: Mapping[FidelityMetric, float],
    flag_below: float,
    judged: bool,
) -> SimulatorAudit:
    """One simulator's audit from the log of its audit eval."""
    header = read_eval_log(log, header_only=True)
    results: dict[str, dict[int, TrajectoryResult]] = {name: {} for name in envs}
    checks: dict[str, list[FidelityCheck]] = {name: [] for name in envs}
    for sample in read_eval_log_samples(log, all_samples_required=False):
        meta = AuditSample.model_validate(sample.metadata)
        run = ProbeRun(store=Store(dict(sample.store or {}))).result
        name = meta.trajectory.env_name
        if run is not None:
            results[name][meta.index] = run
        score = (sample.scores or {}).get(AUDIT_SCORER)
        if score is not None:
            checks[name] += AuditGrade.model_validate(score.metadata).checks
        if sample.error is not None:
            results[name][meta.index] = TrajectoryResult(
                env_name=name, source=meta.trajectory.source, steps=[], error=sample.error.message
            )
    env_audits = []
    for name in envs:
        parts = part_scores(checks[name], judged=judged)
        env_audits.append(
            EnvAudit(
                env_name=name,
                parts=parts,
                flags=_flags(parts, checks[name], flag_below),
                checks=checks[name],
                trajectories=[results[name][t] for t in sorted(results[name])],
            )
        )
    all_parts = part_scores([c for e in env_audits for c in e.checks], judged=judged)
    return SimulatorAudit(
        model=header.eval.model,
        score=fidelity_score(all_parts, weights),
        parts=all_parts,
        environments=env_audits,
        errors=[f"{r.env_name}: {r.error}" for e in env_audits for r in e.trajectories if r.error],
    )


def run_audit(
    simulators: Sequence[str | Model],
    dataset: Dataset | str | Path,
    *,
    verifier: str | Model | None = None,
    rule_checks: int = DEFAULT_AUDIT_RULE_CHECKS,
    date: str = DEFAULT_DATE,
    seed: int = DEFAULT_SEED,
    weights: Mapping[str, float] | None = None,
    flag_below: float = DEFAULT_AUDIT_FLAG_BELOW,
    max_plans: int = DEFAULT_AUDIT_PLANS_PER_ENV,
    max_concurrency: int = DEFAULT_AUDIT_CONCURRENCY,
    log_dir: str | Path | None = None,
    world: AuditWorld | None = None,
) -> AuditReport:
    """Audit the fidelity of each simulator on every environment of ``dataset`` (module doc).

    Each simulator's audit is an Inspect eval through the runner (``run_eval`` of
    ``occubench/fidelity_audit``), logged in its own folder under ``log_dir``: running
    the same audit again resumes it. Without ``log_dir`` the logs go to a temporary
    folder removed afterwards.

    Args:
        simulators: Simulator models (Inspect model names or models).
        dataset: A loaded dataset or its folder (or ``reference``).
        verifier: Judge of rule invention; without one that part is not measured.
        rule_checks: First-pass observations per simulator the judge sees (seeded sample).
        date: Date given to the simulators (as in a run).
        seed: Seed of the rule-invention sample.
        weights: Weights of the parts by metric name (default: all equal).
        flag_below: An environment's part scoring below this is flagged.
        max_plans: Task plans replayed per environment.
        max_concurrency: Trajectories (and model requests) at once.
        log_dir: Folder of the audit's logs (default: a temporary folder).
        world: A world the simulators answer from first (recording what it lacks, or
            replaying it); each simulator's answers are keyed under its own context.

    Raises:
        UsageError: no simulator given, or a model name Inspect does not know.
        DatasetError: the dataset does not load.
        UsageError: the world cannot be opened as its mode needs.
    """
    if not simulators:
        raise UsageError("give at least one simulator model")
    root = dataset.root if isinstance(dataset, Dataset) else resolve_dataset_dir(dataset)
    data = dataset if isinstance(dataset, Dataset) else load_dataset(root)
    weight = {FidelityMetric(k): float(v) for k, v in (weights or DEFAULT_FIDELITY_WEIGHTS).items()}
    envs = {name: data.envs[name] for name in sorted(data.envs)}
    args = _task_args(root, date, seed, max_plans, rule_checks, world)
    options = EvalOptions(max_connections=max_concurrency, max_samples=max_concurrency)
    with ExitStack() as stack:
        folder = log_dir or stack.enter_context(tempfile.TemporaryDirectory())
        audits = [
            _simulator_audit(
                _audit_log(simulator, m, args, folder, verifier, options),
                envs,
                weight,
                flag_below,
                verifier is not None,
            )
            for m, simulator in enumerate(simulators, start=1)
        ]
    return AuditReport(
        dataset=str(data.root),
        date=date,
        seed=seed,
        verifier_model=_name(verifier) if verifier is not None else None,
        rule_checks=rule_checks,
        weights=weight,
        flag_below=flag_below,
        probes=[t for ts in audit_probes(data, max_plans).values() for t in ts],
        simulators=audits,
    )


def _task_args(
    root: str | Path,
    date: str,
    seed: int,
    max_plans: int,
    rule_checks: int,
    world: AuditWorld | None,
) -> dict[str, object]:
    """The audit task's arguments (a world that cannot be used as asked is refused first).

    Raises:
        UsageError: the world cannot be opened as its mode needs.
    """
    if world is not None:  # a world that cannot be used as asked: said before any eval
        shared_world(world.path, writable=world.mode is WorldMode.RECORD)
    return {
        "dataset": str(Path(root).resolve()),
        "date": date,
        "seed": seed,
        "max_plans": max_plans,
        "rule_checks": rule_checks,
        **({} if world is None else world.task_args()),
    }


def _audit_log(
    simulator: str | Model,
    number: int,
    args: Mapping[str, object],
    folder: str | Path,
    verifier: str | Model | None,
    options: EvalOptions,
) -> str:
    """The log of simulator ``number``'s audit eval (resumed where its folder holds one)."""
    outcome = run_eval(
        AUDIT_TASK,
        args,
        log_dir=f"{folder}/simulator-{number}-{_slug(_name(simulator))}",
        model=simulator,
        roles={
            Role.SIMULATOR: simulator,
            **({Role.VERIFIER: verifier} if verifier is not None else {}),
        },
        options=options,
    )
    (log,) = outcome.logs
    return log


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._=-]+", "_", text).strip("_")
