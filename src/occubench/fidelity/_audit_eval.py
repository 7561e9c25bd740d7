"""The fidelity audit as an Inspect eval: probe trajectories as samples, their checks as scores.

Each sample is one probe trajectory of one environment (``_probes``). The solver
replays its calls through the ``Simulator`` exactly as a run would (the ``simulator``
role; one trajectory's calls in order, since its history is its state); a simulator
error ends the trajectory early and is kept. The scorer makes the trajectory's checks
(``_metrics``) and, with a ``verifier`` role bound, asks it whether the observations
of a seeded sample of first-pass calls invent rules (``_judge``). The checks are the
score's metadata (``AuditGrade``); ``run_audit`` pools them into the report.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Literal

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import get_model, model_roles
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import StoreModel
from pydantic import BaseModel, Field

from occubench.dataset import Dataset, EnvConfig, load_dataset, resolve_dataset_dir
from occubench.errors import UsageError
from occubench.fidelity._judge import judge_rules
from occubench.fidelity._metrics import FidelityCheck, FidelityMetric, call_text, trajectory_checks
from occubench.fidelity._probes import (
    ProbeKind,
    ProbeResult,
    ProbeTrajectory,
    TrajectoryResult,
    env_trajectories,
)
from occubench.roles import Role
from occubench.simchecks import known_values
from occubench.simulator import Simulator, SimulatorError, attach_world, render_system_prompt
from occubench.worlds import WORLD_METADATA, WorldInLog, WorldMode

AUDIT_SCORER = "fidelity_checks"
"""Name of the audit's scorer in a log's scores."""


class AuditSample(BaseModel):
    """What one audit sample carries (its metadata)."""

    env: EnvConfig = Field(description="The environment the trajectory probes.")
    trajectory: ProbeTrajectory = Field(description="The probe calls, in order.")
    index: int = Field(description="The trajectory's index in its environment.")
    judged_steps: list[int] = Field(
        description="Steps whose observations the rule judge sees (a seeded sample)."
    )


class ProbeRun(StoreModel):
    """The answered trajectory, kept in the sample's store (``ProbeRun:*``)."""

    result: TrajectoryResult | None = Field(default=None, description="Calls and answers.")


class AuditGrade(BaseModel):
    """The audit scorer's metadata: every check of one trajectory."""

    checks: list[FidelityCheck] = Field(description="Every check made.")
    judged: bool = Field(description="Whether a verifier judged rule invention.")


def audit_probes(data: Dataset, max_plans: int) -> dict[str, list[ProbeTrajectory]]:
    """The probe trajectories of every environment of ``data`` (sorted by environment)."""
    return {
        name: env_trajectories(
            data.envs[name], [t for t in data.tasks if t.env_name == name], max_plans=max_plans
        )
        for name in sorted(data.envs)
    }


def rule_sample(
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


class AuditWorld(BaseModel):
    """The world an audit's simulators answer from (``--world``, its mode and variant)."""

    path: str = Field(description="The world (a folder, or a packed file to replay).")
    mode: WorldMode = Field(default=WorldMode.RECORD, description="How it is used.")
    variant: int | Literal["epoch"] = Field(default=0, description="The world's variant.")

    def task_args(self) -> dict[str, object]:
        """The world as the audit task's arguments (world, world_mode, world_variant)."""
        return {"world": self.path, "world_mode": self.mode.value, "world_variant": self.variant}

    def variant_of(self, epoch: int) -> int:
        """The variant a sample of ``epoch`` uses (``epoch``: from 0)."""
        return max(epoch - 1, 0) if self.variant == "epoch" else self.variant


@solver
def replay_probes(date: str, world: AuditWorld | None = None) -> Solver:
    """Ask the simulator role for every probe call of the sample's trajectory, in order.

    With ``world``, each call is answered from it first (``Simulator.use_world``).
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        sample = AuditSample.model_validate(state.metadata)
        simulator = Simulator(
            get_model(role=Role.SIMULATOR.value, required=True),
            render_system_prompt(sample.env, date=date),
        )
        if world is not None:
            attach_world(
                simulator,
                sample.env,
                world.path,
                world.mode,
                variant=world.variant_of(state.epoch),
                task=f"{sample.env.environment_name} probe {sample.index}",
            )
        trajectory = sample.trajectory
        result = TrajectoryResult(env_name=trajectory.env_name, source=trajectory.source, steps=[])
        for probe in trajectory.probes:
            try:
                observation = (await simulator.observe(probe.tool, probe.arguments)).value
            except SimulatorError as e:
                result.error = str(e)
                break
            result.steps.append(ProbeResult(**probe.model_dump(), observation=observation))
        state.store_as(ProbeRun).result = result
        state.completed = True
        return state

    return solve


@scorer(metrics=[mean()], name=AUDIT_SCORER)
def fidelity_checks(date: str) -> Scorer:
    """Check the answered trajectory; with a verifier bound, judge the sampled steps' rules.

    The value is the mean of the checks (1.0 when nothing could be checked); the checks
    are the metadata (``AuditGrade``).
    """

    async def score(state: TaskState, target: Target) -> Score:
        sample = AuditSample.model_validate(state.metadata)
        result = state.store_as(ProbeRun).result
        assert result is not None, "the audit solver did not run"
        checks = trajectory_checks(sample.env, result, known_values(sample.env), sample.index)
        verifier = model_roles().get(Role.VERIFIER.value)
        if isinstance(verifier, list):
            raise UsageError(f"role {Role.VERIFIER.value!r} must be one model, not a list")
        if verifier is not None:
            prompt = render_system_prompt(sample.env, date=date)
            for step in (result.steps[s] for s in sample.judged_steps if s < len(result.steps)):
                if step.observation is None:
                    continue
                verdict = await judge_rules(
                    verifier, prompt, step.tool, step.arguments, step.observation
                )
                if verdict is not None:
                    checks.append(
                        FidelityCheck(
                            metric=FidelityMetric.RULE_INVENTION,
                            value=verdict.value,
                            trajectory=sample.index,
                            step=result.steps.index(step),
                            detail=f"{call_text(step)}: {verdict.feedback}",
                        )
                    )
        grade = AuditGrade(checks=checks, judged=verifier is not None)
        values = [c.value for c in checks]
        return Score(
            value=sum(values) / len(values) if values else 1.0,
            explanation=f"{len(checks)} checks, {sum(v < 1 for v in values)} failed"
            + (f"; ended early: {result.error}" if result.error else ""),
            metadata=grade.model_dump(mode="json"),
        )

    return score


def audit_task(
    dataset: str | None,
    *,
    date: str,
    seed: int,
    max_plans: int,
    rule_checks: int,
    world: AuditWorld | None = None,
) -> Task:
    """The audit of every environment of ``dataset`` as an Inspect task.

    With ``world``, the simulator answers from it first; the log names it.

    Raises:
        UsageError: the world cannot be opened as its mode needs.
    """
    data = load_dataset(resolve_dataset_dir(dataset))
    metadata: dict[str, object] = {}
    if world is not None:
        used = WorldInLog.opened(world.path, world.mode, world.variant)
        metadata[WORLD_METADATA] = used.model_dump(mode="json")
    probes = audit_probes(data, max_plans)
    judged: dict[tuple[str, int], list[int]] = {}
    for env, t, s in rule_sample(probes, rule_checks, seed):
        judged.setdefault((env, t), []).append(s)
    samples = [
        Sample(
            id=f"{name}#{t}",
            input=f"probe trajectory {t} of {name} ({trajectory.source})",
            metadata=AuditSample(
                env=data.envs[name],
                trajectory=trajectory,
                index=t,
                judged_steps=judged.get((name, t), []),
            ).model_dump(mode="json"),
        )
        for name, trajectories in probes.items()
        for t, trajectory in enumerate(trajectories)
    ]
    return Task(
        dataset=MemoryDataset(samples, name=f"audit-{data.root.name}", location=str(data.root)),
        solver=replay_probes(date, world),
        scorer=fidelity_checks(date),
        fail_on_error=False,
        metadata=metadata or None,
    )
