"""Certify a simulator against gold: a world whose answers people wrote.

Every entry a person wrote (``EntrySource.PERSON``) is a call on a path with its right
answer. The audit replays each path: the simulator's history is rebuilt from the world's
own answers to the earlier calls (a call that failed before the simulator is noted as it
was), the simulator model is asked for the current call, exactly as a run asks it, and
its answer is scored against the person's:

- ``json_object``: the answer is one JSON object (1) or not (0);
- ``keys``: the Jaccard index of the two answers' key paths (``a``, ``a.b``, ``items[].x``);
- ``complete``: the share of the gold answer's values (leaves, by their exact path such as
  ``items[2].name``) the answer has at all: a left-out record lowers it;
- ``grounded``: the share of the answer's leaves the gold answer has: an invented record
  lowers it;
- ``ids``, ``numbers``, ``text``: among the leaves both have, the share that agree: ids
  (a key ending in id, ids, code or number) and numbers (booleans and nulls too) exactly,
  text once normalised (Unicode NFKC, case folded, runs of white space made one space,
  trimmed);
- ``consistent``: the answer passes the online simulator checks (``occubench.simchecks``)
  against the initial state and the earlier observations of its path (1) or not (0);
- ``realism``: with a verifier, its verdict on whether the answer asserts what the
  environment does not give (1 faithful, 0 not).

A part an entry gives nothing to (no id among the common leaves, say) is not counted for
it. Scores are pooled per simulator model, environment and scenario, each the mean over
entries with a seeded bootstrap 95% interval.
"""

from __future__ import annotations

import asyncio
import copy
import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np
from inspect_ai.model import GenerateConfig, Model
from pydantic import BaseModel, Field

from occubench.agent import simulator_layout, simulator_prompt
from occubench.analysis import bootstrap_interval
from occubench.config import ResolvedRun
from occubench.dataset import EnvConfig
from occubench.errors import UsageError
from occubench.fidelity._judge import judge_rules
from occubench.simchecks import ObservationChecker, is_id_key, key_paths
from occubench.simulator import Simulator, SimulatorError, StateMode
from occubench.worlds import (
    RAW_ARGUMENTS,
    EntrySource,
    PathStep,
    World,
    WorldContext,
    WorldEntry,
    entry_key,
    env_digest,
    text_digest,
)

GOLD_SEED = 0
"""Seed of the bootstrap intervals (the same audit gives the same intervals)."""
GOLD_RESAMPLES = 2000
"""Bootstrap resamples of one interval."""
MAX_NOTES = 20
"""Notes (entries not audited, prompts that differ) kept in a report."""


class GoldMetric(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """The parts of the score against gold (module doc)."""

    JSON_OBJECT = "json_object"
    KEYS = "keys"
    COMPLETE = "complete"
    GROUNDED = "grounded"
    IDS = "ids"
    NUMBERS = "numbers"
    TEXT = "text"
    CONSISTENT = "consistent"
    REALISM = "realism"


class GoldScore(BaseModel):
    """One gold entry answered by one simulator model, scored."""

    simulator: str = Field(description="The simulator model that answered.")
    key: str = Field(description="The gold entry's key.")
    env_name: str = Field(description="Its environment.")
    scenario: str = Field(description="Its scenario (the tasks' of that environment).")
    step: int = Field(description="The call's place on its path (0: the first call).")
    tool: str = Field(description="The tool called.")
    author: str = Field(description="The person who wrote the gold answer.")
    gold: Any = Field(description="The person's answer.")
    answer: Any = Field(description="The simulator's answer (None: it gave none).")
    scores: dict[GoldMetric, float] = Field(description="Each part measured, in [0, 1].")
    problems: list[str] = Field(default_factory=list, description="What did not agree.")


class Estimate(BaseModel):
    """A mean over entries with its interval."""

    mean: float | None = Field(description="The mean (None: nothing measured).")
    low: float | None = Field(default=None, description="Lower bound of the 95% interval.")
    high: float | None = Field(default=None, description="Upper bound of the 95% interval.")
    n: int = Field(description="Entries measured.")


class GoldGroup(BaseModel):
    """The score of one simulator model over a group of entries (all, or one env)."""

    simulator: str = Field(description="The simulator model.")
    env_name: str | None = Field(default=None, description="The environment (None: all).")
    scenario: str | None = Field(default=None, description="Its scenario (None: all).")
    entries: int = Field(description="Gold entries answered.")
    parts: dict[GoldMetric, Estimate] = Field(description="Each part's mean and interval.")
    agreement: Estimate = Field(
        description="Against gold, in one number: the mean over entries of their parts' mean."
    )


class GoldReport(BaseModel):
    """Everything ``occubench audit --gold`` measured."""

    world: str = Field(description="The gold world audited.")
    world_digest: str = Field(description="Its digest.")
    gold_entries: int = Field(description="Entries written by people.")
    authors: list[str] = Field(description="The people who wrote them.")
    verifier_model: str | None = Field(description="Judge of realism (None: not judged).")
    groups: list[GoldGroup] = Field(description="Per simulator: all entries, then each env.")
    scores: list[GoldScore] = Field(description="Every entry's scores, per simulator.")
    errors: list[str] = Field(default_factory=list, description="Simulator errors, by entry.")
    notes: list[str] = Field(
        default_factory=list, description="Entries not audited and prompts that differ, why."
    )

    def overall(self, simulator: str) -> GoldGroup | None:
        """The group of all entries of one simulator model."""
        return next((g for g in self.groups if g.simulator == simulator and not g.env_name), None)


_SPACE = re.compile(r"\s+")


def normalised(text: str) -> str:
    """Text as it is compared: NFKC, case folded, white space runs made one space, trimmed."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def leaves(value: Any, path: str = "") -> dict[str, tuple[str, Any]]:
    """Every leaf of a JSON value by its exact path, with the last key above it.

    An empty object or list is a leaf itself.
    """
    out: dict[str, tuple[str, Any]] = {}
    stack: list[tuple[str, str, Any]] = [(path, "", value)]
    while stack:
        where, key, item = stack.pop()
        if isinstance(item, dict) and item:
            for k, v in item.items():
                stack.append((f"{where}.{k}" if where else str(k), str(k), v))
        elif isinstance(item, list) and item:
            for i, v in enumerate(item):
                stack.append((f"{where}[{i}]", key, v))
        else:
            out[where] = (key, item)
    return out


def _kind(key: str, value: Any) -> GoldMetric:
    if is_id_key(key):
        return GoldMetric.IDS
    if isinstance(value, str):
        return GoldMetric.TEXT
    return GoldMetric.NUMBERS


def _same(kind: GoldMetric, a: Any, b: Any) -> bool:
    if kind is GoldMetric.TEXT and isinstance(a, str) and isinstance(b, str):
        return normalised(a) == normalised(b)
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return type(a) is type(b) and a == b or (_number(a) and _number(b) and a == b)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _share(hit: int, total: int) -> float | None:
    return hit / total if total else None


def compare_answers(gold: Any, answer: Any) -> tuple[dict[GoldMetric, float], list[str]]:
    """The parts measured by comparing a simulator's answer with the gold one (module doc).

    ``answer`` is None when the simulator gave no JSON value. Returns the scores of the
    parts that apply (``consistent`` and ``realism`` are measured apart) and the problems.
    """
    scores: dict[GoldMetric, float] = {}
    problems: list[str] = []
    scores[GoldMetric.JSON_OBJECT] = 1.0 if isinstance(answer, dict) else 0.0
    if not isinstance(answer, dict):
        problems.append("not a JSON object")
        return scores, problems
    expected, got = key_paths(gold), key_paths(answer)
    union = expected | got
    scores[GoldMetric.KEYS] = len(expected & got) / len(union) if union else 1.0
    if expected != got:
        missing, extra = sorted(expected - got)[:3], sorted(got - expected)[:3]
        problems.append(f"keys: missing {missing}, unexpected {extra}")
    want, have = leaves(gold), leaves(answer)
    common = want.keys() & have.keys()
    complete, grounded = _share(len(common), len(want)), _share(len(common), len(have))
    if complete is not None:
        scores[GoldMetric.COMPLETE] = complete
        if complete < 1:
            problems.append(f"left out: {sorted(want.keys() - have.keys())[:3]}")
    if grounded is not None:
        scores[GoldMetric.GROUNDED] = grounded
        if grounded < 1:
            problems.append(f"not in the gold answer: {sorted(have.keys() - want.keys())[:3]}")
    agree: dict[GoldMetric, list[bool]] = {}
    for path in sorted(common):
        key, value = want[path]
        kind = _kind(key, value)
        same = _same(kind, value, have[path][1])
        agree.setdefault(kind, []).append(same)
        if not same and len(problems) < 8:
            problems.append(f"{kind.value}: {path}: {value!r} -> {have[path][1]!r}")
    for kind, found in agree.items():
        scores[kind] = sum(found) / len(found)
    return scores, problems


class _Scene(BaseModel):
    """One environment as the gold was written in it: its config, scenario and prompt."""

    env_name: str
    scenario: str
    env: EnvConfig
    prompt: str


def _scenes(run: ResolvedRun) -> dict[str, _Scene]:
    """The selection's environments by their digest, with the prompt the run renders."""
    loaded = run.config.load_tasks()
    scenes: dict[str, _Scene] = {}
    for task in loaded.tasks:
        env = loaded.envs[task.env_name]
        digest = env_digest(env)
        if digest not in scenes:
            scenes[digest] = _Scene(
                env_name=task.env_name,
                scenario=task.task_scenario_name,
                env=env,
                prompt=simulator_prompt(run, env),
            )
    return scenes


def _raw(step: PathStep) -> tuple[dict[str, Any], str | None]:
    """A path step's arguments as the simulator is given them (raw text kept raw)."""
    if set(step.arguments) == {RAW_ARGUMENTS}:
        return {}, str(step.arguments[RAW_ARGUMENTS])
    return dict(step.arguments), None


def _checkable(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {"value": value}


class _Replay(BaseModel):
    """A gold entry with the world's answers to the calls before it."""

    model_config = {"arbitrary_types_allowed": True}

    entry: WorldEntry
    scene: _Scene
    before: list[WorldEntry | None]


def _replays(
    world: World, scenes: Mapping[str, _Scene], contexts: Mapping[str, WorldContext]
) -> tuple[list[_Replay], list[str]]:
    """The gold entries that can be replayed, and why the others cannot."""
    notes: list[str] = []
    out: list[_Replay] = []
    prompts_told: set[str] = set()
    for entry in sorted(world.entries(), key=lambda e: (len(e.path), e.key)):
        if entry.source is not EntrySource.PERSON or world.lookup(entry.key) != entry:
            continue
        context = contexts.get(entry.context_digest)
        scene = scenes.get(context.env_digest) if context else None
        if context is None or scene is None:
            notes.append(f"entry {entry.key[:12]}: its environment is not in the dataset given")
            continue
        if text_digest(scene.prompt) != context.system_prompt_digest:
            if entry.context_digest not in prompts_told:
                prompts_told.add(entry.context_digest)
                notes.append(
                    f"{scene.env_name}: the simulator prompt differs from the one the gold was "
                    "written under (other date, protocol or settings?): audited with this one"
                )
        before: list[WorldEntry | None] = []
        for i, step in enumerate(entry.path):
            if step.failed is not None:
                before.append(None)
                continue
            found = world.lookup(entry_key(entry.context_digest, entry.path[:i], step))
            if found is None:
                notes.append(f"entry {entry.key[:12]}: call {i + 1} of its path is not recorded")
                break
            before.append(found)
        else:
            out.append(_Replay(entry=entry, scene=scene, before=before))
    return out, notes


def replay_path(simulator: Simulator, replay: _Replay, checker: ObservationChecker) -> None:
    """Put the world's answers to the calls before the entry into the simulator's history."""
    for step, recorded in zip(replay.entry.path, replay.before, strict=True):
        arguments, raw = _raw(step)
        if recorded is None:
            assert step.failed is not None
            simulator.record_failure(step.tool, arguments, step.failed, raw)
            continue
        simulator.apply_entry(recorded)
        if recorded.observation is not None:
            checker.record(step.tool, arguments, _checkable(recorded.observation))


def _simulator(run: ResolvedRun, scene: _Scene, model: Model) -> Simulator:
    """The simulator of one env as a run asks it, without online re-asks: one answer."""
    config, points = run.config, run.points
    explicit = config.state_mode is StateMode.EXPLICIT
    return Simulator(
        model,
        scene.prompt,
        layout=simulator_layout(run),
        max_retries=points.simulator_retries,
        pass_raw=True,
        cache=config.cache,
        state=copy.deepcopy(scene.env.task_initial_state) if explicit else None,
        config=GenerateConfig(
            max_tokens=points.simulator_max_tokens or None, seed=config.simulator_seed
        ),
    )


async def _score(
    run: ResolvedRun, replay: _Replay, model: Model, verifier: Model | None
) -> GoldScore | str:
    """One entry answered by ``model`` and scored (or the simulator error, as text)."""
    entry, scene = replay.entry, replay.scene
    simulator = _simulator(run, scene, model)
    checker = ObservationChecker(scene.env)
    replay_path(simulator, replay, checker)
    arguments, raw = _raw(entry.call)
    try:
        found = await simulator.observe(entry.call.tool, arguments, raw)
    except SimulatorError as e:
        return f"{scene.env_name} {entry.key[:12]}: {e}"
    answer = None if found.parse_failed else found.value
    scores, problems = compare_answers(entry.observation, answer)
    if isinstance(answer, dict):
        failures = checker.check(entry.call.tool, arguments, answer)
        scores[GoldMetric.CONSISTENT] = 0.0 if failures else 1.0
        problems += [f"{f.kind.value} check: {f.detail}" for f in failures]
        if verifier is not None:
            verdict = await judge_rules(verifier, scene.prompt, entry.call.tool, arguments, answer)
            if verdict is not None:
                scores[GoldMetric.REALISM] = verdict[0]
                if verdict[0] < 1:
                    problems.append(f"realism: {verdict[1]}")
    return GoldScore(
        simulator=_name(model),
        key=entry.key,
        env_name=scene.env_name,
        scenario=scene.scenario,
        step=len(entry.path),
        tool=entry.call.tool,
        author=entry.author,
        gold=entry.observation,
        answer=answer,
        scores=scores,
        problems=problems,
    )


def estimate(values: Sequence[float]) -> Estimate:
    """The mean of ``values`` with its seeded bootstrap 95% interval."""
    if not values:
        return Estimate(mean=None, n=0)
    found = bootstrap_interval(
        np.mean, np.asarray(values, dtype=float), n_resamples=GOLD_RESAMPLES, seed=GOLD_SEED
    )
    low, high = (None if math.isnan(x) else float(x) for x in (found.low, found.high))
    return Estimate(mean=float(found.estimate), low=low, high=high, n=len(values))


def estimate_cell(found: Estimate) -> str:
    """``0.95 [0.90, 1.00]``, or ``-`` when nothing was measured."""
    if found.mean is None:
        return "-"
    if found.low is None or found.high is None:
        return f"{found.mean:.2f}"
    return f"{found.mean:.2f} [{found.low:.2f}, {found.high:.2f}]"


def gold_group(
    simulator: str, scores: Sequence[GoldScore], env_name: str | None = None
) -> GoldGroup:
    """Pool entry scores into one group (all of a simulator's, or one env's)."""
    parts = {m: estimate([s.scores[m] for s in scores if m in s.scores]) for m in GoldMetric}
    per_entry = [sum(s.scores.values()) / len(s.scores) for s in scores if s.scores]
    return GoldGroup(
        simulator=simulator,
        env_name=env_name,
        scenario=scores[0].scenario if env_name and scores else None,
        entries=len(scores),
        parts=parts,
        agreement=estimate(per_entry),
    )


def _name(model: Model | str) -> str:
    return model if isinstance(model, str) else str(model)


async def _audit(
    run: ResolvedRun,
    replays: Sequence[_Replay],
    model: Model,
    verifier: Model | None,
    concurrency: int,
) -> list[GoldScore | str]:
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(replay: _Replay) -> GoldScore | str:
        async with gate:
            return await _score(run, replay, model, verifier)

    return list(await asyncio.gather(*(one(r) for r in replays)))


def gold_audit(
    world: str | Path,
    simulators: Sequence[Model],
    run: ResolvedRun,
    *,
    verifier: Model | None = None,
    concurrency: int = 4,
) -> GoldReport:
    """Score each simulator model against the gold world's answers (module doc).

    Args:
        world: The gold world (a folder or a packed file), read only.
        simulators: The simulator models to certify.
        run: The settings the gold was written under (dataset, protocol, date, state
            mode): they render the simulator's prompt for each environment.
        verifier: Judge of realism (None: that part is not measured).
        concurrency: Entries answered at once.

    Raises:
        UsageError: not a world, no simulator, or no entry written by a person.
        DatasetError: the dataset does not load.
    """
    if not simulators:
        raise UsageError("give at least one simulator model to audit against gold")
    gold = World.open(world, writable=False)
    try:
        scenes = _scenes(run)
        replays, notes = _replays(gold, scenes, gold.contexts())
        people = sorted({r.entry.author for r in replays})
        if not replays:
            raise UsageError(
                f"{world}: no entry written by a person matches the dataset given"
                + (f" ({notes[0]})" if notes else "")
            )
        digest = gold.digest()
    finally:
        gold.close()
    groups: list[GoldGroup] = []
    scores: list[GoldScore] = []
    errors: list[str] = []
    for model in simulators:
        name = _name(model)
        found = asyncio.run(_audit(run, replays, model, verifier, concurrency))
        mine = [s for s in found if isinstance(s, GoldScore)]
        errors += [f"{name}: {e}" for e in found if isinstance(e, str)]
        groups.append(gold_group(name, mine))
        for env in sorted({s.env_name for s in mine}):
            groups.append(gold_group(name, [s for s in mine if s.env_name == env], env))
        scores += mine
    return GoldReport(
        world=str(world),
        world_digest=digest,
        gold_entries=len(replays),
        authors=people,
        verifier_model=_name(verifier) if verifier is not None else None,
        groups=groups,
        scores=scores,
        errors=errors,
        notes=notes[:MAX_NOTES],
    )
