"""Grade recorded trajectories again, without running them (``occubench regrade``).

Each log's samples are scored again by Inspect's own re-scoring (``inspect_ai.score``)
with the occubench scorer, its ``verifier`` role bound to the judge given: another model,
another k, another protocol's verifier layout, or a rubric corrected in a newer copy of
the dataset. Nothing else is asked: the agent's and the simulator's turns are read from
the log as they were recorded, and the re-scoring is given the judge alone (no model of
the log's header is built).

The new log is an ordinary ``.eval`` log (``inspect view`` opens it, ``occubench report``
reads it), written to another folder: the source's samples and settings, with the new
scores (each judge call in the scorers' span of its sample's events), the ``verifier``
role bound to the judge (a report's rows name it), a ``Regrade`` record in its metadata
(``REGRADE_METADATA``: the log it regraded, the judge, k, the layout, the rubric), token
usage with the old judging's calls taken out and the new ones added (per model and role),
and its own eval id. Its secrets are redacted as a run's logs are (``occubench.redaction``).

Which samples are graded: a sample that errored before it was graded (a provider, the
simulator, the agent program) is kept as it is; one whose judging failed (then or now) is
graded. A judge that fails now makes the sample an infrastructure error of source
``verifier``, never a failed task.
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from inspect_ai import score
from inspect_ai.event import ModelEvent, SpanBeginEvent
from inspect_ai.log import (
    EvalError,
    EvalLog,
    EvalSample,
    EvalStats,
    read_eval_log,
    recompute_metrics,
    write_eval_log,
)
from inspect_ai.model import Model, ModelConfig, ModelUsage
from inspect_ai.scorer import CORRECT
from pydantic import BaseModel, Field, ValidationError

from occubench.agent import episode_in
from occubench.calls import named_model, resilient
from occubench.dataset import Dataset, EnvConfig, TaskRecord, load_dataset
from occubench.defaults import (
    DEFAULT_MAX_REGRADE_LOG_BYTES,
    DEFAULT_VERIFIER_VOTES,
)
from occubench.errors import ErrorSource, UsageError, error_source
from occubench.grading._checks import needs_state
from occubench.grading._grade import SCORER_NAME
from occubench.grading._scorer import VERIFIER_FAILED, occubench_scorer
from occubench.guard import DEFAULT_GUARD, ExploitGuard
from occubench.protocols import MessageStyle
from occubench.providers import PROVIDER_PACKAGES
from occubench.redaction import (
    model_secrets,
    redact_eval_file,
    redact_log_records,
    redact_settings,
    register_secrets,
)
from occubench.roles import Role

REGRADE_METADATA = "regrade"
"""Key of the ``Regrade`` record in a regraded log's metadata (``log.eval.metadata``)."""
SCORING_SPAN = "scorers"
"""Name of the span Inspect runs a sample's scorers in (its judge calls are inside)."""


class VerifierLayout(BaseModel):
    """How the judge is asked: one protocol's verifier points (``ProtocolPoints``)."""

    style: MessageStyle = Field(description="The judge's request and how its verdict is read.")
    max_tokens: int | None = Field(
        default=None, ge=1, description="max_tokens of each judge call (None: not set)."
    )


class Regrade(BaseModel):
    """What a regraded log records of its grading (``metadata["regrade"]``)."""

    source: str = Field(description="The log that was regraded (its path).")
    source_eval_id: str = Field(description="That log's eval id.")
    source_verifier: str | None = Field(
        description="The verifier that graded it (None: none was bound; the checks or the "
        "simulator judged)."
    )
    verifier: str = Field(description="The judge of this grading.")
    votes: int = Field(description="k, judge calls per sample.")
    style: MessageStyle = Field(description="The judge's layout (the protocol's).")
    max_tokens: int | None = Field(description="max_tokens of each judge call (None: not set).")
    dataset: str | None = Field(
        description="Dataset the rubrics and checks were taken from (None: the log's own)."
    )
    created: str = Field(description="When the log was regraded (ISO 8601, UTC).")


class RegradedLog(BaseModel):
    """What regrading one log gave."""

    source: str = Field(description="The log that was regraded.")
    log: str = Field(description="The new log.")
    verifier: str = Field(description="The judge of the new grading.")
    samples: int = Field(description="Samples in the log.")
    graded: int = Field(description="Samples graded again.")
    kept_errors: int = Field(
        description="Samples that errored before they were graded, kept as they were."
    )
    verifier_errors: int = Field(
        description="Samples whose judge failed now: infrastructure errors, not scored."
    )
    passed_before: int = Field(description="Samples that passed before.")
    passed_after: int = Field(description="Samples that pass now.")


def local_log(location: str | Path) -> Path:
    """The file a log location names (a path or a ``file://`` URL).

    Raises:
        UsageError: a remote log (regrading reads local files).
    """
    text = str(location)
    if "://" not in text:
        return Path(text)
    url = urlparse(text)
    if url.scheme != "file":
        raise UsageError(f"{text}: regrade reads local logs only; copy it here first")
    return Path(unquote(url.path))


def unpacked_bytes(path: Path) -> int:
    """The bytes a log unpacks to: its members' sizes for an ``.eval`` (zip), else its size."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            return sum(info.file_size for info in archive.infolist())
    return path.stat().st_size


def read_source(path: Path, *, max_bytes: int, header_only: bool = False) -> EvalLog:
    """One log to regrade, read whole (or its header), after its size is checked.

    Raises:
        UsageError: the file is missing, unpacks past ``max_bytes``, cannot be read as an
            Inspect log, or is not a log of the occubench task (no ``occubench_scorer``).
    """
    try:
        size = unpacked_bytes(path)
    except (OSError, zipfile.BadZipFile) as e:
        raise UsageError(f"{path}: cannot be read ({e})") from None
    if size > max_bytes:
        raise UsageError(
            f"{path}: unpacks to {size} bytes, over the {max_bytes} a log may hold to be regraded"
        )
    try:
        log = read_eval_log(str(path), header_only=header_only)
    except Exception as e:  # any reason a file is not a log: one line naming it
        reason = str(e).splitlines()[0][:200] if str(e) else ""
        raise UsageError(
            f"{path}: not a readable Inspect log ({type(e).__name__}: {reason})"
        ) from None
    recorded_scorer(log, path)
    return log


def recorded_scorer(log: EvalLog, path: Path) -> dict[str, Any]:
    """The arguments the log's ``occubench_scorer`` was run with (its layout, k, template).

    Raises:
        UsageError: the log has no ``occubench_scorer`` (not a log of the occubench task).
    """
    for spec in log.eval.scorers or []:
        if spec.name.rpartition("/")[2] == SCORER_NAME:
            return dict(spec.options or {})
    raise UsageError(f"{path}: not a log of the occubench task (it has no {SCORER_NAME})")


def judging_failed(error: EvalError | None) -> bool:
    """Whether a sample's error came from its judge (so the trajectory is whole)."""
    return (
        error is not None
        and error_source(error.traceback, PROVIDER_PACKAGES) is ErrorSource.VERIFIER
    )


def _passed(sample: EvalSample) -> bool:
    found = (sample.scores or {}).get(SCORER_NAME)
    return sample.error is None and found is not None and found.value == CORRECT


def _check_rubric(header: EvalLog, path: Path, rubric: Dataset) -> None:
    """Refuse a log with a task the dataset lacks (from the header: nothing graded yet)."""
    have = {t.task_id for t in rubric.tasks}
    missing = [i for i in header.eval.dataset.sample_ids or [] if _task_id(i) not in have]
    if missing:
        shown = ", ".join(str(i) for i in missing[:10]) + (", ..." if len(missing) > 10 else "")
        raise UsageError(f"{path}: task(s) {shown} are not in the dataset {rubric.root}")


def _task_id(value: int | str) -> int | None:
    try:
        return int(value)
    except ValueError:
        return None


def sample_task(sample: EvalSample, path: Path) -> TaskRecord:
    """The task record a sample carries, its env config checked too (what the scorer reads).

    Raises:
        UsageError: either is missing or malformed.
    """
    metadata = sample.metadata or {}
    try:
        EnvConfig.model_validate(metadata["env"])
        return TaskRecord.model_validate(metadata["task"])
    except (KeyError, ValidationError) as e:
        problem = f"no {e}" if isinstance(e, KeyError) else f"{e.error_count()} problem(s)"
        raise UsageError(
            f"{path}: sample {sample.id} (epoch {sample.epoch}) has no readable task record "
            f"and env config ({problem})"
        ) from None


def _use_rubric(
    sample: EvalSample, old: TaskRecord, path: Path, rubric: dict[int, TaskRecord], root: Path
) -> None:
    """Give a sample the newer dataset's rubric and checks (the rest as it ran).

    Raises:
        UsageError: the task is not in the dataset, runs in another environment there,
            or its checks read a final state the log did not keep.
    """
    new = rubric.get(old.task_id)
    if new is None:
        raise UsageError(f"{path}: task {old.task_id} is not in the dataset {root}")
    if new.env_name != old.env_name:
        raise UsageError(
            f"{path}: task {old.task_id} ran in {old.env_name}; in {root} it is in "
            f"{new.env_name}: not the same task"
        )
    if needs_state(new.checks) and episode_in(sample.store).state is None:
        raise UsageError(
            f"{path}: task {old.task_id}'s checks in {root} read the final state, which this "
            "run did not keep (state_mode=explicit keeps it)"
        )
    updated = old.model_copy(
        update={"verification_plan": new.verification_plan, "checks": new.checks}
    )
    sample.metadata["task"] = updated.model_dump(mode="json", exclude_none=True)
    sample.target = new.verification_plan


def _scoring_spans(events: Sequence[Any]) -> set[str]:
    """Ids of the scorers' spans and every span inside them."""
    parents = {e.id: e.parent_id for e in events if isinstance(e, SpanBeginEvent)}
    roots = {
        e.id for e in events if isinstance(e, SpanBeginEvent) and SCORING_SPAN in (e.name, e.type)
    }
    inside = set()
    for span in parents:
        seen: set[str] = set()
        at: str | None = span
        while at is not None and at not in seen:  # a cycle in a hostile log ends the walk
            if at in roots:
                inside.add(span)
                break
            seen.add(at)
            at = parents.get(at)
    return inside


def scoring_usage(sample: EvalSample) -> list[tuple[str, str | None, ModelUsage]]:
    """(model, role, usage) of every model call made while the sample was scored."""
    spans = _scoring_spans(sample.events)
    return [
        (e.model, e.role, e.output.usage)
        for e in sample.events
        if isinstance(e, ModelEvent) and e.output.usage is not None and e.span_id in spans
    ]


def _plus(total: ModelUsage | None, usage: ModelUsage, sign: int) -> ModelUsage:
    """``total`` with ``usage`` added (sign 1) or taken out (sign -1), field by field."""
    values: dict[str, Any] = {}
    for name in ModelUsage.model_fields:
        a, b = getattr(total, name, None) if total else None, getattr(usage, name)
        values[name] = None if a is None and b is None else (a or 0) + sign * (b or 0)
    return ModelUsage(**values)


def _move(table: dict[str, ModelUsage], key: str | None, usage: ModelUsage, sign: int) -> None:
    if key is None:
        return
    moved = _plus(table.get(key), usage, sign)
    if any(getattr(moved, name) for name in ModelUsage.model_fields):
        table[key] = moved
    else:
        table.pop(key, None)  # a judge whose every call was taken out


def swap_usage(
    sample: EvalSample,
    old: Iterable[tuple[str, str | None, ModelUsage]],
    new: Iterable[tuple[str, str | None, ModelUsage]],
    stats: EvalStats,
) -> None:
    """Take the old judging's usage out of a sample's (and the log's) and add the new."""
    for calls, sign in ((old, -1), (new, 1)):
        for model, role, usage in calls:
            for models, roles in (
                (sample.model_usage, sample.role_usage),
                (stats.model_usage, stats.role_usage),
            ):
                _move(models, model, usage, sign)
                _move(roles, role, usage, sign)


def judge_config(judge: Model) -> ModelConfig:
    """The judge as a log's model role records it (secret settings redacted)."""
    return ModelConfig(
        model=str(judge),
        config=judge.config,
        base_url=judge.api.base_url,
        args=redact_settings({k: v for k, v in judge.model_args.items() if k != "api_key"}),
    )


def _digest(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def _write(log: EvalLog, path: Path) -> None:
    """Write the log as an ``.eval`` file, redacted before it takes its name."""
    partial = path.with_name(f".{path.name}.writing")
    write_eval_log(log, str(partial), format="eval")
    redact_eval_file(partial)
    os.replace(partial, path)


def _judge(verifier: str | Model) -> Model:
    """The judge, resilient, built afresh from its name (each log's event loop its own)."""
    if isinstance(verifier, Model):
        judge = resilient(verifier, replay=False)
    else:
        judge = named_model(verifier, memoize=False, replay=False)
    register_secrets(model_secrets(judge))
    return judge


@dataclass(frozen=True)
class _Judging:
    """How a log's samples are judged again: as its scorer ran, but for what was asked."""

    style: MessageStyle
    max_tokens: int | None
    votes: int
    template: str | None
    """The recorded template: kept only where the paper's layout stays the paper's."""
    guard: str
    """The recorded exploit guard (read as an ``ExploitGuard`` when the samples are scored)."""

    @classmethod
    def of(
        cls,
        recorded: Mapping[str, Any],
        path: Path,
        layout: VerifierLayout | None,
        votes: int | None,
    ) -> _Judging:
        """The judging of the log at ``path``, whose scorer ran with ``recorded``.

        Raises:
            UsageError: the recorded layout is unknown.
        """
        try:
            logged_style = MessageStyle(recorded.get("style", MessageStyle.OCCUBENCH.value))
        except ValueError:
            raise UsageError(f"{path}: unknown verifier layout {recorded.get('style')!r}") from None
        style = layout.style if layout is not None else logged_style
        same_paper = style is MessageStyle.PAPER and logged_style is MessageStyle.PAPER
        return cls(
            style=style,
            max_tokens=layout.max_tokens if layout is not None else recorded.get("max_tokens"),
            votes=votes or int(recorded.get("votes") or DEFAULT_VERIFIER_VOTES),
            template=recorded.get("template") if same_paper else None,
            guard=recorded.get("guard") or DEFAULT_GUARD,
        )


def _rescore(log: EvalLog, gradable: list[EvalSample], judge: Model, judging: _Judging) -> None:
    """Score the ``gradable`` samples of ``log`` again, in place, with ``judge`` alone."""
    log.eval.model_roles = None  # the header's models are not built: the judge alone
    log.samples = gradable
    score(
        log,
        occubench_scorer(
            votes=judging.votes,
            style=judging.style,
            max_tokens=judging.max_tokens,
            template=judging.template,
            regrading=True,
            guard=ExploitGuard(judging.guard),
        ),
        model=judge,
        model_roles={Role.VERIFIER.value: judge},
        action="overwrite",
        display="none",
        copy=False,
    )


_Calls = list[tuple[str, str | None, ModelUsage]]
"""(model, role, usage) of a sample's scoring calls (``scoring_usage``)."""


def _settle_errors(log: EvalLog, gradable: list[EvalSample], before: list[_Calls]) -> int:
    """How many judgings failed, each made its sample's error (the others' errors cleared).

    Each sample's scoring usage is moved from the old judging's to the new one's.
    """
    failed = 0
    for sample, old in zip(gradable, before, strict=True):
        new = (sample.scores or {}).get(SCORER_NAME)
        if new is not None and new.reason == VERIFIER_FAILED:
            trace = str((new.metadata or {}).get("traceback", new.explanation))
            sample.error = EvalError(
                message=new.explanation or "", traceback=trace, traceback_ansi=trace
            )
            sample.scores = {}
            failed += 1
        else:
            sample.error = None
        swap_usage(sample, old, scoring_usage(sample), log.stats)
    return failed


def _stamp(
    log: EvalLog,
    path: Path,
    judge: Model,
    judging: _Judging,
    rubric: Dataset | None,
    source: tuple[dict[str, ModelConfig | list[ModelConfig]] | None, str | None],
) -> str:
    """Record in the header that it regrades ``path`` with ``judge``; the regrade's digest.

    ``source``: the source log's model roles and verifier (read before scoring cleared them).
    """
    source_roles, source_verifier = source
    name, k, style, max_tokens = str(judge), judging.votes, judging.style, judging.max_tokens
    digest = _digest(str(path.resolve()), name, k, style, max_tokens, rubric and str(rubric.root))
    record = Regrade(
        source=str(path.resolve()),
        source_eval_id=log.eval.eval_id,
        source_verifier=source_verifier,
        verifier=name,
        votes=k,
        style=style,
        max_tokens=max_tokens,
        dataset=str(rubric.root) if rubric is not None else None,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    log.eval.model_roles = {**(source_roles or {}), Role.VERIFIER.value: judge_config(judge)}
    log.eval.eval_id = digest[:22]
    log.eval.metadata = {**(log.eval.metadata or {}), REGRADE_METADATA: record.model_dump()}
    return digest


def regrade_log(
    path: Path,
    verifier: str | Model,
    *,
    log_dir: Path,
    votes: int | None = None,
    layout: VerifierLayout | None = None,
    rubric: Dataset | None = None,
    max_log_bytes: int = DEFAULT_MAX_REGRADE_LOG_BYTES,
) -> RegradedLog:
    """Grade one log's samples again and write the regraded log into ``log_dir``.

    Args:
        path: The log to regrade.
        verifier: The judge (an Inspect model name, or a model).
        log_dir: The folder of the new log (created if needed).
        votes: k (None: the log's own).
        layout: The judge's layout (None: the log's own protocol's).
        rubric: A newer copy of the dataset to take each task's rubric and checks from,
            matched by task id (None: the log's own).
        max_log_bytes: The most bytes the log may unpack to.

    Raises:
        UsageError: the log cannot be read, or the rubric lacks one of its tasks.
    """
    log = read_source(path, max_bytes=max_log_bytes)
    judging = _Judging.of(recorded_scorer(log, path), path, layout, votes)
    samples = list(log.samples or [])
    gradable = [s for s in samples if s.error is None or judging_failed(s.error)]
    tasks = [sample_task(s, path) for s in gradable]
    if rubric is not None:
        by_id = {t.task_id: t for t in rubric.tasks}
        for sample, task in zip(gradable, tasks, strict=True):
            _use_rubric(sample, task, path, by_id, rubric.root)
    judge = _judge(verifier)
    passed_before = sum(map(_passed, samples))
    before = [scoring_usage(s) for s in gradable]
    source = log.eval.model_roles, _role_model(log, Role.VERIFIER)
    if gradable:
        _rescore(log, gradable, judge, judging)
    failed = _settle_errors(log, gradable, before)
    log.samples = samples
    recompute_metrics(log)
    digest = _stamp(log, path, judge, judging, rubric, source)
    target = log_dir / f"{path.stem}-regraded-{digest[:8]}.eval"
    try:
        log_dir.mkdir(parents=True, exist_ok=True)
        _write(log, target)
    except OSError as e:
        raise UsageError(f"cannot write {target}: {e.strerror or e}") from None
    return RegradedLog(
        source=str(path),
        log=str(target),
        verifier=str(judge),
        samples=len(samples),
        graded=len(gradable),
        kept_errors=len(samples) - len(gradable),
        verifier_errors=failed,
        passed_before=passed_before,
        passed_after=sum(map(_passed, samples)),
    )


def _role_model(log: EvalLog, role: Role) -> str | None:
    found = (log.eval.model_roles or {}).get(role.value)
    if isinstance(found, list):
        return ",".join(c.model for c in found)
    return found.model if found is not None else None


def check_log_dir(log_dir: Path, sources: Sequence[Path]) -> None:
    """Refuse a log folder that is a file, holds a source log, or lies inside a source's folder.

    A run's folder is its eval set's: a regraded log there would be taken for one of the
    run's own when the run is resumed.

    Raises:
        UsageError: the folder is a file, a source's folder or inside one.
    """
    if log_dir.exists() and not log_dir.is_dir():
        raise UsageError(f"--log-dir {log_dir} is a file, not a folder")
    out = log_dir.resolve()
    for source in sources:
        folder = source.resolve().parent
        if out == folder or folder in out.parents:
            raise UsageError(
                f"--log-dir {log_dir} is inside the folder of {source}: give a folder of "
                "its own (a run's folder is its eval set's)"
            )


def regrade_logs(
    logs: Sequence[str | Path],
    verifier: str | Model,
    *,
    log_dir: str | Path,
    votes: int | None = None,
    layout: VerifierLayout | None = None,
    dataset: str | Path | None = None,
    max_log_bytes: int = DEFAULT_MAX_REGRADE_LOG_BYTES,
) -> list[RegradedLog]:
    """Grade the samples of logs again with another judge, one new log per log.

    Every input is checked before a judge is asked: each log's size and header (an
    occubench log), the folder, the dataset and that it has every task of every log.

    Args:
        logs: Log files (``.eval`` or ``.json``), local.
        verifier: The judge (an Inspect model name, or a model).
        log_dir: Folder of the new logs: not a source log's folder, nor inside one.
        votes: k, judge calls per sample (None: each log's own).
        layout: The judge's layout (None: each log's protocol's).
        dataset: A newer copy of the dataset: each task's rubric (verification plan) and
            checks are taken from it, matched by task id (None: each log's own).
        max_log_bytes: The most bytes a log may unpack to.

    Returns:
        One ``RegradedLog`` per log, in order.

    Raises:
        UsageError: no log, a log that cannot be read, k < 1, the folder, a task missing
            from the dataset.
        DatasetError: the dataset is malformed.
    """
    if votes is not None and votes < 1:
        raise UsageError(f"--votes {votes}: k is at least 1")
    paths = [local_log(item) for item in logs]
    if not paths:
        raise UsageError("no logs to regrade")
    out = Path(log_dir)
    check_log_dir(out, paths)
    headers = [read_source(path, max_bytes=max_log_bytes, header_only=True) for path in paths]
    rubric = load_dataset(dataset) if dataset is not None else None
    if rubric is not None:
        for header, path in zip(headers, paths, strict=True):
            _check_rubric(header, path, rubric)
    redact_log_records()
    return [
        regrade_log(
            path,
            verifier,
            log_dir=out,
            votes=votes,
            layout=layout,
            rubric=rubric,
            max_log_bytes=max_log_bytes,
        )
        for path in paths
    ]
