"""The synthesis pipeline: catalog scenarios -> a calibrated, solvable dataset.

Stages (each stores its results under ``OUT/work/``, so a rerun skips what is done):

a. scenario -> sub-topics and a reference document     ``<scenario>/plan.json``
b. sub-topic -> environment config (validated)         ``<scenario>/stNN/env.json``
c. environment -> one task per difficulty level        ``<scenario>/stNN/tasks.json``
d. static validation of every task (and of every patch)
e. solvability: n runs with the plan                   ``<scenario>/stNN/LD/solvability-K.json``
g. repair of tasks no run with the plan solved         ``<scenario>/stNN/LD/repair-K.json``
f. calibration: n runs without the plan                ``<scenario>/stNN/LD/calibration.json``
h. filter and select one difficulty level per scenario (see ``_select``)
i. the dataset in the release layout and its manifest  ``OUT/dataset/``

Runs are batched: one Inspect eval set per stage, round and ``run_batch`` tasks (run
through ``occubench.scale.run_eval``, so a killed batch resumes), logs in
``OUT/runs/``. ``OUT/work/spec.json`` records the models and settings; resuming with
other ones is refused (their artifacts would not mix).
"""

from __future__ import annotations

import asyncio
import hashlib
import shutil
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from inspect_ai.model import Model
from pydantic import BaseModel

from occubench.costs import PriceTable
from occubench.dataset import EnvConfig, Scenario, write_dataset
from occubench.errors import UsageError
from occubench.roles import Role
from occubench.synthesis._artifacts import (
    ArtifactStore,
    StageResult,
    TokenUsage,
    slugify,
    sum_usage,
)
from occubench.synthesis._catalog import CatalogScenario
from occubench.synthesis._env import generate_env
from occubench.synthesis._manifest import (
    MANIFEST_FILE,
    Drop,
    DropStage,
    Manifest,
    ScenarioFunnel,
    SelectedTask,
    SynthesisSettings,
    role_costs,
)
from occubench.synthesis._records import DIFFICULTY_LEVELS, TaskDraft
from occubench.synthesis._repair import Repair, repair_instance
from occubench.synthesis._runs import Candidate, RunModels, RunOutcome, run_candidates
from occubench.synthesis._select import pool_levels, select_difficulty
from occubench.synthesis._subtopics import ScenarioPlan, Subtopic, plan_scenario
from occubench.synthesis._tasks import TaskSet, generate_tasks
from occubench.synthesis._validate import validate_task

WORK_DIR = "work"
RUNS_DIR = "runs"
DATASET_DIR = "dataset"
MAX_REASON_CHARS = 400

T = TypeVar("T")
S = TypeVar("S", bound="StageResult[Any]")

STAGE_SUBTOPICS = "sub-topics"
STAGE_ENVS = "environments"
STAGE_TASKS = "tasks"
STAGE_SOLVABILITY = "solvability"
STAGE_REPAIRS = "repairs"
STAGE_CALIBRATION = "calibration"


class Progress(Protocol):
    """Receives the pipeline's progress (the CLI shows it with rich)."""

    def stage(self, name: str, total: int) -> None:
        """Stage ``name`` has ``total`` items (called again when the total grows)."""

    def advance(self, name: str, amount: int = 1) -> None:
        """``amount`` more items of stage ``name`` are done."""


class NoProgress:
    """A Progress that shows nothing."""

    def stage(self, name: str, total: int) -> None:
        """Ignore."""

    def advance(self, name: str, amount: int = 1) -> None:
        """Ignore."""


@dataclass(frozen=True)
class SynthesisModels:
    """The models: the generator, and the agent, simulator and verifier of the runs."""

    generator: Model
    agent: Model
    simulator: Model
    verifier: Model | None = None
    """Judge of the runs (default: the simulator)."""

    def runs(self) -> RunModels:
        """The models of the agent runs."""
        return RunModels(self.agent, self.simulator, self.verifier or self.simulator)

    def names(self) -> dict[str, str]:
        """Model name by role."""
        return {
            Role.GENERATOR.value: str(self.generator),
            Role.AGENT.value: str(self.agent),
            Role.SIMULATOR.value: str(self.simulator),
            Role.VERIFIER.value: str(self.verifier or self.simulator),
        }


@dataclass
class Instance:
    """One task of one sub-topic on its way through the funnel."""

    key: str
    scenario: CatalogScenario
    subtopic: Subtopic
    env: EnvConfig
    task: TaskDraft
    repairs: int = 0
    fixed_by: list[str] = field(default_factory=list)
    evidence: str = ""
    needs_run: bool = True
    with_plan: RunOutcome | None = None
    without_plan: RunOutcome | None = None

    def candidate(self) -> Candidate:
        """The instance as a task to run."""
        return Candidate(key=self.key, scenario=self.scenario, env=self.env, task=self.task)


@dataclass
class _Tally:
    """Counts of one scenario (see ScenarioFunnel)."""

    subtopics: int = 0
    envs_valid: int = 0
    generated: int = 0
    valid: int = 0
    solvable: int = 0
    repaired: int = 0
    non_trivial: int = 0


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_REASON_CHARS else text[: MAX_REASON_CHARS - 3] + "..."


def _ratio(outcome: RunOutcome | None) -> str:
    return "-" if outcome is None else f"{outcome.passed}/{outcome.scored}"


class SynthesisSpec(BaseModel):
    """What artifacts depend on: the models and the settings (``work/spec.json``)."""

    models: dict[str, str]
    settings: SynthesisSettings


SPEC_KEY = "spec"
NEUTRAL_SETTINGS = {"run_batch", "generator_retries"}
"""Settings that do not change results: they may differ between a run and its resume."""


def check_spec(store: ArtifactStore, spec: SynthesisSpec) -> None:
    """Record the run's spec, or refuse to resume artifacts made with another one.

    Raises:
        UsageError: the stored spec differs (models or settings other than neutral ones).
    """
    stored = store.load(SPEC_KEY, SynthesisSpec)
    if stored is not None:
        old = {**stored.models, **stored.settings.model_dump(exclude=NEUTRAL_SETTINGS)}
        new = {**spec.models, **spec.settings.model_dump(exclude=NEUTRAL_SETTINGS)}
        changed = [f"{k}: {old.get(k)} -> {new.get(k)}" for k in new if old.get(k) != new[k]]
        if changed:
            raise UsageError(
                f"{store.root} holds the work of a run with other models or settings "
                f"({'; '.join(changed)}): use another output folder, or delete "
                f"{store.root} to start over"
            )
    store.save(SPEC_KEY, spec)


_Slot = tuple[CatalogScenario, int, Subtopic]
"""A sub-topic of a scenario: the scenario, the sub-topic's number (from 1), the sub-topic."""


def _place(slot: _Slot) -> str:
    """Where a sub-topic's artifacts are kept, and its name in drops: ``<scenario>/stNN``."""
    scenario, number, _ = slot
    return f"{slugify(scenario.name)}/st{number:02d}"


class _Pipeline:
    def __init__(
        self,
        out: Path,
        models: SynthesisModels,
        settings: SynthesisSettings,
        progress: Progress,
    ) -> None:
        self.out = out
        self.store = ArtifactStore(out / WORK_DIR)
        self.models = models
        self.settings = settings
        self.progress = progress
        self.drops: list[Drop] = []
        self.spent: list[dict[str, TokenUsage]] = []
        self.tally: dict[str, _Tally] = {}

    def drop(self, item: str, stage: DropStage, reason: str) -> None:
        self.drops.append(Drop(item=item, stage=stage, reason=_short(reason)))

    async def each(
        self, stage: str, items: Sequence[T], work: Callable[[T], Awaitable[None]]
    ) -> None:
        """Run ``work`` on every item concurrently, reporting progress."""
        self.progress.stage(stage, len(items))

        async def one(item: T) -> None:
            await work(item)
            self.progress.advance(stage)

        await asyncio.gather(*(one(item) for item in items))

    async def stored(self, key: str, kind: type[S], make: Callable[[], Awaitable[S]]) -> S:
        """A stage result from the store, or made and stored; its tokens are counted."""
        result = await self.store.cached(key, kind, make)
        self.spent.append(result.usage)
        return result

    # a-d ------------------------------------------------------------------------------

    async def generate(self, scenarios: Sequence[CatalogScenario]) -> list[Instance]:
        """Stages a-d: sub-topics, an environment per sub-topic, its tasks, validated."""
        plans = await self.plan_scenarios(scenarios)
        slots = [
            (s, i, sub)
            for s in scenarios
            if s.name in plans
            for i, sub in enumerate(plans[s.name].subtopics, start=1)
        ]
        envs = await self.build_envs(slots, plans)
        return await self.build_tasks(slots, envs)

    async def plan_scenarios(self, scenarios: Sequence[CatalogScenario]) -> dict[str, ScenarioPlan]:
        """Each scenario's sub-topics (a scenario whose plan failed is dropped), by name."""
        gen, seed = self.models.generator, self.settings.seed
        retries = self.settings.generator_retries
        plans: dict[str, ScenarioPlan] = {}

        async def plan(s: CatalogScenario) -> None:
            slug = slugify(s.name)
            self.tally[s.name] = _Tally()
            result = await self.stored(
                f"{slug}/plan",
                StageResult[ScenarioPlan],
                lambda: plan_scenario(gen, s, self.settings.subtopics, retries=retries, seed=seed),
            )
            value = result.usable()
            if value is not None:
                plans[s.name] = value
                self.tally[s.name].subtopics = len(value.subtopics)
            else:
                self.drop(slug, DropStage.GENERATE, "sub-topics: " + "; ".join(result.issues))

        await self.each(STAGE_SUBTOPICS, scenarios, plan)
        return plans

    async def build_envs(
        self, slots: Sequence[_Slot], plans: dict[str, ScenarioPlan]
    ) -> dict[str, EnvConfig]:
        """The valid environment of each sub-topic (the others dropped), by its place."""
        gen, seed = self.models.generator, self.settings.seed
        retries = self.settings.generator_retries
        envs: dict[str, EnvConfig] = {}

        async def env(slot: _Slot) -> None:
            s, i, sub = slot
            where = _place(slot)
            result = await self.stored(
                f"{where}/env",
                StageResult[EnvConfig],
                lambda: generate_env(
                    gen, s, plans[s.name].reference, sub, retries=retries, seed=seed
                ),
            )
            value = result.usable()
            if value is not None:
                envs[where] = value
                self.tally[s.name].envs_valid += 1
            elif result.value is None:
                self.drop(where, DropStage.GENERATE, "environment: " + "; ".join(result.issues))
            else:
                self.drop(
                    where, DropStage.VALIDATE, "environment invalid: " + "; ".join(result.issues)
                )

        await self.each(STAGE_ENVS, slots, env)
        return envs

    async def build_tasks(
        self, slots: Sequence[_Slot], envs: dict[str, EnvConfig]
    ) -> list[Instance]:
        """The valid task of each difficulty in each environment (the others dropped)."""
        gen, seed = self.models.generator, self.settings.seed
        retries = self.settings.generator_retries
        instances: list[Instance] = []

        async def tasks(slot: _Slot) -> None:
            s, _, sub = slot
            where = _place(slot)
            if where not in envs:
                return
            result = await self.stored(
                f"{where}/tasks",
                StageResult[TaskSet],
                lambda: generate_tasks(gen, s, sub, envs[where], retries=retries, seed=seed),
            )
            if result.value is None:
                self.drop(where, DropStage.GENERATE, "tasks: " + "; ".join(result.issues))
                return
            for level in DIFFICULTY_LEVELS:
                task = result.value.level(level)
                key = f"{where}/L{level}"
                if task is None:
                    self.drop(key, DropStage.GENERATE, f"no task of difficulty {level} generated")
                    continue
                self.tally[s.name].generated += 1
                problems = validate_task(task, envs[where])
                if problems:
                    self.drop(key, DropStage.VALIDATE, "; ".join(problems))
                    continue
                self.tally[s.name].valid += 1
                instances.append(Instance(key, s, sub, envs[where], task))

        await self.each(STAGE_TASKS, slots, tasks)
        return sorted(instances, key=lambda x: x.key)

    # e, g ------------------------------------------------------------------------------

    def runs(
        self,
        stage: str,
        batch: Sequence[Instance],
        *,
        with_plan: bool,
        name: Callable[[Instance], str],
    ) -> dict[str, RunOutcome]:
        """Outcomes of ``batch``: stored ones loaded, the rest run and stored per eval."""
        outcomes: dict[str, StageResult[RunOutcome]] = {}
        missing = []
        for inst in batch:
            found = self.store.load(name(inst), StageResult[RunOutcome])
            if found is None:
                missing.append(inst)
            else:
                outcomes[inst.key] = found
        settings = self.settings
        for start in range(0, len(missing), settings.run_batch):
            chunk = missing[start : start + settings.run_batch]
            digest = hashlib.sha256("\n".join(name(i) for i in chunk).encode()).hexdigest()
            fresh = run_candidates(
                [i.candidate() for i in chunk],
                self.models.runs(),
                with_plan=with_plan,
                epochs=settings.runs_with_plan if with_plan else settings.runs_without_plan,
                work_dir=self.out / RUNS_DIR / f"{stage}-{digest[:10]}",
                seed=settings.seed,
                votes=settings.votes,
                protocol=settings.protocol,
            )
            for inst in chunk:
                self.store.save(name(inst), fresh[inst.key])
            outcomes.update(fresh)
        result = {}
        for key, stage_result in outcomes.items():
            self.spent.append(stage_result.usage)
            assert stage_result.value is not None
            result[key] = stage_result.value
        return result

    def solvability(self, instances: list[Instance]) -> list[Instance]:
        """Instances solved with the plan, repairing the unsolved ones up to the limit."""
        self.progress.stage(STAGE_SOLVABILITY, len(instances))
        solvable: list[Instance] = []
        active = list(instances)
        repairs_total = 0
        while active:
            to_run = [i for i in active if i.needs_run]
            outcomes = self.runs(
                STAGE_SOLVABILITY,
                to_run,
                with_plan=True,
                name=lambda i: f"{i.key}/solvability-{i.repairs}",
            )
            for inst in to_run:
                inst.with_plan, inst.needs_run = outcomes[inst.key], False
                inst.evidence = "\n\n".join(inst.with_plan.evidence)
            still: list[Instance] = []
            for inst in active:
                outcome = inst.with_plan
                assert outcome is not None
                if outcome.passed > 0:
                    solvable.append(inst)
                    self.tally[inst.scenario.name].solvable += 1
                    self.tally[inst.scenario.name].repaired += inst.repairs > 0
                elif outcome.scored == 0:
                    self.drop(
                        inst.key,
                        DropStage.SOLVABILITY,
                        f"all {outcome.runs} runs with the plan errored: "
                        + "; ".join(outcome.error_messages),
                    )
                elif inst.repairs >= self.settings.max_repairs:
                    fixes = f"; fixes tried: {', '.join(inst.fixed_by)}" if inst.fixed_by else ""
                    self.drop(
                        inst.key,
                        DropStage.SOLVABILITY,
                        f"unsolvable: {outcome.passed}/{outcome.scored} runs with the plan "
                        f"passed after {inst.repairs} repair(s){fixes}",
                    )
                else:
                    still.append(inst)
                    continue
                self.progress.advance(STAGE_SOLVABILITY)
            repairs_total += len(still)
            self.progress.stage(STAGE_REPAIRS, repairs_total)
            asyncio.run(self.repairs(still))
            active = still
        return sorted(solvable, key=lambda x: x.key)

    async def repairs(self, instances: Sequence[Instance]) -> None:
        """Repair every instance concurrently (one generator call each, re-asks aside)."""
        await asyncio.gather(*(self.repair(inst) for inst in instances))

    async def repair(self, inst: Instance) -> None:
        attempt = inst.repairs + 1
        result = await self.stored(
            f"{inst.key}/repair-{attempt}",
            StageResult[Repair],
            lambda: repair_instance(
                self.models.generator,
                inst.scenario,
                inst.subtopic,
                inst.env,
                inst.task,
                inst.evidence,
                retries=self.settings.generator_retries,
                seed=self.settings.seed,
            ),
        )
        inst.repairs = attempt
        repaired = result.usable()
        if repaired is not None:
            inst.env, inst.task = repaired.env, repaired.task
            inst.fixed_by.append(repaired.diagnosis.value)
            inst.needs_run = True
        else:
            inst.fixed_by.append("unusable patch")
            inst.evidence += "\n\nA previous fix was unusable: " + "; ".join(result.issues)
        self.progress.advance(STAGE_REPAIRS)

    # f, h ------------------------------------------------------------------------------

    def calibration(self, instances: list[Instance]) -> list[Instance]:
        """Instances that not every run without the plan passed (errors dropped too)."""
        self.progress.stage(STAGE_CALIBRATION, len(instances))
        outcomes = self.runs(
            STAGE_CALIBRATION, instances, with_plan=False, name=lambda i: f"{i.key}/calibration"
        )
        kept = []
        for inst in instances:
            outcome = inst.without_plan = outcomes[inst.key]
            if outcome.scored == 0:
                self.drop(
                    inst.key,
                    DropStage.CALIBRATION,
                    f"all {outcome.runs} runs without the plan errored: "
                    + "; ".join(outcome.error_messages),
                )
            elif outcome.passed == outcome.scored:
                self.drop(
                    inst.key,
                    DropStage.CALIBRATION,
                    f"trivial: {outcome.passed}/{outcome.scored} runs without the plan passed",
                )
            else:
                kept.append(inst)
                self.tally[inst.scenario.name].non_trivial += 1
        self.progress.advance(STAGE_CALIBRATION, len(instances))
        return kept

    def select(
        self, scenarios: Sequence[CatalogScenario], instances: list[Instance]
    ) -> tuple[list[Instance], list[ScenarioFunnel]]:
        chosen: list[Instance] = []
        funnel = []
        for s in scenarios:
            mine = [i for i in instances if i.scenario.name == s.name]
            selection = None
            if mine:
                selection = select_difficulty(
                    pool_levels(
                        (i.task.difficulty_level, i.without_plan.passed, i.without_plan.scored)
                        for i in mine
                        if i.without_plan is not None
                    )
                )
                for inst in mine:
                    if inst.task.difficulty_level == selection.difficulty:
                        chosen.append(inst)
                    else:
                        self.drop(
                            inst.key,
                            DropStage.SELECTION,
                            f"the scenario's level is {selection.difficulty}: {selection.reason}",
                        )
            tally = self.tally.get(s.name, _Tally())
            funnel.append(
                ScenarioFunnel(
                    scenario=s.name,
                    **vars(tally),
                    selected=sum(i.scenario.name == s.name for i in chosen),
                    selection=selection,
                )
            )
        return chosen, funnel

    # i ---------------------------------------------------------------------------------

    def write(
        self,
        scenarios: Sequence[CatalogScenario],
        chosen: list[Instance],
        funnel: list[ScenarioFunnel],
        prices: PriceTable | None,
    ) -> Manifest:
        order = {s.name: n for n, s in enumerate(scenarios)}
        chosen = sorted(chosen, key=lambda i: (order[i.scenario.name], i.key))
        records = [
            i.task.to_record(n, i.scenario.name, i.env.environment_name)
            for n, i in enumerate(chosen, start=1)
        ]
        root = self.out / DATASET_DIR
        if root.exists():
            shutil.rmtree(root)
        write_dataset(
            root,
            records,
            {i.env.environment_name: i.env for i in chosen}.values(),
            [
                Scenario(category=s.industry, domain=s.domain, task_scenario_name=s.name)
                for s in scenarios
            ],
        )
        tokens = sum_usage(self.spent)
        names = self.models.names()
        manifest = Manifest(
            models=names,
            settings=self.settings,
            scenarios=[s.name for s in scenarios],
            funnel=funnel,
            drops=sorted(self.drops, key=lambda d: (list(DropStage).index(d.stage), d.item)),
            tasks=[
                SelectedTask(
                    task_id=r.task_id,
                    instance=i.key,
                    scenario=i.scenario.name,
                    difficulty=r.difficulty_level,
                    env_name=r.env_name,
                    with_plan=_ratio(i.with_plan),
                    without_plan=_ratio(i.without_plan),
                    repairs=i.repairs,
                )
                for r, i in zip(records, chosen, strict=True)
            ],
            tokens=tokens,
            cost=role_costs(tokens, names, prices) if prices is not None else None,
        )
        (root / MANIFEST_FILE).write_text(manifest.model_dump_json(indent=2) + "\n")
        return manifest


def run_synthesis(
    scenarios: Sequence[CatalogScenario],
    models: SynthesisModels,
    out: str | Path,
    settings: SynthesisSettings | None = None,
    *,
    prices: PriceTable | None = None,
    progress: Progress | None = None,
) -> Manifest:
    """Synthesize a dataset from catalog scenarios (see the module docstring for the stages).

    Generation stages run their model calls concurrently (each in an event loop of its
    own); run stages go through the runner (``occubench.scale.run_eval``), which runs
    Inspect's eval set in this thread.

    Args:
        scenarios: Catalog entries to synthesize, in the order tasks are numbered.
        models: Generator, agent, simulator and (optional) verifier.
        out: Output folder: ``work/`` (resumable artifacts), ``runs/`` (logs),
            ``dataset/`` (the result, with ``manifest.json``).
        settings: Sub-topics, runs, repairs, seed (defaults: ``SynthesisSettings()``).
        prices: Price table for the manifest's cost (tokens only without it).
        progress: Receives progress per stage.

    Returns:
        The manifest, also written to ``out/dataset/manifest.json``.
    """
    slugs = [slugify(s.name) for s in scenarios]
    clashes = sorted({x for x in slugs if slugs.count(x) > 1})
    if clashes:
        raise UsageError(f"scenario names map to the same folder name: {clashes}")
    settings = settings or SynthesisSettings()
    pipeline = _Pipeline(Path(out), models, settings, progress or NoProgress())
    check_spec(pipeline.store, SynthesisSpec(models=models.names(), settings=settings))
    instances = asyncio.run(pipeline.generate(scenarios))
    solvable = pipeline.solvability(instances)
    non_trivial = pipeline.calibration(solvable)
    chosen, funnel = pipeline.select(scenarios, non_trivial)
    return pipeline.write(scenarios, chosen, funnel, prices)
