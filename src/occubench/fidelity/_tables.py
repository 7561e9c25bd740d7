"""Rich tables of a fidelity audit."""

from __future__ import annotations

from rich.table import Table

from occubench.fidelity._audit import AuditReport, PartScore
from occubench.fidelity._metrics import FidelityMetric

LABELS = {
    FidelityMetric.FABRICATION: "fabrication",
    FidelityMetric.OMISSION: "omission",
    FidelityMetric.DETERMINISM: "determinism",
    FidelityMetric.SCHEMA: "schema",
    FidelityMetric.UNKNOWN_ID: "unknown id",
    FidelityMetric.RULE_INVENTION: "rule invention",
}


def _cell(part: PartScore) -> str:
    if part.score is None:
        return "-"
    return f"{part.score:.2f} ({part.failed}/{part.checked})"


def audit_tables(report: AuditReport) -> list[Table]:
    """The score table (one row per simulator) and the flagged-environment table."""
    scores = Table(title="Simulator fidelity (1 = faithful; in brackets: failed/checked)")
    scores.add_column("simulator")
    scores.add_column("fidelity", justify="right")
    for metric in FidelityMetric:
        scores.add_column(LABELS[metric], justify="right")
    for sim in report.simulators:
        scores.add_row(
            sim.model,
            "-" if sim.score is None else f"{sim.score:.2f}",
            *(_cell(sim.parts[m]) for m in FidelityMetric),
        )
    flagged = sorted({e.env_name for s in report.simulators for e in s.environments if e.flags})
    flags = Table(
        title=f"Flagged environments (a part below {report.flag_below:g}; "
        "examples in the JSON report)"
    )
    flags.add_column("environment", overflow="fold")
    for sim in report.simulators:
        flags.add_column(sim.model)
    for env in flagged:
        cells = []
        for sim in report.simulators:
            found = next((e for e in sim.environments if e.env_name == env), None)
            names = [LABELS[f.metric] for f in found.flags] if found else []
            cells.append(", ".join(names) or "ok")
        flags.add_row(env, *cells)
    return [scores, flags] if flagged else [scores]
