"""Rich tables of a fidelity audit and of an audit against gold."""

from __future__ import annotations

from rich.table import Table

from occubench.fidelity._audit import AuditReport, PartScore
from occubench.fidelity._gold import GoldMetric, GoldReport, estimate_cell
from occubench.fidelity._metrics import FidelityMetric
from occubench.text import terminal_text

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
            terminal_text(sim.model),
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
        flags.add_column(terminal_text(sim.model))
    for env in flagged:
        cells = []
        for sim in report.simulators:
            found = next((e for e in sim.environments if e.env_name == env), None)
            names = [LABELS[f.metric] for f in found.flags] if found else []
            cells.append(", ".join(names) or "ok")
        flags.add_row(terminal_text(env), *cells)
    return [scores, flags] if flagged else [scores]


GOLD_LABELS = {
    GoldMetric.JSON_OBJECT: "JSON object",
    GoldMetric.KEYS: "keys",
    GoldMetric.COMPLETE: "complete",
    GoldMetric.GROUNDED: "grounded",
    GoldMetric.IDS: "ids",
    GoldMetric.NUMBERS: "numbers",
    GoldMetric.TEXT: "text",
    GoldMetric.CONSISTENT: "consistent",
    GoldMetric.REALISM: "realism",
}


def gold_table(report: GoldReport, by_env: bool = False) -> Table:
    """Scores against gold: a row per simulator (and per env with ``by_env``), 95% intervals.

    The world's author names, environments and scenarios come from a shared file: each
    goes through the terminal-text rule (``text.terminal_text``).
    """
    authors = terminal_text(", ".join(report.authors))
    table = Table(
        title=f"Against gold ({report.gold_entries} entries by {authors}; "
        "1 = agrees; mean [95% interval])"
    )
    table.add_column("simulator")
    if by_env:
        table.add_column("environment", overflow="fold")
        table.add_column("scenario", overflow="fold")
    table.add_column("n", justify="right")
    table.add_column("against gold", justify="right")
    for metric in GoldMetric:
        table.add_column(GOLD_LABELS[metric], justify="right")
    for group in report.groups:
        if (group.env_name is not None) != by_env:
            continue
        where = [terminal_text(group.env_name or ""), terminal_text(group.scenario or "")]
        table.add_row(
            terminal_text(group.simulator),
            *(where if by_env else []),
            str(group.entries),
            estimate_cell(group.agreement),
            *(estimate_cell(group.parts[m]) for m in GoldMetric),
        )
    return table
