"""The fidelity audit: probe every environment through each simulator and score it.

Each simulator answers the same probe trajectories (``_probes``) through the
``Simulator`` class, exactly as in a run; the answers are checked (``_metrics``) and a
seeded sample of first-pass observations is judged for rule invention by the verifier
(``_judge``). The trajectories of all simulators and environments run concurrently
(``asyncio.gather``, bounded by a semaphore); one trajectory's calls run in order, since
its history is its state.

Scores. A part's score is the mean of its checks (each in [0, 1]; ``None`` when nothing
was checked). The fidelity score is the weighted mean of the parts that were measured
(weights ``DEFAULT_FIDELITY_WEIGHTS``, all equal by default). An environment is flagged
on a part whose score there falls below ``flag_below``, with examples of the failures.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from inspect_ai.model import Model, get_model
from pydantic import BaseModel, Field

from occubench.dataset import Dataset, load_dataset
from occubench.defaults import (
    DEFAULT_AUDIT_CONCURRENCY,
    DEFAULT_AUDIT_FLAG_BELOW,
    DEFAULT_AUDIT_PLANS_PER_ENV,
    DEFAULT_AUDIT_RULE_CHECKS,
    DEFAULT_DATE,
    DEFAULT_FIDELITY_WEIGHTS,
    DEFAULT_SEED,
)
from occubench.fidelity._judge import judge_rules
from occubench.fidelity._metrics import Check, Metric, call_text, trajectory_checks
from occubench.fidelity._probes import (
    ProbeKind,
    ProbeResult,
    ProbeTrajectory,
    TrajectoryResult,
    env_trajectories,
)
from occubench.simchecks import known_values
from occubench.simulator import Simulator, SimulatorError, render_system_prompt

MAX_EXAMPLES = 3
"""Failed checks quoted in one environment flag."""

NO_VERIFIER = "not judged: no verifier model given (--verifier-model)"


class PartScore(BaseModel):
    """One part of the fidelity score."""

    metric: Metric = Field(description="Which part.")
    score: float | None = Field(description="Mean of the checks in [0, 1]; None if none ran.")
    checked: int = Field(description="Checks made.")
    failed: int = Field(description="Checks that did not fully pass.")
    note: str = Field(default="", description="Why the part was not measured, if it was not.")


class Flag(BaseModel):
    """A part an environment fails under one simulator."""

    metric: Metric = Field(description="The failing part.")
    score: float = Field(description="The part's score in this environment.")
    examples: list[str] = Field(description="Failed checks, quoted.")


class EnvAudit(BaseModel):
    """One environment under one simulator."""

    env_name: str = Field(description="Environment.")
    parts: dict[Metric, PartScore] = Field(description="Part scores in this environment.")
    flags: list[Flag] = Field(description="Parts scoring below the flag threshold.")
    checks: list[Check] = Field(description="Every check made.")
    trajectories: list[TrajectoryResult] = Field(description="Calls and observations.")


class SimulatorAudit(BaseModel):
    """The audit of one simulator model."""

    model: str = Field(description="Simulator model.")
    score: float | None = Field(description="Fidelity: weighted mean of the measured parts.")
    parts: dict[Metric, PartScore] = Field(description="Part scores over all environments.")
    environments: list[EnvAudit] = Field(description="Per-environment results.")
    errors: list[str] = Field(description="Simulator errors that ended a trajectory early.")


class AuditReport(BaseModel):
    """Everything the fidelity audit measured (``occubench audit --out``)."""

    dataset: str = Field(description="Dataset folder audited.")
    date: str = Field(description="Date given to the simulators.")
    seed: int = Field(description="Seed of the rule-invention sample.")
    verifier_model: str | None = Field(description="Judge of rule invention (None: not judged).")
    rule_checks: int = Field(description="Observations per simulator sampled for the judge.")
    weights: dict[Metric, float] = Field(description="Weights of the parts in the score.")
    flag_below: float = Field(description="An environment part scoring below this is flagged.")
    probes: list[ProbeTrajectory] = Field(description="The probe trajectories every simulator ran.")
    simulators: list[SimulatorAudit] = Field(description="One audit per simulator.")


def part_scores(checks: Sequence[Check], *, judged: bool = True) -> dict[Metric, PartScore]:
    """Pool checks into one score per part (``judged``: whether rule invention was judged)."""
    parts = {}
    for metric in Metric:
        values = [c.value for c in checks if c.metric == metric]
        note = NO_VERIFIER if metric == Metric.RULE_INVENTION and not judged else ""
        parts[metric] = PartScore(
            metric=metric,
            score=sum(values) / len(values) if values else None,
            checked=len(values),
            failed=sum(v < 1 for v in values),
            note=note,
        )
    return parts


def fidelity_score(
    parts: Mapping[Metric, PartScore], weights: Mapping[Metric, float]
) -> float | None:
    """Weighted mean of the parts that were measured (None if none was)."""
    measured = [(weights.get(m, 0.0), p.score) for m, p in parts.items() if p.score is not None]
    total = sum(w for w, _ in measured)
    return sum(w * s for w, s in measured) / total if total > 0 else None


def _flags(parts: Mapping[Metric, PartScore], checks: Sequence[Check], below: float) -> list[Flag]:
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


async def _answer(
    model: Model, prompt: str, trajectory: ProbeTrajectory, limit: asyncio.Semaphore
) -> TrajectoryResult:
    """Run one probe trajectory through a fresh simulator session."""
    steps: list[ProbeResult] = []
    async with limit:
        simulator = Simulator(model, prompt)
        for probe in trajectory.probes:
            try:
                observation = await simulator.observe(probe.tool, probe.arguments)
            except SimulatorError as e:
                return TrajectoryResult(
                    env_name=trajectory.env_name,
                    source=trajectory.source,
                    steps=steps,
                    error=str(e),
                )
            steps.append(ProbeResult(**probe.model_dump(), observation=observation))
    return TrajectoryResult(env_name=trajectory.env_name, source=trajectory.source, steps=steps)


def _rule_sample(
    probes: Mapping[str, list[ProbeTrajectory]], n: int, seed: int
) -> list[tuple[str, int, int]]:
    """Seeded sample of first-pass calls (env, trajectory, step), the same for every simulator."""
    candidates = [
        (env, t, s)
        for env, trajectories in probes.items()
        for t, trajectory in enumerate(trajectories)
        for s, probe in enumerate(trajectory.probes)
        if probe.kind in (ProbeKind.PLAN, ProbeKind.GENERATED)
    ]
    return sorted(random.Random(seed).sample(candidates, min(n, len(candidates))))


async def _judge(
    verifier: Model,
    prompt: str,
    step: ProbeResult,
    where: tuple[int, int],
    limit: asyncio.Semaphore,
) -> Check | None:
    """Judge one observation for rule invention (None: no observation or no verdict)."""
    if step.observation is None:
        return None
    async with limit:
        verdict = await judge_rules(verifier, prompt, step.tool, step.arguments, step.observation)
    if verdict is None:
        return None
    return Check(
        metric=Metric.RULE_INVENTION,
        value=verdict[0],
        trajectory=where[0],
        step=where[1],
        detail=f"{call_text(step)}: {verdict[1]}",
    )


def _model(value: str | Model) -> Model:
    return value if isinstance(value, Model) else get_model(value)


async def run_audit(
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
) -> AuditReport:
    """Audit the fidelity of each simulator on every environment of ``dataset`` (module doc).

    Args:
        simulators: Simulator models (Inspect model names or models).
        dataset: A loaded dataset or its folder.
        verifier: Judge of rule invention; without one that part is not measured.
        rule_checks: First-pass observations per simulator the judge sees (seeded sample).
        date: Date given to the simulators (as in a run).
        seed: Seed of the rule-invention sample.
        weights: Weights of the parts by metric name (default: all equal).
        flag_below: An environment's part scoring below this is flagged.
        max_plans: Task plans replayed per environment.
        max_concurrency: Trajectories and judge calls at once.

    Raises:
        ValueError: no simulator given, or a model name Inspect does not know.
        DatasetError: the dataset does not load.
    """
    if not simulators:
        raise ValueError("give at least one simulator model")
    data = dataset if isinstance(dataset, Dataset) else load_dataset(dataset)
    models = [_model(s) for s in simulators]
    judge = _model(verifier) if verifier is not None else None
    weight = {Metric(k): float(v) for k, v in (weights or DEFAULT_FIDELITY_WEIGHTS).items()}
    envs = {name: data.envs[name] for name in sorted(data.envs)}
    probes = {
        name: env_trajectories(
            env, [t for t in data.tasks if t.env_name == name], max_plans=max_plans
        )
        for name, env in envs.items()
    }
    prompts = {name: render_system_prompt(env, date=date) for name, env in envs.items()}
    limit = asyncio.Semaphore(max_concurrency)
    jobs = [(m, name, t) for m in range(len(models)) for name in envs for t in probes[name]]
    answered = await asyncio.gather(
        *[_answer(models[m], prompts[name], t, limit) for m, name, t in jobs]
    )
    results: dict[tuple[int, str], list[TrajectoryResult]] = {}
    for (m, name, _), result in zip(jobs, answered, strict=True):
        results.setdefault((m, name), []).append(result)

    rule_checks_by: dict[tuple[int, str], list[Check]] = {}
    if judge is not None:
        sample, asks = _rule_sample(probes, rule_checks, seed), []
        for m in range(len(models)):
            for env, t, s in sample:
                steps = results[(m, env)][t].steps
                if s < len(steps):
                    asks.append(((m, env), _judge(judge, prompts[env], steps[s], (t, s), limit)))
        verdicts = await asyncio.gather(*[ask for _, ask in asks])
        for (key, _), check in zip(asks, verdicts, strict=True):
            if check is not None:
                rule_checks_by.setdefault(key, []).append(check)

    audits = []
    for m, model in enumerate(models):
        env_audits = []
        for name, env in envs.items():
            known = known_values(env)
            checks = [
                c
                for t, r in enumerate(results.get((m, name), []))
                for c in trajectory_checks(env, r, known, t)
            ]
            checks += rule_checks_by.get((m, name), [])
            parts = part_scores(checks, judged=judge is not None)
            env_audits.append(
                EnvAudit(
                    env_name=name,
                    parts=parts,
                    flags=_flags(parts, checks, flag_below),
                    checks=checks,
                    trajectories=results.get((m, name), []),
                )
            )
        all_parts = part_scores([c for e in env_audits for c in e.checks], judged=judge is not None)
        audits.append(
            SimulatorAudit(
                model=str(model),
                score=fidelity_score(all_parts, weight),
                parts=all_parts,
                environments=env_audits,
                errors=[
                    f"{r.env_name}: {r.error}"
                    for e in env_audits
                    for r in e.trajectories
                    if r.error
                ],
            )
        )
    return AuditReport(
        dataset=str(data.root),
        date=date,
        seed=seed,
        verifier_model=str(judge) if judge is not None else None,
        rule_checks=rule_checks,
        weights=weight,
        flag_below=flag_below,
        probes=[t for ts in probes.values() for t in ts],
        simulators=audits,
    )


def audit(
    simulators: Sequence[str | Model], dataset: Dataset | str | Path, **options: Any
) -> AuditReport:
    """Run ``run_audit`` to completion (for callers without an event loop); same arguments."""
    return asyncio.run(run_audit(simulators, dataset, **options))
