"""occubench runs written in the public release's result format (``results.release``).

``occubench export --format release`` writes each run's scored samples as the release's
harness writes a run: ``<out>/<run_name>/args.json`` and ``results.jsonl``, field for
field, the trajectory rendered as the release renders it (the text its verifier reads).
A result made with occubench can then be contributed as the release's README asks, and
read back by ``occubench report`` beside any other run.

Where occubench records more, the release's fields say what they can: ``feedback`` is the
feedback of the first vote on the verdict's side (the release's rule), or the checks'
summary when no judge voted; ``step_count`` counts the agent's tool calls, as the release
does. The release writes nothing for a task whose evaluation failed: errored samples are
left out, and counted. Runs of several epochs get a folder per epoch (``__epoch<n>``), as
one release run evaluates each task once.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from inspect_ai.log import EvalSample
from inspect_ai.model import ChatMessageAssistant
from inspect_ai.scorer import CORRECT
from pydantic import BaseModel, Field

from occubench.config import CONFIG_METADATA, RunConfig
from occubench.export._read import ExportFilter
from occubench.files import write_fresh
from occubench.grading import SCORER_NAME, Grade, render_paper_trajectory
from occubench.redaction import known_secrets, redact_strings
from occubench.results import (
    RELEASE_ARGS,
    RELEASE_RESULTS,
    Harness,
    ReleaseArgs,
    ReleaseResult,
    SampleRow,
    log_header,
    log_samples,
    read_runs,
    release_run_name,
)


class ReleaseExport(BaseModel):
    """What ``write_release`` wrote."""

    folders: list[Path] = Field(description="The run folders written.")
    samples: int = Field(description="Samples written (one results line each).")
    left_out: int = Field(
        description="Samples not written because they errored (the release keeps none)."
    )


def _feedback(grade: Grade) -> str:
    """The release's feedback: the first vote on the verdict's side (else the checks)."""
    side = [v for v in grade.votes or [] if bool(v.is_correct) is grade.passed]
    if side:
        return side[0].feedback
    return grade.explanation()


def _folder(row: SampleRow, epochs: int) -> str:
    name = release_run_name(
        row.agent_model,
        row.simulator_model or "",
        row.env_mode,
        row.fault_count,
        row.fault_duration,
    )
    return f"{name}__epoch{row.epoch}" if epochs > 1 else name


def _release_result(
    row: SampleRow, sample: EvalSample, grade: Grade, with_plan: bool
) -> ReleaseResult:
    """A sample's results line, as the release's harness writes it (module doc)."""
    calls = sum(
        len(m.tool_calls or []) for m in sample.messages if isinstance(m, ChatMessageAssistant)
    )
    return ReleaseResult(
        task_id=int(row.task_id),
        task_scenario_name=row.scenario,
        category=row.industry,
        domain=row.domain,
        difficulty_level=row.difficulty,
        agent_model=row.agent_model,
        world_model=row.simulator_model or "",
        env_mode=row.env_mode,
        fault_count=row.fault_count if row.env_mode != "E0" else 0,
        fault_duration=row.fault_duration if row.env_mode != "E0" else 0,
        with_plan=with_plan,
        is_correct=grade.passed,
        feedback=_feedback(grade),
        step_count=calls,
        trajectory=render_paper_trajectory(sample.messages),
    )


def _release_args(row: SampleRow, name: str, with_plan: bool, out: Path) -> ReleaseArgs:
    """The ``args.json`` of run folder ``name``, which holds ``row``'s run."""
    return ReleaseArgs(
        agent_model=row.agent_model,
        world_model=row.simulator_model or "",
        verifier_model=row.verifier_model or row.simulator_model,
        env_mode=row.env_mode,
        fault_count=row.fault_count,
        fault_duration=row.fault_duration,
        with_plan=with_plan,
        run_name=name,
        task_ids=None,
        output_dir=str(out),
    )


class _Runs:
    """The release's runs as they are gathered: each folder's results lines and args."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.lines: dict[str, list[ReleaseResult]] = {}
        self.args: dict[str, ReleaseArgs] = {}

    def add_log(self, log: str, wanted: dict[tuple[str, int], SampleRow]) -> None:
        """The scored samples of ``log`` that are ``wanted`` (by task id and epoch)."""
        header = log_header(log)
        config = RunConfig.model_validate((header.eval.metadata or {}).get(CONFIG_METADATA, {}))
        epochs = header.eval.config.epochs or 1
        for sample in log_samples(log):
            row = wanted.get((str(sample.id), sample.epoch))
            score = (sample.scores or {}).get(SCORER_NAME)
            if row is None or score is None:
                continue
            grade = Grade.of(score.metadata, passed=score.value == CORRECT)
            name = _folder(row, epochs)
            result = _release_result(row, sample, grade, config.with_plan)
            self.lines.setdefault(name, []).append(result)
            self.args.setdefault(name, _release_args(row, name, config.with_plan, self.out))

    def write(self) -> list[Path]:
        """Write each run folder (secrets redacted, lines by task id); the folders."""
        secrets = known_secrets()  # a key a model or a provider error quoted is never written
        folders = []
        for name in sorted(self.lines):
            folder = self.out / name
            folder.mkdir(parents=True, exist_ok=True)
            ordered = [
                ReleaseResult.model_validate(redact_strings(r.model_dump(mode="json"), secrets))
                for r in sorted(self.lines[name], key=lambda r: r.task_id)
            ]
            write_fresh(folder / RELEASE_ARGS, self.args[name].model_dump_json(indent=2) + "\n")
            write_fresh(
                folder / RELEASE_RESULTS,
                "".join(r.model_dump_json() + "\n" for r in ordered),
            )
            folders.append(folder)
        return folders


def write_release(
    paths: Iterable[str | Path], out: Path, keep: ExportFilter | None = None
) -> ReleaseExport:
    """Write every occubench run under ``paths`` in the release's format (module doc).

    Args:
        paths: Log files or folders.
        out: The release's ``results`` folder: a run folder per run is written in it.
        keep: Which scored samples to write (by default all).

    Raises:
        UsageError: a log that cannot be read; ``out`` holds a file where a folder goes.
    """
    rows = [r for r in read_runs(paths) if r.harness is Harness.OCCUBENCH]
    chosen = keep or ExportFilter()
    by_log: dict[str, dict[tuple[str, int], SampleRow]] = {}
    for row in rows:
        if chosen.keeps(row):
            by_log.setdefault(row.log, {})[(str(row.task_id), row.epoch)] = row
    runs = _Runs(out)
    for log, wanted in by_log.items():
        runs.add_log(log, wanted)
    folders = runs.write()
    written = sum(len(v) for v in runs.lines.values())
    errored = sum(r.passed is None for r in rows)
    return ReleaseExport(folders=folders, samples=written, left_out=errored)
