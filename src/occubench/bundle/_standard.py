"""Standard or custom: a bundle measured as the benchmark is defined, or how it departs.

A bundle is *standard* when every run in it follows the benchmark as the paper ran it,
by the code's own defaults:

- the ``paper`` protocol, every protocol point at its preset (``config.PRESETS``);
- on the public release: a dataset whose digest (``content_digest``) is the pinned
  release's (``dataset.PUBLIC_RELEASE``), every one of its tasks run
  (``RELEASE_TASKS``);
- the default simulator and verifier settings: the run configuration's settings at their
  defaults (``STANDARD_SETTINGS``: k = 3 verifier votes, history state, the fixed date, no
  plan given to the agent, the default fault count and duration, no extra fault
  family, no simulator seed), no fallback simulator, no recorded world, and the built-in
  agent loop (an Inspect agent or an agent program is not the paper's harness);
- the simulated user: a run whose samples talked to a user (their tasks have a ``user``
  brief) used the standard's user model (``Standard.user_model``) at the default turn
  budget (the ``user_turns`` setting unset). The benchmark's standard names no user
  model: the release's tasks have no user, so a standard run talks to none, and a run
  that talked to one, with any model, is custom. Tasks without a user need none: a run
  that bound a user model its tasks never called departs in nothing (where the samples
  are not known, as for ``departures`` without ``talked``, a bound model counts as
  used). A different user model makes a different measurement, so results made with one
  are never ranked with the standard ones (``analysis.comparable_groups`` keeps them
  apart too).

What a run is free to choose: the agent model and its reasoning effort (the subject of
the measurement), the simulator and verifier models (compared apart on the leaderboard),
the env mode, the fault seed, epochs, response caching and the release's own prompt
wording (``prompts_from``). Anything else makes the bundle *custom*, and each departure
is listed.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from occubench.bundle._format import DatasetRecord, ReleaseRunRecord, RunRecord
from occubench.config import PRESETS, ProtocolPoints, RunConfig
from occubench.dataset import PUBLIC_RELEASE
from occubench.protocols import Protocol

RELEASE_TASKS = 382
"""Tasks of the pinned public release (its ``eval_benchmark_solvable.jsonl``)."""

STANDARD_SETTINGS = (
    "fault_count",
    "fault_duration",
    "faults",
    "with_plan",
    "state_mode",
    "votes",
    "date",
    "agent",
    "agent_args",
    "agent_command",
    "simulator_seed",
    "simulator_seed_by_epoch",
)
"""Run configuration fields a standard run leaves at their defaults (after ``normalized``:
fault settings count only where faults are injected)."""


class Standard(BaseModel):
    """What makes a bundle standard (module doc); the defaults are the benchmark's."""

    model_config = ConfigDict(frozen=True)

    protocol: Protocol = Field(default=Protocol.PAPER, description="The protocol.")
    points: ProtocolPoints = Field(
        default=PRESETS[Protocol.PAPER], description="Every protocol point's value."
    )
    dataset_digest: str = Field(
        default=PUBLIC_RELEASE.content_sha256 or "",
        description="The digest of the public release's data files (the pinned revision).",
    )
    release_tasks: int = Field(default=RELEASE_TASKS, description="Tasks of that release.")
    user_model: str | None = Field(
        default=None,
        description="The user model runs whose tasks have a user talk to (None: none; the "
        "release's tasks have no user, so a run that talked to one is custom).",
    )


STANDARD = Standard()
"""The benchmark as the paper ran it, by the code's defaults."""


def _shown(value: Any) -> str:
    if isinstance(value, list) and not value:
        return "none"
    return "unset" if value is None else str(value)


def user_departures(run: RunRecord, standard: Standard, talked: bool) -> list[str]:
    """How one run departs from ``standard`` in its simulated user (module doc).

    Args:
        run: The run's record.
        standard: The standard.
        talked: Whether some sample of the run talked to a simulated user.
    """
    if not talked:
        return []
    out = []
    if run.user != standard.user_model:
        wanted = standard.user_model or "none: the release's tasks have no user"
        out.append(f"user model {_shown(run.user)} (standard: {wanted})")
    budget = RunConfig.model_validate(run.config).user_turns
    if budget is not None:
        out.append(f"setting user_turns = {budget} (default: unset)")
    return out


def run_departures(run: RunRecord, standard: Standard, talked: bool | None = None) -> list[str]:
    """How one run departs from ``standard`` in its protocol, settings and user.

    ``talked``: whether some sample of the run talked to a simulated user (None: not known;
    the run talked to one if it bound a user model).
    """
    out = []
    config = RunConfig.model_validate(run.config)
    wanted = standard.points.model_dump(mode="json")
    differing = [name for name, value in run.points.items() if wanted.get(name) != value]
    if config.protocol != standard.protocol:
        out.append(
            f"protocol {config.protocol.value} (standard: {standard.protocol.value}); its "
            f"points differ from the {standard.protocol.value} protocol's in "
            f"{', '.join(differing) or 'none'}"
        )
    else:
        out += [
            f"protocol point {name} = {_shown(run.points[name])} "
            f"({standard.protocol.value}: {_shown(wanted.get(name))})"
            for name in differing
        ]
    mine = config.normalized().model_dump(mode="json")
    default = (
        RunConfig(protocol=standard.protocol, env_mode=config.env_mode)
        .normalized()
        .model_dump(mode="json")
    )
    for name in STANDARD_SETTINGS:
        if mine[name] != default[name]:
            out.append(f"setting {name} = {_shown(mine[name])} (default: {_shown(default[name])})")
    if run.simulator_fallback:
        out.append(f"a fallback simulator ({run.simulator_fallback}) re-asked after failed checks")
    if run.world is not None:
        out.append(
            f"simulator answers from a recorded world (digest {run.world.digest[:12]}, "
            f"{run.world.mode})"
        )
    return out + user_departures(run, standard, run.user is not None if talked is None else talked)


def run_key(run: RunRecord) -> str:
    """What makes logs one run: the agent, models and configuration, all but the task ids.

    A sharded run's logs each hold a slice of its tasks.
    """
    config = {k: v for k, v in run.config.items() if k != "task_ids"}
    models = (run.agent, run.simulator, run.verifier, run.user)
    return repr((*models, run.dataset, sorted(config.items())))


def task_sets(runs: Sequence[RunRecord]) -> list[set[str]]:
    """The task set of each run: the sample ids of all its logs (its shards)."""
    found: dict[str, set[str]] = {}
    for run in runs:
        found.setdefault(run_key(run), set()).update(run.sample_ids)
    return list(found.values())


def dataset_departures(
    runs: Sequence[RunRecord], dataset: DatasetRecord, standard: Standard
) -> list[str]:
    """How the runs on one dataset depart from the public release and its full task set."""
    if dataset.digest is None:
        return [f"dataset {dataset.name}: its digest is unknown ({dataset.note or 'not found'})"]
    out = []
    if dataset.digest != standard.dataset_digest:
        out.append(
            f"dataset {dataset.name} (digest {dataset.digest[:12]}) is not the pinned public "
            f"release (digest {standard.dataset_digest[:12]})"
        )
    every = set(dataset.task_ids or [])
    short: dict[int, int] = {}
    for ran in task_sets(runs):
        if len(every) != standard.release_tasks or ran != every:
            short[len(ran)] = short.get(len(ran), 0) + 1
    for count, how_many in sorted(short.items()):
        out.append(
            f"task set: {count} of the release's {standard.release_tasks} tasks "
            f"({how_many} run{'s' if how_many > 1 else ''})"
        )
    return out


def departures(
    runs: Sequence[RunRecord],
    datasets: Sequence[DatasetRecord],
    standard: Standard = STANDARD,
    release_runs: Sequence[ReleaseRunRecord] = (),
    talked: Collection[str] | None = None,
) -> list[str]:
    """Every way the bundle's runs depart from ``standard`` (empty: it is standard), once each.

    A run of the release's own harness always departs: its checks, votes, tokens and seed
    are not recorded. ``talked`` names the logs some sample of which talked to a simulated
    user (``verify`` reads them from the samples); without it, a run that bound a user
    model counts as one that talked to it.
    """
    found: list[str] = []
    for run in runs:
        found += run_departures(run, standard, None if talked is None else run.log in talked)
    found += [
        f"a run of the release's own harness ({r.agent} @ {r.simulator} {r.env_mode}, "
        f"{r.tasks} tasks): its checks, votes, tokens and seed are not recorded"
        for r in release_runs
    ]
    for dataset in datasets:
        found += dataset_departures(
            [r for r in runs if r.dataset == dataset.location], dataset, standard
        )
    return list(dict.fromkeys(found))
