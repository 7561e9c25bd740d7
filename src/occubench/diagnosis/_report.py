"""The diagnosis report: classes per agent model and industry, simulator-caused apart."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from inspect_ai.log import read_eval_log, read_eval_log_samples
from pydantic import BaseModel, Field
from rich.table import Table

from occubench.diagnosis._failures import FailedTrajectory
from occubench.diagnosis._task import DIAGNOSIS_KEY, FAILURE_KEY
from occubench.diagnosis._taxonomy import FailureClass
from occubench.diagnosis._verdict import Diagnosis
from occubench.results import log_files
from occubench.text import terminal_text

DIAGNOSE_TASK = "occubench/diagnose"
"""Registry name of the diagnosis task."""

AGENT_CLASSES = [c for c in FailureClass if c is not FailureClass.SIMULATOR_CAUSED]


class DiagnosisRow(BaseModel):
    """One classified failed trajectory."""

    failure: FailedTrajectory = Field(description="The trajectory as it was diagnosed.")
    diagnosis: Diagnosis = Field(description="Its class, step and votes.")


def read_diagnoses(paths: Iterable[str | Path]) -> list[DiagnosisRow]:
    """The classified trajectories in the diagnosis logs under ``paths`` (errored ones left out)."""
    rows = []
    for file in log_files(paths):
        if read_eval_log(file, header_only=True).eval.task_registry_name != DIAGNOSE_TASK:
            continue
        for sample in read_eval_log_samples(file, all_samples_required=False):
            md = sample.metadata or {}
            if sample.error is not None or DIAGNOSIS_KEY not in md:
                continue
            rows.append(
                DiagnosisRow(
                    failure=FailedTrajectory.model_validate(md[FAILURE_KEY]),
                    diagnosis=Diagnosis.model_validate(md[DIAGNOSIS_KEY]),
                )
            )
    return rows


class ClassCounts(BaseModel):
    """The classes of one group's failed trajectories."""

    group: str = Field(description="Agent model or industry.")
    failed: int = Field(description="Failed trajectories classified.")
    counts: dict[FailureClass, int] = Field(description="Trajectories per class.")


class DiagnosisReport(BaseModel):
    """Everything ``occubench diagnose`` shows (``--out`` writes it as JSON)."""

    by_agent: list[ClassCounts] = Field(description="Classes per agent model.")
    by_industry: list[ClassCounts] = Field(description="Classes per industry.")
    simulator_caused: list[DiagnosisRow] = Field(description="Failures the simulator caused.")
    rows: list[DiagnosisRow] = Field(description="Every classified trajectory.")


def _counts(rows: Sequence[DiagnosisRow], key: Callable[[DiagnosisRow], str]) -> list[ClassCounts]:
    groups: dict[str, list[DiagnosisRow]] = {}
    for row in rows:
        groups.setdefault(key(row), []).append(row)
    return [
        ClassCounts(
            group=name,
            failed=len(members),
            counts={c: sum(r.diagnosis.category is c for r in members) for c in FailureClass},
        )
        for name, members in sorted(groups.items())
    ]


def diagnosis_report(rows: Sequence[DiagnosisRow]) -> DiagnosisReport:
    """Class counts per agent model and per industry; the simulator-caused failures listed."""
    return DiagnosisReport(
        by_agent=_counts(rows, lambda r: r.failure.agent_model),
        by_industry=_counts(rows, lambda r: r.failure.industry),
        simulator_caused=[r for r in rows if r.diagnosis.category is FailureClass.SIMULATOR_CAUSED],
        rows=list(rows),
    )


def _cell(count: int, total: int) -> str:
    return "-" if not count else f"{count} ({100 * count / total:.0f}%)"


def _class_table(title: str, first: str, counts: Sequence[ClassCounts]) -> Table:
    table = Table(title=title)
    table.add_column(first)
    table.add_column("failed", justify="right")
    for c in AGENT_CLASSES:
        table.add_column(c.value.replace("_", " "), justify="right")
    table.add_column("| simulator caused", justify="right")
    for group in counts:
        table.add_row(
            terminal_text(group.group),
            str(group.failed),
            *(_cell(group.counts[c], group.failed) for c in AGENT_CLASSES),
            _cell(group.counts[FailureClass.SIMULATOR_CAUSED], group.failed),
        )
    return table


def diagnosis_tables(report: DiagnosisReport) -> list[Table]:
    """Per agent model and per industry, then the simulator-caused failures one by one."""
    tables = [
        _class_table(
            "Why agents fail: failed trajectories per agent model", "agent", report.by_agent
        ),
        _class_table("Why agents fail: per industry", "industry", report.by_industry),
    ]
    caused = Table(title="Simulator-caused failures (not the agent's; listed apart)")
    for name in ("agent", "mode", "task", "scenario", "step", "votes", "why"):
        caused.add_column(name, justify="right" if name in ("step", "votes") else "left")
    for row in report.simulator_caused:
        f, d = row.failure, row.diagnosis
        caused.add_row(
            terminal_text(f.agent_model),
            f.env_mode,
            terminal_text(str(f.task_id)),
            terminal_text(f.scenario),
            "answer" if d.evidence_step == 0 else str(d.evidence_step),
            f"{d.agreement:.0%}",
            terminal_text(d.explanation),
        )
    if not report.simulator_caused:
        caused.add_row("(none)", *[""] * 6)
    tables.append(caused)
    return tables
