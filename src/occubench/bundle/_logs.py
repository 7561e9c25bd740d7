"""A bundle's logs: their records, their rows, and the scan of every member they hold."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from inspect_ai.log import read_eval_log

from occubench.archives import ArchiveRefused, zip_members
from occubench.bundle._bounds import BundleLimits
from occubench.bundle._format import (
    LOGS_DIR,
    RELEASE_DIR,
    WORLD_METADATA,
    Problem,
    ReleaseRunRecord,
    RunRecord,
    WorldRef,
)
from occubench.config import (
    CONFIG_METADATA,
    DATASET_DIGEST_METADATA,
    POINTS_METADATA,
    ProtocolPoints,
    RunConfig,
    protocol_points,
)
from occubench.errors import UsageError
from occubench.redaction import holds_secret, known_secrets
from occubench.results import (
    RELEASE_ARGS,
    RELEASE_RESULTS,
    SampleRow,
    read_release_args,
    read_release_results,
    read_runs,
    run_fields,
)
from occubench.text import nests_deeper

LOG_SUFFIX = ".eval"
"""The log format a bundle holds (Inspect's default; a JSON log converts with
``inspect log convert``)."""

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_NAME_LENGTH = 120


def member_name(index: int, file: str) -> str:
    """The path of a log in the bundle: ``logs/NNN-NAME.eval`` (a safe, unique name)."""
    stem = _UNSAFE.sub("_", Path(file).name.removesuffix(LOG_SUFFIX))[:_NAME_LENGTH]
    return f"{LOGS_DIR}/{index:03d}-{stem}{LOG_SUFFIX}"


class NotARun(UsageError):
    """A log that is not an occubench run (no resolved configuration in its metadata)."""


def _world(metadata: dict[str, Any], member: str) -> WorldRef | None:
    """The world a run answered from (its log's ``world`` metadata), if it used one."""
    found = metadata.get(WORLD_METADATA)
    if found is None:
        return None
    try:
        return WorldRef.model_validate(found)
    except ValueError:
        raise NotARun(f"{member}: its '{WORLD_METADATA}' metadata is not a world") from None


def _digest(found: Any, member: str) -> str | None:
    """The dataset digest a run recorded (a SHA-256 in hex), if it recorded one."""
    if found is None:
        return None
    if not isinstance(found, str) or not re.fullmatch(r"[0-9a-f]{64}", found):
        raise NotARun(f"{member}: its '{DATASET_DIGEST_METADATA}' metadata is not a digest")
    return found


def run_record(file: str, member: str) -> RunRecord:
    """The record of one log: its run's models, configuration, points and task set.

    Raises:
        NotARun: the log is not an occubench run's.
    """
    header = read_eval_log(file, header_only=True)
    metadata = header.eval.metadata or {}
    if CONFIG_METADATA not in metadata:
        raise NotARun(f"{member} ({file}) is not an occubench run: its log has no configuration")
    fields = run_fields(member, header)
    config = RunConfig.model_validate(metadata[CONFIG_METADATA])
    recorded = metadata.get(POINTS_METADATA)
    points = ProtocolPoints.model_validate(recorded) if recorded else protocol_points(config)
    packages = header.eval.packages or {}
    version = header.eval.task_version
    return RunRecord(
        log=member,
        eval_id=header.eval.eval_id,
        task=header.eval.task,
        agent=fields["agent_model"],
        model=header.eval.model,
        reasoning_effort=fields["reasoning_effort"],
        simulator=fields["simulator_model"],
        verifier=fields["verifier_model"],
        simulator_fallback=fields["sim_fallback_model"],
        user=fields["user_model"],
        env_mode=fields["env_mode"],
        config=config.model_dump(mode="json"),
        points=points.model_dump(mode="json"),
        dataset=header.eval.dataset.location or "",
        dataset_digest=_digest(metadata.get(DATASET_DIGEST_METADATA), member),
        sample_ids=[str(i) for i in header.eval.dataset.sample_ids or []],
        epochs=header.eval.config.epochs or 1,
        world=_world(metadata, member),
        inspect_version=packages.get("inspect_ai"),
        task_version=None if version is None else str(version),
    )


def release_members(index: int, results: str) -> tuple[str, str]:
    """Where a release run's two files go in the bundle: ``release/NNN-<run>/``."""
    run = _UNSAFE.sub("_", Path(results).parent.name)[:_NAME_LENGTH]
    folder = f"{RELEASE_DIR}/{index:03d}-{run}"
    return f"{folder}/{RELEASE_RESULTS}", f"{folder}/{RELEASE_ARGS}"


def release_record(results: Path, results_member: str, args_member: str) -> ReleaseRunRecord:
    """The record of a run of the release's harness, from its two files.

    Raises:
        UsageError: a file that is not the release's format (naming file, line and field).
    """
    args = read_release_args(results.parent / RELEASE_ARGS)
    lines = read_release_results(results)
    return ReleaseRunRecord(
        results=results_member,
        args=args_member,
        agent=args.agent_model,
        simulator=args.world_model,
        verifier=args.verifier_model,
        env_mode=args.env_mode.value,
        tasks=len(lines),
    )


def file_problems(files: Sequence[tuple[str, Path]], limits: BundleLimits) -> list[Problem]:
    """``text_problem`` of each (member, file): a release run's files, bundled or verified."""
    secrets = known_secrets()
    found = [text_problem(member, path.read_bytes(), limits, secrets) for member, path in files]
    return [p for p in found if p is not None]


def member_rows(logs: Sequence[tuple[str, str]], *, cache: bool) -> list[SampleRow]:
    """The sample rows of ``(member, file)`` logs, in that order, each named by its member.

    The bundle's summary and its verification read rows the same way, so that the same
    logs give the same numbers wherever they lie.
    """
    rows: list[SampleRow] = []
    for member, file in logs:
        rows += [r.model_copy(update={"log": member}) for r in read_runs([file], cache=cache)]
    return rows


def text_problem(
    member: str, data: bytes, limits: BundleLimits, secrets: frozenset[str]
) -> Problem | None:
    """What is wrong with one file's bytes: JSON nested too deep, or a secret in it."""
    if member.endswith(".json") and nests_deeper(data, limits.json_depth):
        return Problem(member=member, message=f"JSON nested deeper than {limits.json_depth} levels")
    if holds_secret(data.decode("utf-8", errors="surrogateescape"), secrets):
        return Problem(
            member=member,
            message="holds a secret (an API key, a password in a URL, a bearer token, or the "
            "value of a secret environment variable); redact it before it is shared",
        )
    return None


def log_problems(path: Path, member: str, limits: BundleLimits) -> Iterator[Problem]:
    """Every problem of one log: its zip refused, or a member too deep or holding a secret.

    Each member is decompressed within the log bounds before it is looked at
    (``archives.zip_members``); a refused log is one problem and ends the scan.
    """
    secrets = known_secrets()
    try:
        for name, data in zip_members(path, limits.log_bounds(), f"the log {member}"):
            problem = text_problem(f"{member}:{name}", data, limits, secrets)
            if problem is not None:
                yield problem
    except ArchiveRefused as e:
        yield Problem(member=member, message=str(e))
