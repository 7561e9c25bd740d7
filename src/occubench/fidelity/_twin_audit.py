"""Step fidelity against the twin: each simulator's answers held against the twin's, step by step.

Trajectories (calls in order) come from two places:

- probes: each environment's probe trajectories (``_probes``), plus one the twin drives
  through the writes (``write_probe``, named ``WRITE_PROBE``): the env's candidate calls
  (``twins.candidate_calls``, their pools also drawing on what the twin's candidate reads
  answer on the initial state) that write, tried in order on the evolving state; each one
  the twin answers with a success is kept (at most ``max_writes``), followed by the
  candidate reads whose twin answer that write changed (at most ``reads_per_write``), so
  that a simulator that forgets a write shows it in determined fields and state. At most
  ``max_writes x (1 + reads_per_write)`` steps (12 x 4 by default);
- logs (``from_logs``): the calls that reached the environment in the agents' logged
  trajectories (the episode each sample's store holds);
- files (``trajectories``): a user's JSON list of ``twins.TwinTrajectory``
  (``twins.read_trajectories``); one in an environment without a twin is skipped (the
  environment named in ``skipped``), one in an environment outside the selection noted.

The twin answers each trajectory from its initial state. Each simulator is asked each
step exactly as a run asks it (``agent.environment_simulator``: the protocol's layout and
prompt, explicit state mode's state in the action and patch in the reply):

- fed the twin's history (``Feeding.TWIN``): a fresh simulator per step whose
  conversation holds the twin's answers to the earlier calls (and, in explicit state
  mode, whose state is the twin's), so one wrong answer does not cascade;
- free-running (``Feeding.OWN``): one simulator per trajectory on its own answers and its
  own patched state; a step with no usable answer gets the twin's in its place, so the
  trajectory goes on.

Each step is compared by the twins' compare rule (``twins.compare_observation``,
``twins.compare_state``) into a ``twins.StepMatch``; a provider error or an unparseable
reply (after the re-asks) is the step's ``failure``, never a mismatch.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from inspect_ai.model import Model
from pydantic import BaseModel, Field

from occubench.agent import environment_simulator, episode_in
from occubench.config import ResolvedRun
from occubench.dataset import EnvConfig, TaskRecord
from occubench.defaults import (
    DEFAULT_AUDIT_CONCURRENCY,
    DEFAULT_AUDIT_PLANS_PER_ENV,
    DEFAULT_TWIN_PROBE_READS,
    DEFAULT_TWIN_PROBE_WRITES,
    DEFAULT_TWIN_TOLERANCE,
)
from occubench.errors import UsageError
from occubench.fidelity._probes import env_trajectories
from occubench.results import log_files, log_samples
from occubench.simchecks import is_read_tool
from occubench.simulator import Simulator, SimulatorError, StateMode
from occubench.twins import (
    Feeding,
    Outcome,
    StepMatch,
    Twin,
    TwinCall,
    TwinFidelity,
    TwinStep,
    TwinTrajectory,
    candidate_calls,
    compare_observation,
    compare_state,
    outcome_of,
    read_trajectories,
    twins,
)
from occubench.worlds import PathStep, WorldEntry, text_digest

TWIN_AUTHOR = "twin"
"""The author of the twin's answers put into a simulator's history."""

TWIN_CONTEXT = text_digest("occubench twin answers")
"""The context digest of the twin's answers (no world is in use: it keys nothing)."""

WRITE_PROBE = "twin-driven writes"
"""The name of the probe trajectory the twin drives through the write tools."""


class TwinAudit(BaseModel):
    """What ``occubench audit --twin`` measured: one record per simulator and feeding."""

    records: list[TwinFidelity]
    trajectories: list[TwinTrajectory] = Field(description="Every trajectory replayed.")
    skipped: list[str] = Field(description="Environments without a twin, by name.")
    notes: list[str] = Field(
        default_factory=list, description="Logged samples and given trajectories not replayed."
    )


def write_probe(
    env: EnvConfig,
    tasks: Sequence[TaskRecord],
    twin: Twin,
    max_writes: int = DEFAULT_TWIN_PROBE_WRITES,
    reads_per_write: int = DEFAULT_TWIN_PROBE_READS,
) -> TwinTrajectory | None:
    """The twin-driven trajectory through the writes (module doc; None: no write succeeds)."""
    twin.reset()
    first = [c for c in candidate_calls(env, tasks) if is_read_tool(c.tool)]
    seen = [s.observation for s in twin.run(first) if s.outcome is Outcome.SUCCESS]
    twin.reset()
    candidates = candidate_calls(env, tasks, seen=seen)
    writes = [c for c in candidates if not is_read_tool(c.tool)]
    reads = [c for c in candidates if is_read_tool(c.tool)]
    kept: list[TwinCall] = []
    written = 0
    for tool, arguments in writes:
        if written == max_writes:
            break
        before = copy.deepcopy(twin.state)
        seen = [_answered(twin, before, r.tool, r.arguments) for r in reads]
        if twin.call(tool, arguments).outcome is not Outcome.SUCCESS:
            twin.reset(before)  # an error changes nothing; made sure of
            continue
        after = copy.deepcopy(twin.state)
        written += 1
        kept.append(TwinCall(tool=tool, arguments=arguments))
        shown = [
            r
            for r, old in zip(reads, seen, strict=True)
            if _answered(twin, after, r.tool, r.arguments) != old
        ]
        kept += [TwinCall(tool=r.tool, arguments=r.arguments) for r in shown[:reads_per_write]]
        twin.reset(after)
    twin.reset()
    if not kept:
        return None
    return TwinTrajectory(environment=env.environment_name, name=WRITE_PROBE, calls=kept)


def _answered(twin: Twin, state: dict[str, Any], tool: str, arguments: dict[str, Any]) -> Any:
    """The twin's observation of a call on ``state`` (the twin is left on a copy of it)."""
    twin.reset(state)
    return twin.call(tool, arguments).observation


def probe_trajectories(
    env: EnvConfig, tasks: Sequence[TaskRecord], twin: Twin, max_plans: int
) -> list[TwinTrajectory]:
    """The env's probe trajectories and the twin-driven write trajectory."""
    out = [
        TwinTrajectory(
            environment=env.environment_name,
            name=f"probe: {found.source}",
            calls=[TwinCall(tool=p.tool, arguments=p.arguments) for p in found.probes],
        )
        for found in env_trajectories(env, list(tasks), max_plans=max_plans)
    ]
    writes = write_probe(env, tasks, twin)
    return out + ([writes] if writes is not None else [])


def logged_trajectories(
    logs: Path, environments: Sequence[str]
) -> tuple[list[TwinTrajectory], list[str]]:
    """The calls of the logged samples in ``environments`` (and notes on those left out).

    Raises:
        UsageError: no log at ``logs``.
    """
    try:
        files = [f for f in log_files([logs]) if Path(f).suffix in (".eval", ".json")]
    except FileNotFoundError as e:
        raise UsageError(str(e)) from None
    if not files:
        raise UsageError(f"{logs}: no .eval log to replay (--from-logs)")
    found: list[TwinTrajectory] = []
    notes: list[str] = []
    for log in files:
        for sample in log_samples(log):
            env = str((sample.metadata or {}).get("env_name", ""))
            where = f"{Path(log).name} sample {sample.id} epoch {sample.epoch}"
            if env not in environments:
                notes.append(f"{where}: environment {env or '?'} has no twin or is not selected")
                continue
            calls = [
                TwinCall(tool=s.tool, arguments=s.arguments)
                for s in episode_in(sample.store).steps
                if not s.failed
            ]
            if calls:
                found.append(TwinTrajectory(environment=env, name=f"log: {where}", calls=calls))
    return found, notes


class _Replayed(BaseModel):
    """A trajectory as the twin answered it: each step and the state after it."""

    trajectory: TwinTrajectory
    steps: list[TwinStep]
    states: list[dict[str, Any]]
    initial: dict[str, Any]


def _replay_twin(twin: Twin, trajectory: TwinTrajectory) -> _Replayed:
    twin.reset()
    initial = copy.deepcopy(twin.state)
    steps: list[TwinStep] = []
    states: list[dict[str, Any]] = []
    for call in trajectory.calls:
        steps.append(twin.call(call.tool, call.arguments))
        states.append(copy.deepcopy(twin.state))
    return _Replayed(trajectory=trajectory, steps=steps, states=states, initial=initial)


def _twin_entry(step: TwinStep, state: dict[str, Any] | None) -> WorldEntry:
    """The twin's answer as a recorded answer a simulator's history takes."""
    return WorldEntry.record(
        TWIN_CONTEXT,
        [],
        PathStep.of(step.tool, step.arguments),
        text=json.dumps(step.observation, ensure_ascii=False),
        author=TWIN_AUTHOR,
        observation=step.observation,
        state=state,
    )


class _Answer(BaseModel):
    """A simulator's answer to one step: its value and patched state, or why none."""

    value: Any = None
    state: dict[str, Any] | None = None
    failure: str | None = None


async def _ask(simulator: Simulator, call: TwinCall) -> _Answer:
    """One step asked of a simulator; a provider error or an unusable reply is a failure."""
    try:
        found = await simulator.observe(call.tool, call.arguments)
    except SimulatorError as e:
        return _Answer(failure=f"unusable reply: {e}")
    except UsageError:
        raise
    except Exception as e:  # a provider's error, whatever its class: infrastructure
        return _Answer(failure=f"provider error: {type(e).__name__}: {e}")
    if found.parse_failed:
        return _Answer(failure="unusable reply: no observation parsed, raw reply passed on")
    return _Answer(value=found.value, state=copy.deepcopy(simulator.state))


def _match(
    replayed: _Replayed, index: int, answer: _Answer, explicit: bool, tolerance: float
) -> StepMatch:
    step = replayed.steps[index]
    base = StepMatch(
        environment=replayed.trajectory.environment,
        trajectory=replayed.trajectory.name,
        step=index,
        tool=step.tool,
        fields_changed=len(step.changes),
    )
    if answer.failure is not None:
        return base.model_copy(update={"failure": answer.failure})
    fields = compare_observation(step, answer.value, tolerance)
    update: dict[str, Any] = {
        "outcome_match": outcome_of(answer.value) is step.outcome,
        "determined": fields.determined,
        "determined_matched": fields.matched,
        "missing": len(fields.missing),
        "extra": len(fields.extra),
    }
    if explicit and answer.state is not None:
        state = compare_state(replayed.states[index], answer.state, tolerance, step.free_state)
        update |= {"state_fields": state.fields, "state_matched": state.matched}
    return base.model_copy(update=update)


async def _fed(
    run: ResolvedRun, env: EnvConfig, model: Model, replayed: _Replayed, tolerance: float
) -> list[StepMatch]:
    explicit = run.config.state_mode is StateMode.EXPLICIT
    entries = [
        _twin_entry(step, state if explicit else None)
        for step, state in zip(replayed.steps, replayed.states, strict=True)
    ]
    out: list[StepMatch] = []
    for index, call in enumerate(replayed.trajectory.calls):
        simulator = environment_simulator(run, env, model)
        for entry in entries[:index]:
            simulator.apply_entry(entry)
        answer = await _ask(simulator, call)
        out.append(_match(replayed, index, answer, explicit, tolerance))
    return out


async def _own(
    run: ResolvedRun, env: EnvConfig, model: Model, replayed: _Replayed, tolerance: float
) -> list[StepMatch]:
    explicit = run.config.state_mode is StateMode.EXPLICIT
    simulator = environment_simulator(run, env, model)
    out: list[StepMatch] = []
    for index, call in enumerate(replayed.trajectory.calls):
        answer = await _ask(simulator, call)
        if answer.failure is not None:  # the twin's answer in its place: the trajectory goes on
            state = simulator.state if explicit else None
            simulator.apply_entry(_twin_entry(replayed.steps[index], state))
        out.append(_match(replayed, index, answer, explicit, tolerance))
    return out


def _name(model: Model) -> str:
    return str(model)


def twin_audit(
    run: ResolvedRun,
    simulators: Sequence[Model],
    *,
    logs: Path | None = None,
    trajectories: Sequence[Path] = (),
    probes: bool = True,
    free_running: bool = False,
    tolerance: float = DEFAULT_TWIN_TOLERANCE,
    concurrency: int = DEFAULT_AUDIT_CONCURRENCY,
    max_plans: int = DEFAULT_AUDIT_PLANS_PER_ENV,
) -> TwinAudit:
    """Replay trajectories against the twins and each simulator (module doc).

    Args:
        run: The run's settings (dataset and selection, protocol, state mode, date, a
            folder of the user's twins over the package's): the simulator is asked as this
            run would ask it.
        simulators: The simulator models measured.
        logs: A log file or folder whose agents' trajectories are replayed too.
        trajectories: JSON files of trajectories replayed too (``twins.read_trajectories``).
        probes: Replay the probe trajectories.
        free_running: Also replay each simulator on its own history (``Feeding.OWN``).
        tolerance: Relative tolerance of numeric leaves.
        concurrency: Trajectories replayed at once.
        max_plans: Task plans per environment replayed as probes.

    Raises:
        UsageError: no simulator, a negative tolerance, a trajectories file that is not
            one, no environment with a twin, or nothing to replay.
    """
    if not simulators:
        raise UsageError("give at least one simulator model to measure against the twins")
    if tolerance < 0:
        raise UsageError(f"--tolerance must be 0 or more, got {tolerance:g}")
    loaded = run.config.load_tasks()
    found = twins(None if run.config.twins is None else Path(run.config.twins))
    envs, skipped = _twinned(loaded.envs, found)
    given = [(path, read_trajectories(path)) for path in trajectories]
    replaying: list[TwinTrajectory] = []
    if probes:
        for name, env in envs.items():
            tasks = [t for t in loaded.tasks if t.env_name == name]
            replaying += probe_trajectories(env, tasks, found[name](env), max_plans)
    notes: list[str] = []
    if logs is not None:
        logged, notes = logged_trajectories(logs, list(envs))
        replaying += logged
    for path, read in given:
        kept, skipped = _given_kept(path, read, envs, found, loaded.envs, skipped, notes)
        replaying += kept
    if not replaying:
        raise UsageError(
            "nothing to replay: no probe, logged call or given trajectory in an env with a twin"
        )
    feedings = [Feeding.TWIN, *([Feeding.OWN] if free_running else [])]
    records = _records(run, envs, found, replaying, simulators, feedings, tolerance, concurrency)
    return TwinAudit(records=records, trajectories=replaying, skipped=skipped, notes=notes)


def _twinned(
    loaded: Mapping[str, EnvConfig], found: Mapping[str, type[Twin]]
) -> tuple[dict[str, EnvConfig], list[str]]:
    """The selection's environments that have a twin (by name, sorted), and the others.

    Raises:
        UsageError: none has a twin.
    """
    envs = {name: env for name, env in sorted(loaded.items()) if name in found}
    skipped = sorted(set(loaded) - set(envs))
    if not envs:
        raise UsageError(
            "no environment of the selection has a twin"
            + (f" (without one: {', '.join(skipped)})" if skipped else "")
        )
    return envs, skipped


def _given_kept(
    path: Path,
    read: Sequence[TwinTrajectory],
    envs: Mapping[str, EnvConfig],
    found: Mapping[str, type[Twin]],
    loaded: Mapping[str, EnvConfig],
    skipped: list[str],
    notes: list[str],
) -> tuple[list[TwinTrajectory], list[str]]:
    """The trajectories of file ``path`` to replay, and the environments skipped.

    Replayed: those of a selected environment with a twin. Skipped: ``skipped`` and the
    environments without a twin. A note in ``notes`` for each twin outside the selection.
    """
    kept: list[TwinTrajectory] = []
    for item in read:
        if item.environment in envs:
            kept.append(item)
        elif item.environment not in found:
            skipped = sorted({*skipped, item.environment})
        elif item.environment not in loaded:
            notes.append(
                f"{path} trajectory {item.name!r}: environment {item.environment} has a "
                "twin but is not in the selection"
            )
    return kept, skipped


def _records(
    run: ResolvedRun,
    envs: Mapping[str, EnvConfig],
    found: Mapping[str, type[Twin]],
    replaying: Sequence[TwinTrajectory],
    simulators: Sequence[Model],
    feedings: Sequence[Feeding],
    tolerance: float,
    concurrency: int,
) -> list[TwinFidelity]:
    """Each simulator's fidelity on the trajectories replayed, fed each way."""
    replayed = [_replay_twin(found[t.environment](envs[t.environment]), t) for t in replaying]
    records: list[TwinFidelity] = []
    for model in simulators:
        for feeding in feedings:
            steps = asyncio.run(_steps(run, envs, model, replayed, feeding, tolerance, concurrency))
            records.append(
                TwinFidelity(
                    simulator=_name(model),
                    feeding=feeding,
                    tolerance=tolerance,
                    environments=sorted({t.environment for t in replaying}),
                    steps=steps,
                )
            )
    return records


async def _steps(
    run: ResolvedRun,
    envs: Mapping[str, EnvConfig],
    model: Model,
    replayed: Sequence[_Replayed],
    feeding: Feeding,
    tolerance: float,
    concurrency: int,
) -> list[StepMatch]:
    gate = asyncio.Semaphore(max(1, concurrency))
    replay = _fed if feeding is Feeding.TWIN else _own

    async def one(item: _Replayed) -> list[StepMatch]:
        async with gate:
            env = envs[item.trajectory.environment]
            return await replay(run, env, model, item, tolerance)

    found = await asyncio.gather(*(one(item) for item in replayed))
    return [step for steps in found for step in steps]
