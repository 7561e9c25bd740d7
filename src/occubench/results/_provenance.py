"""A world's entries held against the run logs that recorded them (``world verify --logs``).

An entry recorded by a run names its sample (``WorldEntry.recorded_in``: the log's eval
id, the sample's uuid); that sample's steps in the log hold the answer the run was given
for the entry's key. An entry whose sample is in the logs given but whose answer is not
the one there was changed after the run (its digest sealed again by hand): a
``provenance`` problem. Entries without a provenance (made by a person outside a run, or
by an older version) and entries whose sample is not in the logs given are counted, not
judged: what the check cannot see, it says it did not see.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, Field

from occubench.agent import episode_fields
from occubench.results._runs import log_files
from occubench.results._store import eval_sample_documents, local_path, log_header
from occubench.worlds import (
    ObservationSource,
    ProblemKind,
    World,
    WorldLimits,
    WorldProblem,
)


class ProvenanceCheck(BaseModel):
    """What ``check_provenance`` found."""

    logs: int = Field(description="Run logs read.")
    matched: int = Field(description="Entries whose answer is the one their run's log holds.")
    problems: list[WorldProblem] = Field(
        default_factory=list, description="Entries whose run's log holds another answer."
    )
    not_in_logs: int = Field(
        default=0,
        description="Entries naming a sample the logs given do not hold (another log, or "
        "an attempt Inspect retried): not checked.",
    )
    without_provenance: int = Field(
        default=0, description="Entries that name no run sample: not checked."
    )


def _answers(logs: Iterable[str]) -> tuple[int, dict[tuple[str, str], dict[str, set[str]]]]:
    """Per (eval id, sample uuid): the texts each world key was answered with."""
    found: dict[tuple[str, str], dict[str, set[str]]] = {}
    read = 0
    for log in logs:
        path = local_path(log)
        if path is None or not path.is_file() or not zipfile.is_zipfile(path):
            continue  # only .eval logs carry their samples' stores member by member
        eval_id = log_header(log).eval.eval_id
        read += 1
        for sample in eval_sample_documents(path, events=False, unreadable=[]):
            uuid = sample.get("uuid")
            if not isinstance(uuid, str):
                continue
            steps = episode_fields(sample.get("store") or {}, ["steps"])[0]["steps"]
            keys = found.setdefault((eval_id, uuid), {})
            for step in steps:
                live = step.source in (None, ObservationSource.SIMULATOR, ObservationSource.LIVE)
                if step.key and live and not step.failed:
                    keys.setdefault(step.key, set()).add(step.text or "")
    return read, found


def check_provenance(
    world_path: str | Path, logs: Iterable[str | Path], limits: WorldLimits | None = None
) -> ProvenanceCheck:
    """Hold each entry of a world against the run log that recorded it (module doc).

    Raises:
        UsageError: not a world, or a log that is not one.
        FileNotFoundError: a log path that is not there.
    """
    read, answers = _answers(log_files(logs))
    result = ProvenanceCheck(logs=read, matched=0)
    with World.open(world_path, writable=False, limits=limits or WorldLimits()) as world:
        for record in world.records():
            entry = record.entry
            made = entry.recorded_in
            if made is None:
                result.without_provenance += 1
                continue
            sample = answers.get((made.eval_id, made.sample_uuid))
            if sample is None:
                result.not_in_logs += 1
                continue
            if entry.text in sample.get(entry.key, set()):
                result.matched += 1
                continue
            held = "another answer" if entry.key in sample else "no answer"
            result.problems.append(
                WorldProblem(
                    kind=ProblemKind.PROVENANCE,
                    file=record.file,
                    line=record.line,
                    detail=f"key {entry.key[:16]}...: the run that recorded it (eval "
                    f"{made.eval_id}, task {made.sample_id}, epoch {made.epoch}) holds "
                    f"{held} for it: the entry was changed after the run",
                )
            )
    return result
