"""Rich tables of a fidelity audit, of an audit against gold and of step fidelity to twins."""

from __future__ import annotations

from rich.table import Table

from occubench.fidelity._audit import AuditReport, PartScore
from occubench.fidelity._gold import GoldMetric, GoldReport, estimate_cell
from occubench.fidelity._metrics import FidelityMetric
from occubench.text import terminal_text
from occubench.twins import (
    Feeding,
    FidelitySummary,
    StepMatch,
    TwinFidelity,
    first_drifts,
    summarise,
)

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


CHANGE_BUCKETS: tuple[tuple[str, int, int | None], ...] = (
    ("0", 0, 0),
    ("1", 1, 1),
    ("2", 2, 2),
    ("3-4", 3, 4),
    ("5+", 5, None),
)
"""The state fields a step changes, grouped as EnvSimBench reports them (label, low, high)."""


def change_bucket(fields_changed: int) -> str:
    """The ``CHANGE_BUCKETS`` label of a step that changes this many state fields."""
    for label, low, high in CHANGE_BUCKETS:
        if fields_changed >= low and (high is None or fields_changed <= high):
            return label
    raise ValueError(f"a step cannot change {fields_changed} fields")


def _share_cell(share: float | None) -> str:
    return "-" if share is None else f"{share:.2f}"


def _label(record: TwinFidelity) -> str:
    fed = "fed twin" if record.feeding is Feeding.TWIN else "free-running"
    return f"{terminal_text(record.simulator)} ({fed})"


def _part(record: TwinFidelity, steps: list[StepMatch]) -> FidelitySummary:
    return summarise(record.model_copy(update={"steps": steps}))


def _drift_cell(record: TwinFidelity) -> str:
    if record.feeding is Feeding.TWIN:
        return "-"
    firsts = first_drifts(record)
    drifted = [step for step in firsts.values() if step is not None]
    if not drifted:
        return f"none (0/{len(firsts)})"
    return f"step {min(drifted)} ({len(drifted)}/{len(firsts)})"


def twin_tables(records: list[TwinFidelity]) -> list[Table]:
    """Step fidelity against the twin: by simulator, by tool, by state fields changed."""
    shares = ("outcome", "determined", "state")
    overall = Table(
        title="Step fidelity against the twin (shares equal to the twin's; determined leaves "
        "missing, extra or with another value; infra failures apart; first drift: step "
        "(trajectories drifted/all))"
    )
    leaves = ("missing", "extra", "other value")
    for name in ("simulator", "steps", *shares, *leaves, "infra failures", "first drift"):
        overall.add_column(name, justify="left" if name == "simulator" else "right")
    for record in records:
        found = summarise(record)
        overall.add_row(
            _label(record),
            str(found.steps),
            *(_share_cell(getattr(found, s)) for s in shares),
            str(sum(s.missing for s in record.steps)),
            str(sum(s.extra for s in record.steps)),
            str(sum(s.determined - s.determined_matched - s.missing for s in record.steps)),
            str(found.failures),
            _drift_cell(record),
        )
    by_tool = Table(title="Step fidelity against the twin, by tool")
    by_fields = Table(
        title="Step fidelity against the twin, by state fields the step changes (EnvSimBench)"
    )
    for table, key in ((by_tool, "tool"), (by_fields, "fields changed")):
        for name in ("simulator", key, "steps", *shares, "infra failures"):
            table.add_column(name, justify="right" if name not in ("simulator", "tool") else "left")
    for record in records:
        tools = sorted({s.tool for s in record.steps})
        for tool_name in tools:
            found = _part(record, [s for s in record.steps if s.tool == tool_name])
            by_tool.add_row(
                _label(record),
                terminal_text(tool_name),
                str(found.steps),
                *(_share_cell(getattr(found, s)) for s in shares),
                str(found.failures),
            )
        for label, _, _ in CHANGE_BUCKETS:
            steps = [s for s in record.steps if change_bucket(s.fields_changed) == label]
            if not steps:
                continue
            found = _part(record, steps)
            by_fields.add_row(
                _label(record),
                label,
                str(found.steps),
                *(_share_cell(getattr(found, s)) for s in shares),
                str(found.failures),
            )
    return [overall, by_tool, by_fields]
