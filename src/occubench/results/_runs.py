"""Read Inspect logs of occubench runs into one tidy row per sample."""

from __future__ import annotations

import hashlib
import json
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, list_eval_logs
from inspect_ai.model import ModelUsage
from inspect_ai.scorer import CORRECT

from occubench.agent import StopReason, episode_fields
from occubench.config import (
    CONFIG_METADATA,
    POINTS_METADATA,
    ProtocolPoints,
    RunConfig,
    protocol_points,
)
from occubench.errors import ErrorSource, UsageError, error_source
from occubench.grading import REGRADE_METADATA, SCORER_NAME, Grade, Regrade
from occubench.providers import PROVIDER_PACKAGES
from occubench.results._release import is_release_results, read_release_rows, release_results
from occubench.results._row import SampleRow, WireTokens
from occubench.results._store import (
    cached_rows,
    eval_sample_documents,
    local_path,
    log_header,
    log_samples,
)
from occubench.roles import Role
from occubench.serving import served_calls
from occubench.simulator import SimStep
from occubench.users import UserTurn
from occubench.worlds import ObservationSource

TRAJECTORY_DIGEST = 12
"""Hex digits of each digest of a trajectory: collisions within one task are negligible."""

UNREAD_FIELDS = {"events", "messages", "attachments"}
"""Sample fields a row does not need: skipping them makes reading a log ~3x cheaper."""
EPISODE_FIELDS = (
    "stop_reason",
    "agent_error",
    "tool_calls",
    "fault_log",
    "steps",
    "sim_checked",
    "simulator_suspect",
    "user_turns",
)
"""The episode fields a row reads (``episode_fields``: each on its own, without validating
the rest of the episode; Inspect's store models build a validator per field on every
read, which cost more than parsing the sample)."""


ROW_FIELDS = {"id", "epoch", "metadata", "scores", "error", "store"}
ROW_FIELDS |= {"role_usage", "model_usage", "total_time"}
"""Sample fields a row is made of."""


def log_files(paths: Iterable[str | Path]) -> list[str]:
    """Every Inspect log under the given files or folders (sorted, no duplicates).

    The results of the release's harness (a ``results.jsonl`` with its ``args.json``) are
    listed too: ``read_runs`` reads them as runs of that harness.
    """
    found: list[str] = []
    for path in paths:
        if "://" in str(path):  # an Inspect log location (file:// or a remote store)
            found.append(str(path))
            continue
        p = Path(path)
        if p.is_dir():
            # a local log by its path, as a file given by name is (Inspect lists file:// URLs)
            listed = (info.name for info in list_eval_logs(str(p), recursive=True))
            found += [str(local_path(name) or name) for name in listed]
            found += [str(results) for results in release_results(p)]
        elif p.is_file():
            found.append(str(p))
        else:
            raise FileNotFoundError(f"no log file or folder at {p}")
    return sorted(dict.fromkeys(found))


def some_log_files(paths: Sequence[str | Path]) -> list[str]:
    """``log_files`` of ``paths``, at least one.

    Raises:
        UsageError: no log under the paths.
        FileNotFoundError: a path that is neither a file nor a folder.
    """
    found = log_files(paths)
    if not found:
        raise UsageError(f"no logs in {', '.join(map(str, paths))}")
    return found


def _role_model(log: EvalLog, role: Role) -> str | None:
    roles = log.eval.model_roles or {}
    config = roles.get(role.value)
    if isinstance(config, list):  # a role bound to several models (Inspect allows it)
        return ",".join(c.model for c in config)
    return config.model if config is not None else None


def _usage(values: Mapping[str, Any] | None) -> dict[str, ModelUsage]:
    """Usage by model or role, from a sample's JSON (or its model objects)."""
    return {
        name: u if isinstance(u, ModelUsage) else ModelUsage.model_validate(u)
        for name, u in (values or {}).items()
    }


def _by_role(
    role_usage: dict[str, ModelUsage], total: dict[str, ModelUsage]
) -> dict[str, ModelUsage]:
    roles = dict(role_usage)
    agent = ModelUsage()
    for usage in total.values():
        agent = agent + usage
    for usage in role_usage.values():
        agent = ModelUsage(
            input_tokens=agent.input_tokens - usage.input_tokens,
            output_tokens=agent.output_tokens - usage.output_tokens,
            total_tokens=agent.total_tokens - usage.total_tokens,
            input_tokens_cache_read=(agent.input_tokens_cache_read or 0)
            - (usage.input_tokens_cache_read or 0),
            input_tokens_cache_write=(agent.input_tokens_cache_write or 0)
            - (usage.input_tokens_cache_write or 0),
        )
    roles[Role.AGENT.value] = agent
    return roles


def run_fields(file: str, header: EvalLog) -> dict[str, Any]:
    """The fields every row of one log shares (its run: models and settings)."""
    metadata = header.eval.metadata or {}
    config = RunConfig.model_validate(metadata.get(CONFIG_METADATA, {}))
    recorded = metadata.get(POINTS_METADATA)
    points = ProtocolPoints.model_validate(recorded) if recorded else protocol_points(config)
    regraded = metadata.get(REGRADE_METADATA)
    regrade = Regrade.model_validate(regraded) if regraded else None
    return {
        "log": file,
        "run_id": header.eval.eval_id,
        "agent_model": config.agent_label(header.eval.model),
        "agent_model_name": header.eval.model,
        "reasoning_effort": header.eval.model_generate_config.reasoning_effort,
        "reasoning_tokens": header.eval.model_generate_config.reasoning_tokens,
        "simulator_model": _role_model(header, Role.SIMULATOR),
        "verifier_model": _role_model(header, Role.VERIFIER),
        "user_model": _role_model(header, Role.USER),
        "regraded_from": regrade.source if regrade else None,
        "regraded_from_run": regrade.source_eval_id if regrade else None,
        "env_mode": config.env_mode,
        "fault_count": config.fault_count,
        "fault_duration": config.fault_duration,
        "fault_engine": points.fault_engine,
        "protocol": config.protocol,
        "errors_count_as_failures": points.errors_count_as_failures,
        "seed": config.seed,
        "simulator_seed": config.simulator_seed,
        "sim_fallback_model": _role_model(header, Role.SIMULATOR_FALLBACK),
        "world": config.world,
    }


def sample_row(run: Mapping[str, Any], sample: Mapping[str, Any]) -> SampleRow:
    """The row of one sample, from its JSON as logged (``EvalSample`` fields) and its run."""
    md = sample.get("metadata") or {}
    score = (sample.get("scores") or {}).get(SCORER_NAME)
    error = sample.get("error")
    grade = None
    episode, unread = episode_fields(sample.get("store") or {}, EPISODE_FIELDS)
    wires, unread_calls = _wire_tokens(sample.get("store") or {})
    unread += unread_calls
    if score is not None and error is None:
        read = Grade.read(score.get("metadata"), passed=score.get("value") == CORRECT)
        if isinstance(read, str):  # the verdict cannot be read: the sample is not scored
            unread.append(f"score: {read}")
            error = {"message": f"{read}; the sample is not scored"}
        else:
            grade = read
    usage = _by_role(_usage(sample.get("role_usage")), _usage(sample.get("model_usage")))
    return SampleRow(
        **run,
        epoch=sample["epoch"],
        task_id=sample["id"],
        scenario=str(md.get("scenario", "")),
        industry=str(md.get("industry", "")),
        domain=str(md.get("domain", "")),
        difficulty=int(md.get("difficulty", 0)),
        passed=None if grade is None else grade.passed,
        votes_yes=None if grade is None else grade.votes_yes,
        votes_total=None if grade is None or grade.votes is None else len(grade.votes),
        checks_passed=None if grade is None else grade.checks_passed,
        checks_total=None if grade is None or grade.checks is None else len(grade.checks),
        error=error["message"] if error else None,
        error_source=error_source(error.get("traceback") or "", PROVIDER_PACKAGES)
        if error
        else None,
        stop_reason=episode["stop_reason"],
        agent_error=episode["agent_error"],
        tool_calls=episode["tool_calls"],
        faults=episode["fault_log"],
        agent_wires=wires,
        tokens={r: u.total_tokens for r, u in usage.items()},
        input_tokens={r: u.input_tokens for r, u in usage.items()},
        output_tokens={r: u.output_tokens for r, u in usage.items()},
        input_tokens_cache_read={r: u.input_tokens_cache_read or 0 for r, u in usage.items()},
        input_tokens_cache_write={r: u.input_tokens_cache_write or 0 for r, u in usage.items()},
        wall_time=sample.get("total_time"),
        env_name=str(md.get("env_name", "")),
        exploit_suspected=None if grade is None else grade.exploit_suspected,
        simulator_off_contract=None if grade is None else grade.simulator_off_contract,
        exploit_zeroed=False if grade is None else grade.exploit_zeroed,
        exploit_evidence=[] if grade is None else grade.exploit_evidence,
        sim_checked=episode["sim_checked"],
        simulator_suspect=episode["simulator_suspect"],
        sim_check_failures=_check_failures(episode["steps"]),
        **user_counts(episode["user_turns"], episode["stop_reason"]),
        **_sources(episode["steps"]),
        trajectory=trajectory_digests(episode["steps"], score.get("answer") if score else None),
        unread=unread,
    )


def user_counts(turns: list[UserTurn] | None, stop: StopReason | None) -> dict[str, Any]:
    """A row's user fields from the episode's user turns (all None: the task has no user)."""
    if turns is None:
        return {"user_turns": None, "user_errors": None, "user_ended": None}
    return {
        "user_turns": len(turns),
        "user_errors": sum(1 for t in turns if t.problems),
        "user_ended": stop is StopReason.USER_ENDED,
    }


def _wire_tokens(store: Mapping[str, Any]) -> tuple[list[WireTokens], list[str]]:
    """An agent program's bridged generations summed by wire, and what could not be read.

    The records are ``served_calls``'s; the sums come in the wires' order.
    """
    calls, unread = served_calls(store)
    by_wire: dict[str, WireTokens] = {}
    for call in calls:
        wire = call.wire.value
        sum_ = by_wire.setdefault(
            wire, WireTokens(wire=wire, calls=0, streamed=0, input_tokens=0, output_tokens=0)
        )
        sum_.calls += 1
        sum_.streamed += call.streamed
        sum_.input_tokens += call.input_tokens
        sum_.output_tokens += call.output_tokens
    return [by_wire[w] for w in sorted(by_wire)], unread


def unreadable_row(run: Mapping[str, Any], member: str, why: str) -> SampleRow:
    """The row of a sample whose record in the log cannot be read at all: not scored.

    Its id and epoch are those of its member's name (``samples/<id>_epoch_<n>.json``);
    the rest of the log is read as usual.
    """
    stem = member.removeprefix("samples/").removesuffix(".json")
    sample_id, _, epoch = stem.rpartition("_epoch_")
    return SampleRow(
        **run,
        epoch=int(epoch) if epoch.isdigit() else 0,
        task_id=int(sample_id) if sample_id.isdigit() else sample_id or stem,
        scenario="",
        industry="",
        domain="",
        difficulty=0,
        passed=None,
        error=f"its record in the log cannot be read ({member}: {why})",
        error_source=ErrorSource.HARNESS,
        stop_reason=None,
        tool_calls=0,
        wall_time=None,
        unread=[f"{member}: {why}"],
    )


def unread_lines(rows: Iterable[SampleRow], most: int = 5) -> list[str]:
    """What a reading of the logs left out: a count, then the first records named."""
    unread = [(row, what) for row in rows for what in row.unread]
    if not unread:
        return []
    samples = len({row.sample_key for row, _ in unread})
    lines = [
        f"{len(unread)} record(s) of {samples} sample(s) could not be read and were left out "
        "(the rest of each sample and every other sample are reported):"
    ]
    lines += [
        f"  {row.log} sample {row.task_id} epoch {row.epoch}: {what}" for row, what in unread[:most]
    ]
    if len(unread) > most:
        lines.append(f"  ... and {len(unread) - most} more (the rows' 'unread' column)")
    return lines


def agent_error_lines(rows: Iterable[SampleRow]) -> list[str]:
    """Samples graded after an agent API error ended their loop: how many, and the first."""
    ended = [r for r in rows if r.agent_error is not None and r.passed is not None]
    if not ended:
        return []
    failed = sum(r.passed is False for r in ended)
    text = ended[0].agent_error or ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    first = lines[-1] if lines else text  # the cause (Inspect's error quotes the request first)
    first = first if len(first) <= 300 else first[:297] + "..."
    return [
        f"{len(ended)} sample(s) ended on an agent API error and were graded as they stood "
        f"(the paper protocol's counting; {failed} of them failed): the completion rate may "
        f"measure the endpoint, not the agent. The first: {first}"
    ]


def in_dataset_order(header: EvalLog, rows: Iterable[SampleRow]) -> list[SampleRow]:
    """Rows in the order Inspect's reader gives a log's samples: dataset order, then epoch.

    As Inspect's reader, only the samples of the header's dataset and epochs; a header
    without sample ids (an old log) keeps the order of the file. Takes rows, not the
    samples' JSON, so that one sample at a time is held while a log is read.
    """
    ids = header.eval.dataset.sample_ids
    if ids is None:
        return list(rows)
    epochs = header.eval.config.epochs or 1
    position = {
        (str(i), e): n for n, (i, e) in enumerate((i, e) for i in ids for e in range(1, epochs + 1))
    }
    found = {(str(r.task_id), r.epoch): r for r in rows}
    return [found[key] for key in sorted(found.keys() & position.keys(), key=position.__getitem__)]


def read_log_rows(file: str) -> list[SampleRow]:
    """Rows for every sample of one log, read from the log itself (no cache).

    A local ``.eval`` file is read member by member (each sample's JSON parsed once,
    events and messages included, but never validated as a whole ``EvalSample``);
    any other log goes through Inspect's sample reader, without events and messages.
    """
    header = log_header(file)
    run = run_fields(file, header)
    path = local_path(file)
    if path is not None and path.is_file() and zipfile.is_zipfile(path):
        unreadable: list[tuple[str, str]] = []
        documents = eval_sample_documents(path, events=False, unreadable=unreadable)
        rows = [sample_row(run, doc) for doc in documents]
        rows += [unreadable_row(run, member, why) for member, why in unreadable]
        return in_dataset_order(header, rows)
    return [
        sample_row(run, sample.model_dump(include=ROW_FIELDS))
        for sample in log_samples(file, exclude_fields=UNREAD_FIELDS)
    ]


def read_runs(paths: Iterable[str | Path], *, cache: bool = True) -> list[SampleRow]:
    """Rows for every sample of every occubench log under ``paths``.

    Args:
        paths: Log files or folders (searched recursively).
        cache: Read and keep each local log's rows in its table beside it (the
            results store, ``results._store``); False reads every log afresh.
    """
    rows: list[SampleRow] = []
    for file in log_files(paths):
        read = read_release_rows if is_release_results(Path(file)) else read_log_rows
        rows += cached_rows(file, read) if cache else read(file)
    return rows


def _digest(value: Any) -> str:
    """A short digest of a JSON value (its canonical text)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:TRAJECTORY_DIGEST]


def trajectory_digests(steps: list[SimStep], answer: str | None) -> list[str]:
    """A sample's trajectory as digests (``SampleRow.trajectory``).

    Each step is the agent's action (tool and arguments) and the environment's answer as
    the simulator gave it (the clean observation, or the error of a failed call: an
    implicit fault's degraded copy follows from the fault plan, the same for every epoch);
    the final answer closes it when the sample was graded.
    """
    out = []
    for step in steps:
        out.append(f"a:{_digest([step.tool, step.arguments])}")
        answered = step.observation if step.observation is not None else step.text
        out.append(f"o:{_digest([answered, step.failed])}")
    if answer is not None:
        out.append(f"f:{_digest(answer)}")
    return out


def _check_failures(steps: list[SimStep]) -> dict[str, int]:
    """Observations whose first answer failed each kind of online check (``SimStep.check``)."""
    counts: dict[str, int] = {}
    for step in steps:
        for failure in step.check.failures if step.check is not None else []:
            counts[failure.kind.value] = counts.get(failure.kind.value, 0) + 1
    return counts


def _sources(steps: list[SimStep]) -> dict[str, Any]:
    """Where the observations came from (``SimStep.source``), and their world keys.

    A step without a source is the simulator's (a log from before worlds), unless it
    failed before reaching it.
    """
    counts = dict.fromkeys(ObservationSource, 0)
    keys = []
    for step in steps:
        if step.failed:
            continue
        counts[step.source or ObservationSource.SIMULATOR] += 1
        if step.key:
            keys.append(step.key)
    return {
        "world_hits": counts[ObservationSource.WORLD],
        "simulator_calls": counts[ObservationSource.SIMULATOR],
        "live_calls": counts[ObservationSource.LIVE],
        "world_keys": keys,
    }
