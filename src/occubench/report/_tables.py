"""The report as text tables, rendered for the terminal (rich) or as Markdown.

Tables are built once from the report as plain strings; each medium makes every cell
safe on the way out (a log is data, whoever wrote it): ``terminal_text`` strips control
sequences and escapes rich markup, ``markdown_cell`` escapes HTML and pipes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from rich.table import Table

from occubench.analysis import (
    ALL,
    DIMENSIONS,
    LEVELS,
    PAIR_LEVELS,
    Component,
    FlipCause,
    FlipRow,
    GroupRate,
    GuardQuality,
    RateRow,
    RowQuality,
)
from occubench.report._floor import FloorRecord
from occubench.report._report import Report
from occubench.review import ReviewReport
from occubench.simchecks import SimCheckKind
from occubench.text import markdown_cell, terminal_text

LEFT = frozenset(
    {
        "agent",
        "setup",
        "simulator",
        "A",
        "B",
        "verdict",
        "simulator A",
        "simulator B",
        "unpriced models",
        "mode",
        "kind",
        "by",
        "name",
        "automatic",
        "human",
        "task",
        "scenario",
        "reviewers",
        "comments",
        "group",
        "outcome",
        "below MDD of",
        "verifier",
        "source",
        "null agent",
        "wire",
        "floor %",
        "flips by cause",
        "world",
        "flagged by checks",
        "unanimous votes",
        "expert kappa",
        "against gold",
        "regraded",
        *DIMENSIONS,
    }
)
"""Column names shown left-aligned; every other column holds numbers."""


@dataclass
class TextTable:
    """A titled table of plain strings."""

    title: str
    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)


def pct(value: float) -> str:
    """Format a rate as a percentage ("-" when undefined)."""
    return "-" if math.isnan(value) else f"{100 * value:.1f}"


def interval(low: float, high: float, scale: float = 100.0, digits: int = 1) -> str:
    """Format an interval ("-" when undefined)."""
    if math.isnan(low) or math.isnan(high):
        return "-"
    return f"[{scale * low:.{digits}f}, {scale * high:.{digits}f}]"


def ratio(value: float) -> str:
    """Format a ratio such as R ("-" when undefined)."""
    return "-" if math.isnan(value) else f"{value:.2f}"


def money(value: float | None) -> str:
    """Format dollars ("-" when unknown)."""
    return "-" if value is None or math.isnan(value) else f"${value:,.4f}"


def leaderboard_table(report: Report) -> TextTable:
    """Leaderboard: CR with its Wilson interval, CR per mode, R with its bootstrap interval."""
    mode = report.headline_mode
    several = len(report.simulators) > 1
    ended = any(line.agent_errors for line in report.leaderboard)
    table = TextTable(
        title=f"Leaderboard: completion rate in {mode} (Wilson 95% CI), "
        "R = min(CR E1..E3) / CR E0 (bootstrap 95% CI)",
        columns=[
            "#",
            "agent",
            *(["simulator"] if several else []),
            f"CR % {mode}",
            "95% CI",
            "n",
            "errors",
            *(["agent API errors"] if ended else []),
            *(f"{m} %" for m in report.env_modes),
            "R",
            "R 95% CI",
            *(["$/task"] if report.priced else []),
            *(["below MDD of"] if report.variance is not None else []),
            *(["floor %", "floor 95% CI"] if report.floor else []),
        ],
    )
    floors = {(f.agent, f.simulator): f.floor for f in report.floor}
    for line in report.leaderboard:
        table.rows.append(
            [
                str(line.rank),
                line.agent,
                *([line.simulator] if several else []),
                pct(line.rate),
                interval(line.low, line.high),
                str(line.scored),
                str(line.errors),
                *([str(line.agent_errors)] if ended else []),
                *(pct(line.mode_rates.get(m, math.nan)) for m in report.env_modes),
                ratio(line.r),
                interval(line.r_low, line.r_high, scale=1.0, digits=2),
                *([money(line.cost_per_task)] if report.priced else []),
                *([_ranks(line.not_distinguishable_from)] if report.variance is not None else []),
                *(_floor_cells(floors.get((line.agent, line.simulator))) if report.floor else []),
            ]
        )
    return table


def _floor_cells(floor: RateRow | None) -> list[str]:
    """A leaderboard line's floor and its interval ("not measured" without one)."""
    if floor is None:
        return ["not measured", "-"]
    return [f"{pct(floor.rate)} {floor.group}", interval(floor.low, floor.high)]


def floor_table(record: FloorRecord) -> TextTable:
    """The null agents' pass rates with their Wilson 95% intervals (``occubench floor``)."""
    table = TextTable(
        title=f"The verifier's floor on {record.dataset}: simulator {record.simulator}, "
        f"{record.grading()}, protocol {record.protocol.value} (Wilson 95% CI)",
        columns=[
            "null agent",
            "tasks",
            "passed",
            "pass %",
            "95% CI",
            "errors",
            "verifier alone %",
            "verifier alone 95% CI",
        ],
    )
    alone = {r.group: r for r in record.verifier_alone}
    for r in record.null_agents:
        judged = alone.get(r.group)
        table.rows.append(
            [
                r.group,
                str(r.scored),
                str(r.passed),
                pct(r.rate),
                interval(r.low, r.high),
                str(r.errors),
                "-" if judged is None else pct(judged.rate),
                "-" if judged is None else interval(judged.low, judged.high),
            ]
        )
    return table


def floor_verdict(record: FloorRecord) -> str:
    """One line: the share of tasks the grading passes for an agent that does nothing."""
    top = record.highest()
    if math.isnan(top.rate):
        return f"Floor: no null agent was scored, so the floor of {record.grading()} is unknown."
    line = (
        f"Floor: {record.grading()} passes {pct(top.rate)}% of tasks (95% CI "
        f"{interval(top.low, top.high)}) for an agent that does nothing ({top.group}: "
        f"{top.passed} of {top.scored})."
    )
    judged = [r for r in record.verifier_alone if not math.isnan(r.rate)]
    if not judged:
        return line
    most = max(judged, key=lambda r: r.rate)
    return line + (
        f" Its votes alone, checks aside, pass {pct(most.rate)}% ({most.group}: {most.passed} "
        f"of {most.scored})."
    )


NOT_MEASURED = "not measured"
"""What a quality figure reads when nothing measured it (never a blank cell)."""


def flips_cell(flip: FlipRow | None) -> str:
    """A line's flip rate with its interval ("not measured": no task ran twice)."""
    if flip is None or not flip.tasks:
        return NOT_MEASURED
    return f"{pct(flip.rate)} {interval(flip.low, flip.high)} ({flip.flipped}/{flip.tasks})"


def causes_cell(flip: FlipRow | None) -> str:
    """The discordant pairs' shares by cause ("not measured": no pair)."""
    if flip is None or not flip.pairs:
        return NOT_MEASURED
    shares = [
        f"{cause.value} {pct(flip.share(cause))}"
        for cause in FlipCause
        if cause is not FlipCause.UNKNOWN or flip.unknown_pairs
    ]
    return ", ".join(shares)


def regrade_cell(flip: FlipRow | None) -> str:
    """Regraded samples whose verdict changed ("not measured": none compared)."""
    if flip is None or not flip.regraded:
        return NOT_MEASURED
    return f"{pct(flip.regrade_flips / flip.regraded)} ({flip.regrade_flips}/{flip.regraded})"


def _graded_share(rate: float, found: int, of: int, passed: int, failed: int) -> str:
    """A share of samples with how they were graded: ``"50% (1/2: 1 passed, 0 failed)"``."""
    return f"{pct(rate)} ({found}/{of}: {passed} passed, {failed} failed)"


def flagged_cell(q: RowQuality | None) -> str:
    """Samples flagged by the online checks, and how they were graded."""
    if q is None or not q.checked:
        return NOT_MEASURED
    return _graded_share(q.flagged_rate, q.flagged, q.checked, q.flagged_passed, q.flagged_failed)


def suspected_cell(g: GuardQuality | None) -> str:
    """Passes the exploit guard suspected of an exploit: evidence against the agent."""
    if g is None or not g.guarded:
        return NOT_MEASURED
    if not g.passes:
        return "no pass"
    return f"{pct(g.suspected_rate)} ({g.suspected}/{g.passes} passes)"


def off_contract_cell(g: GuardQuality | None) -> str:
    """Samples whose simulator answered off its tools' contract unasked: the environment."""
    if g is None or not g.recorded:
        return NOT_MEASURED
    return _graded_share(
        g.off_contract_rate,
        g.off_contract,
        g.recorded,
        g.off_contract_passed,
        g.off_contract_failed,
    )


def unanimous_cell(q: RowQuality | None) -> str:
    """The share of samples whose verifier votes were unanimous."""
    if q is None or not q.voted:
        return NOT_MEASURED
    return f"{pct(q.unanimous_rate)} ({q.unanimous}/{q.voted})"


def kappa_cell(q: RowQuality | None) -> str:
    """Cohen's kappa against the reviewers, on how many samples."""
    if q is None or q.kappa is None:
        return NOT_MEASURED
    return f"{ratio(q.kappa)} (n={q.reviewed})"


def gold_cell(q: RowQuality | None) -> str:
    """The simulator's mean agreement with a gold world."""
    if q is None or q.gold is None:
        return NOT_MEASURED
    return ratio(q.gold)


def twin_cell(q: RowQuality | None) -> str:
    """The simulator's fidelity against the twins on the line's environments."""
    if q is None or q.twin_steps is None:
        return NOT_MEASURED
    parts = [("fields", q.twin_determined), ("outcome", q.twin_outcome), ("state", q.twin_state)]
    shown = [f"{name} {ratio(value)}" for name, value in parts if value is not None]
    return f"{', '.join(shown)} (n={q.twin_steps})" if shown else NOT_MEASURED


def believe_cells(report: Report) -> dict[tuple[str, str], dict[str, str]]:
    """Per leaderboard line (agent, simulator): each quality figure as text, by column.

    The columns are the floor (when floors were given), the flip rate in the headline
    mode, the samples flagged by the online checks, the exploit guard's two findings kept
    apart (passes suspected of an exploit: the agent; samples whose simulator answered off
    contract: the environment), unanimous votes, expert kappa, agreement with a gold
    world and fidelity against the executable twins; a figure nothing measured reads "not
    measured".
    """
    flips = {(f.agent, f.simulator): f for f in report.flips if f.env_mode == report.headline_mode}
    quality = {(q.agent, q.simulator): q for q in report.quality}
    guard = {(g.agent, g.simulator): g for g in report.guard}
    floors = {(f.agent, f.simulator): f.floor for f in report.floor}
    out = {}
    for line in report.leaderboard:
        key = (line.agent, line.simulator)
        q = quality.get(key)
        cells = {"floor %": _floor_cells(floors.get(key))[0]} if report.floor else {}
        out[key] = cells | {
            "flips %": flips_cell(flips.get(key)),
            "flips by cause": causes_cell(flips.get(key)),
            "flagged by checks": flagged_cell(q),
            "exploit suspected": suspected_cell(guard.get(key)),
            "simulator off contract": off_contract_cell(guard.get(key)),
            "unanimous votes": unanimous_cell(q),
            "expert kappa": kappa_cell(q),
            "against gold": gold_cell(q),
            "against twin": twin_cell(q),
        }
    return out


def believe_table(report: Report) -> TextTable:
    """Beside each leaderboard line: what says how far its score can be trusted."""
    mode = report.headline_mode
    several = len(report.simulators) > 1
    cells = believe_cells(report)
    names = list(next(iter(cells.values()), {}))
    table = TextTable(
        title=f"Can I believe each line? ({mode}; flips: Wilson 95% CI; 'not measured': "
        "nothing in these runs measured it)",
        columns=["#", "agent", *(["simulator"] if several else []), f"CR % {mode}", *names],
    )
    for line in report.leaderboard:
        table.rows.append(
            [
                str(line.rank),
                line.agent,
                *([line.simulator] if several else []),
                pct(line.rate),
                *cells[(line.agent, line.simulator)].values(),
            ]
        )
    return table


def flips_table(report: Report) -> TextTable:
    """Verdict flips per setup and mode, split by where the trajectories first differ."""
    table = TextTable(
        title="Verdict flips: tasks whose verdict changed between epochs or runs (Wilson 95% "
        "CI); discordant pairs by where their trajectories first differ",
        columns=[
            "setup",
            "mode",
            "world",
            "tasks",
            "flipped",
            "flips %",
            "95% CI",
            "pairs",
            "flips by cause",
            "regraded",
        ],
    )
    for f in report.flips:
        table.rows.append(
            [
                report.label(f.agent, f.simulator),
                f.env_mode,
                _world(f),
                str(f.tasks),
                str(f.flipped),
                pct(f.rate),
                interval(f.low, f.high),
                str(f.pairs),
                causes_cell(f),
                regrade_cell(f),
            ]
        )
    return table


def _world(flip: FlipRow) -> str:
    """Whether the samples' observations were replayed from a world."""
    if not flip.replayed:
        return "none"
    return "replayed" if flip.replayed == flip.samples else f"{flip.replayed} replayed"


def _ranks(ranks: Sequence[int]) -> str:
    """Ranks a line is not distinguishable from ("-" when none)."""
    return "not distinguishable from #" + ", #".join(map(str, ranks)) if ranks else "-"


def breakdown_table(report: Report, dimension: str) -> TextTable:
    """CR of every setup per group of ``dimension`` in the headline mode."""
    setups = [(line.agent, line.simulator) for line in report.leaderboard]
    table = TextTable(
        title=f"Completion rate by {dimension} in {report.headline_mode}: CR % [Wilson 95% CI] (n)",
        columns=[dimension, *(report.label(a, s) for a, s in setups)],
    )
    cells: dict[str, dict[tuple[str, str], GroupRate]] = {}
    for g in report.rates_for(dimension):
        cells.setdefault(g.group, {})[(g.agent, g.simulator)] = g
    for name in sorted(cells, key=lambda n: (len(n), n) if dimension == "difficulty" else n):
        table.rows.append(
            [
                name,
                *(
                    ""
                    if (cell := cells[name].get(s)) is None
                    else f"{pct(cell.rate)} {interval(cell.low, cell.high)} ({cell.scored})"
                    for s in setups
                ),
            ]
        )
    return table


def comparisons_table(report: Report) -> TextTable:
    """Paired comparisons: exact McNemar test and bootstrap interval of the difference."""
    table = TextTable(
        title="Paired comparisons on shared tasks (exact McNemar, 5%; "
        "CR difference A - B with paired bootstrap 95% CI)",
        columns=["A", "B", "mode", "n", "A only", "B only", "diff pp", "95% CI", "p", "verdict"],
    )
    for c in report.comparisons:
        table.rows.append(
            [
                report.label(c.a, c.simulator),
                report.label(c.b, c.simulator),
                c.env_mode,
                str(c.n),
                str(c.a_only),
                str(c.b_only),
                pct(c.difference),
                interval(c.low, c.high),
                f"{c.p_value:.3g}",
                c.verdict,
            ]
        )
    return table


def agreement_table(report: Report) -> TextTable:
    """Ranking agreement between simulators: share of model pairs ordered alike, Kendall tau."""
    table = TextTable(
        title="Ranking agreement between simulators (agent models ordered by CR)",
        columns=[
            "simulator A",
            "simulator B",
            "mode",
            "models",
            "pairs agreeing",
            "share %",
            "tau",
        ],
    )
    for a in report.agreement:
        table.rows.append(
            [
                a.simulator_a,
                a.simulator_b,
                a.env_mode,
                str(a.n_models),
                f"{a.agreeing_pairs}/{a.n_pairs}",
                pct(a.share),
                ratio(a.tau),
            ]
        )
    return table


def tokens(value: float | None) -> str:
    """A token count as the tables show it: not recorded, undefined (-), or the number."""
    if value is None:
        return "not recorded"
    return "-" if math.isnan(value) else f"{value:,.0f}"


def cost_breakdown_table(report: Report) -> TextTable:
    """Tokens (and dollars, with prices) per task and per solved task."""
    table = TextTable(
        title="Tokens and cost per task (all modes; errored samples included)",
        columns=[
            "setup",
            "samples",
            "solved",
            "tokens/task",
            "agent tokens/task",
            "tokens/solved",
            *(["cost", "$/task", "$/solved", "unpriced models"] if report.priced else []),
        ],
    )
    for c in report.costs:
        table.rows.append(
            [
                report.label(c.agent, c.simulator),
                str(c.samples),
                str(c.solved),
                tokens(c.tokens_per_task),
                tokens(c.agent_tokens_per_task),
                tokens(c.tokens_per_solved),
                *(
                    [
                        money(c.cost),
                        money(c.cost_per_task),
                        money(c.cost_per_solved),
                        ", ".join(c.unpriced_models),
                    ]
                    if report.priced
                    else []
                ),
            ]
        )
    return table


def wire_table(report: Report) -> TextTable:
    """An agent program's generations through the bridge, by setup and wire."""
    table = TextTable(
        title="Agent tokens by wire: the agent program's generations through the bridge "
        "(all modes; errored samples included)",
        columns=[
            "setup",
            "wire",
            "calls",
            "streamed",
            "input tokens",
            "output tokens",
            "tokens/task",
        ],
    )
    for w in report.agent_wires:
        table.rows.append(
            [
                report.label(w.agent, w.simulator),
                w.wire,
                str(w.calls),
                str(w.streamed),
                tokens(w.input_tokens),
                tokens(w.output_tokens),
                tokens(w.tokens_per_task),
            ]
        )
    return table


def fault_table(report: Report, kinds: bool = False) -> TextTable:
    """Fault recovery: retries after faults and CR of the samples hit (all kinds, or each)."""
    table = TextTable(
        title="Fault recovery: tool called again after a fault; CR of samples hit (Wilson 95% CI)",
        columns=[
            "setup",
            "mode",
            *(["kind"] if kinds else []),
            "faults",
            "retried %",
            "retry 95% CI",
            "samples hit",
            "CR hit %",
            "CR hit 95% CI",
        ],
    )
    for f in report.fault_recovery:
        if not kinds and f.kind != ALL:
            continue
        table.rows.append(
            [
                report.label(f.agent, f.simulator),
                f.env_mode,
                *([f.kind] if kinds else []),
                str(f.faults),
                pct(f.retry_rate),
                interval(f.retry_low, f.retry_high),
                str(f.samples_hit),
                pct(f.hit_rate),
                interval(f.hit_low, f.hit_high),
            ]
        )
    return table


def pass_k_table(report: Report) -> TextTable:
    """pass^k and pass@k per setup and mode (only with several epochs)."""
    table = TextTable(
        title="pass^k (all k trials pass) and pass@k (at least one), mean over tasks",
        columns=["setup", "mode", "k", "tasks", "pass^k %", "pass@k %"],
    )
    for p in report.pass_k:
        table.rows.append(
            [
                report.label(p.agent, p.simulator),
                p.env_mode,
                str(p.k),
                str(p.tasks),
                pct(p.pass_hat_k),
                pct(p.pass_at_k),
            ]
        )
    return table


def review_tables(report: Report) -> list[TextTable]:
    """The review part: agreement, confusion, disagreements, human-verdict CR, realism."""
    review = report.review
    if review is None:
        return []
    return [
        _reviewer_agreement_table(review),
        _confusion_table(review),
        _disagreements_table(review),
        _human_rate_table(report, review),
        _realism_table(review),
    ]


def _reviewer_agreement_table(review: ReviewReport) -> TextTable:
    """How often the reviewers' verdicts agree with the automatic one (Cohen's kappa)."""
    a = review.agreement
    return TextTable(
        title=f"Reviewer agreement: {a.reviews} review(s) by {len(a.reviewers)} reviewer(s) "
        f"of {a.samples_reviewed} sample(s)",
        columns=["compared", "undecided", "agree %", "kappa", "kappa 95% CI", "unmatched"],
        rows=[
            [
                str(a.compared),
                str(a.undecided),
                pct(a.observed),
                ratio(a.kappa),
                interval(a.low, a.high, scale=1.0, digits=2),
                str(review.unmatched),
            ]
        ],
    )


def _confusion_table(review: ReviewReport) -> TextTable:
    """Automatic verdicts against human ones."""
    confusion = review.agreement.confusion
    return TextTable(
        title="Automatic verdict (rows) x human verdict (columns)",
        columns=["automatic", "human pass", "human fail"],
        rows=[[v, str(confusion[v]["pass"]), str(confusion[v]["fail"])] for v in ("pass", "fail")],
    )


def _disagreements_table(review: ReviewReport) -> TextTable:
    """Each sample whose human verdict differs from the automatic one, with the comments."""
    return TextTable(
        title="Disagreements between the automatic verdict and the reviewers",
        columns=[
            "agent",
            "mode",
            "task",
            "scenario",
            "automatic",
            "human",
            "reviewers",
            "comments",
        ],
        rows=[
            [
                d.agent,
                d.env_mode,
                d.task_id,
                d.scenario,
                d.automatic,
                d.human,
                ", ".join(d.reviewers),
                " / ".join(d.comments),
            ]
            for d in review.agreement.disagreements
        ],
    )


def _human_rate_table(report: Report, review: ReviewReport) -> TextTable:
    """Each setup's completion rate with the human verdicts in place of the automatic ones."""
    return TextTable(
        title="CR with human verdicts where they exist (Wilson 95% CI)",
        columns=[
            "setup",
            "mode",
            "CR % scored",
            "CR % human",
            "95% CI",
            "human verdicts",
            "changed",
        ],
        rows=[
            [
                report.label(h.agent, h.simulator),
                h.env_mode,
                pct(h.automatic_rate),
                pct(h.rate),
                interval(h.low, h.high),
                str(h.human_verdicts),
                str(h.changed),
            ]
            for h in review.rates
        ],
    )


def _realism_table(review: ReviewReport) -> TextTable:
    """The reviewers' realism ratings per dimension and group."""
    return TextTable(
        title="Realism ratings (1-5): mean (n)",
        columns=["by", "name", "reviews", "scenario realism", "rubric realism"],
        rows=[
            [
                x.dimension,
                x.group,
                str(x.reviews),
                f"{ratio(x.scenario_mean)} ({x.scenario_n})",
                f"{ratio(x.rubric_mean)} ({x.rubric_n})",
            ]
            for x in review.realism
        ],
    )


def report_tables(
    report: Report,
    dimensions: Sequence[str] = ("industry", "difficulty"),
    fault_kinds: bool = False,
) -> list[TextTable]:
    """The report's tables, leaderboard first (empty sections left out).

    Args:
        report: The metrics.
        dimensions: Breakdowns to include, in the headline mode.
        fault_kinds: One fault-recovery line per fault kind, not only all kinds together.

    """
    tables = [leaderboard_table(report), believe_table(report)]
    tables += [breakdown_table(report, d) for d in dimensions]
    if report.flips:
        tables.append(flips_table(report))
    if report.comparisons:
        tables.append(comparisons_table(report))
    if report.agreement:
        tables.append(agreement_table(report))
    if report.pass_k:
        tables.append(pass_k_table(report))
    if report.fault_recovery:
        tables.append(fault_table(report, kinds=fault_kinds))
    if report.suspect_impact:
        tables += [suspect_table(report), invalid_rate_table(report)]
    if report.user_errors:
        tables.append(user_error_table(report))
    if report.variance is not None:
        tables.append(variance_table(report))
        if report.variance.pairs:
            tables.append(paired_table(report))
    if report.against_gold:
        tables.append(gold_agreement_table(report))
    if report.against_twin:
        tables.append(twin_fidelity_table(report))
    if report.world_use:
        tables.append(world_use_table(report))
    if report.shared_paths:
        tables.append(shared_paths_table(report))
    tables.append(cost_breakdown_table(report))
    if report.agent_wires:
        tables.append(wire_table(report))
    return tables + review_tables(report)


def user_error_table(report: Report) -> TextTable:
    """The simulated user's errors per setup, apart from the agent's failures."""
    table = TextTable(
        title="Simulated user: its errors (replies that failed a check after the re-ask), "
        "never counted as the agent's; CR with and without them",
        columns=[
            "setup",
            "mode",
            "user",
            "with user",
            "user turns",
            "user errors",
            "samples with one",
            "user ended",
            "CR %",
            "CR clean %",
        ],
    )
    for u in report.user_errors:
        if u.user_turns is None:
            table.rows.append(
                [report.label(u.agent, u.simulator), u.env_mode, "-", "0"] + [NOT_MEASURED] * 6
            )
            continue
        table.rows.append(
            [
                report.label(u.agent, u.simulator),
                u.env_mode,
                u.user_model or "-",
                str(u.with_user),
                str(u.user_turns),
                str(u.user_errors),
                str(u.samples_with_user_errors),
                str(u.user_ended),
                pct(u.rate if u.rate is not None else float("nan")),
                pct(u.clean_rate if u.clean_rate is not None else float("nan")),
            ]
        )
    return table


def suspect_table(report: Report) -> TextTable:
    """CR with and without the simulator-suspect samples (online simulator checks)."""
    table = TextTable(
        title="Online simulator checks: CR with and without simulator-suspect samples "
        "(Wilson 95% CI)",
        columns=["setup", "mode", "scored", "suspect", "CR %", "95% CI", "CR clean %", "clean CI"],
    )
    for s in report.suspect_impact:
        table.rows.append(
            [
                report.label(s.agent, s.simulator),
                s.env_mode,
                str(s.scored),
                str(s.suspect),
                pct(s.rate),
                interval(s.low, s.high),
                pct(s.clean_rate),
                interval(s.clean_low, s.clean_high),
            ]
        )
    return table


def invalid_rate_table(report: Report) -> TextTable:
    """Simulator-invalid rate per simulator, environment and scenario, with failed checks."""
    kinds = [k.value for k in SimCheckKind]
    table = TextTable(
        title="Simulator-invalid rate: samples that kept an observation failing an online check "
        "(Wilson 95% CI); failed observations by check",
        columns=[
            "simulator",
            "by",
            "group",
            "samples",
            "observations",
            "suspect",
            "invalid %",
            "95% CI",
            *kinds,
        ],
    )
    for r in report.invalid_rates:
        table.rows.append(
            [
                r.simulator,
                r.dimension,
                r.group,
                str(r.samples),
                str(r.observations),
                str(r.suspect),
                pct(r.rate),
                interval(r.low, r.high),
                *(str(r.failures.get(k, 0)) for k in kinds),
            ]
        )
    return table


def gold_agreement_table(report: Report) -> TextTable:
    """Each simulator's agreement with a gold world, with its bootstrap 95% interval."""
    table = TextTable(
        title="Simulators against gold: agreement with the answers people wrote (1 = agrees; "
        "bootstrap 95% CI; parts in occubench audit --gold)",
        columns=["simulator", "gold world", "entries", "against gold", "95% CI"],
    )
    for g in report.against_gold:
        known = g.low is not None and g.high is not None
        table.rows.append(
            [
                g.simulator,
                g.world,
                str(g.entries),
                "-" if g.mean is None else f"{g.mean:.2f}",
                f"[{g.low:.2f}, {g.high:.2f}]" if known else "-",
            ]
        )
    return table


def twin_fidelity_table(report: Report) -> TextTable:
    """Each simulator against the executable twins: the shares of its steps that matched."""
    table = TextTable(
        title="Simulators against the twins: shares of steps whose success or error, "
        "determined fields and state matched the twin's (occubench audit --twin)",
        columns=["simulator", "environments", "steps", "outcome", "determined fields", "state"],
    )
    for t in report.against_twin:
        table.rows.append(
            [
                t.simulator,
                str(len(t.environments)),
                str(t.steps),
                *(
                    NOT_MEASURED if v is None else ratio(v)
                    for v in (t.outcome, t.determined, t.state)
                ),
            ]
        )
    return table


def world_use_table(report: Report) -> TextTable:
    """Where observations came from, per world: all, then per run, agent and environment."""
    table = TextTable(
        title="Worlds: observations answered from the world (hit rate), by the simulator "
        "(recorded) and live (replay-live)",
        columns=[
            "world",
            "by",
            "group",
            "samples",
            "observations",
            "world",
            "simulator",
            "live",
            "hit %",
        ],
    )
    for r in report.world_use:
        table.rows.append(
            [
                r.world,
                r.dimension,
                r.group,
                str(r.samples),
                str(r.observations),
                str(r.world_hits),
                str(r.simulator_calls),
                str(r.live_calls),
                pct(r.hit_rate),
            ]
        )
    return table


def shared_paths_table(report: Report) -> TextTable:
    """Per world with several agents: how much of each agent's paths another agent took."""
    table = TextTable(
        title="Shared paths: an agent's calls whose path (every call before, then the call) "
        "another agent also took in the same world",
        columns=["world", "agent", "calls", "shared", "shared %"],
    )
    for r in report.shared_paths:
        table.rows.append([r.world, r.agent, str(r.observations), str(r.shared), pct(r.share)])
    return table


def _component(c: Component) -> str:
    if c.variance is None:
        return "-"
    share = "" if math.isnan(c.share) else f" ({100 * c.share:.0f}%)"
    return f"{c.variance:.4f}{share} {interval(c.low, c.high, scale=1.0, digits=4)}"


def variance_table(report: Report) -> TextTable:
    """Variance components per agent and mode, and the MDD of the run's design."""
    noise = report.variance
    assert noise is not None
    table = TextTable(
        title="Noise floor: variance components of a task's outcome (nested random effects, "
        f"ANOVA estimators, share, task bootstrap 95% CI) and the minimum detectable "
        f"difference of CR between two agents of this design ({100 * noise.power:.0f}% power, "
        f"{100 * noise.alpha:g}% two-sided)",
        columns=[
            "agent",
            "mode",
            "tasks",
            "sims",
            "epochs",
            "votes",
            "outcome",
            *(f"{level} var" for level in LEVELS),
            "CR %",
            "MDD pp",
            "MDD 95% CI",
        ],
    )
    for row in noise.rows:
        d = row.design
        table.rows.append(
            [
                row.agent,
                f"{row.env_mode} {row.faults}".strip(),
                str(d.tasks),
                str(d.simulators),
                str(d.epochs),
                "-" if d.votes is None else str(d.votes),
                row.outcome,
                *(_component(c) for c in row.components),
                pct(row.rate),
                pct(row.mdd),
                interval(row.mdd_low, row.mdd_high),
            ]
        )
    return table


def paired_table(report: Report) -> TextTable:
    """The paired difference of each two agents on the same tasks and epochs."""
    noise = report.variance
    assert noise is not None
    table = TextTable(
        title="Paired differences: A - B per task and epoch, its task and within-task "
        "(epoch to epoch: simulator sampling, agent and verifier noise) variance, and the "
        f"minimum detectable difference ({100 * noise.power:.0f}% power, "
        f"{100 * noise.alpha:g}% two-sided) paired and taken apart",
        columns=[
            "agent A",
            "agent B",
            "mode",
            "tasks",
            "epochs",
            "A - B pp",
            *(f"{level} var" for level in PAIR_LEVELS),
            "MDD pp",
            "MDD 95% CI",
            "unpaired MDD pp",
        ],
    )
    for row in noise.pairs:
        table.rows.append(
            [
                row.agent_a,
                row.agent_b,
                f"{row.env_mode} {row.faults}".strip(),
                str(row.tasks),
                str(row.epochs),
                f"{100 * row.difference:+.1f}",
                *(_component(c) for c in row.components),
                pct(row.mdd),
                interval(row.mdd_low, row.mdd_high),
                "-" if row.unpaired_mdd is None else pct(row.unpaired_mdd),
            ]
        )
    return table


def rich_table(table: TextTable) -> Table:
    """A rich table for the terminal; every cell made safe with ``terminal_text``."""
    out = Table(title=terminal_text(table.title))
    for name in table.columns:
        out.add_column(terminal_text(name), justify="left" if name in LEFT else "right")
    for row in table.rows:
        out.add_row(*(terminal_text(cell) for cell in row))
    return out


def markdown_table(table: TextTable) -> str:
    """A Markdown section (title and pipe table); every cell made safe with ``markdown_cell``."""
    lines = [
        f"### {markdown_cell(table.title)}",
        "",
        "| " + " | ".join(markdown_cell(c) for c in table.columns) + " |",
        "|" + "|".join(" --- " if c in LEFT else " ---: " for c in table.columns) + "|",
    ]
    lines += ["| " + " | ".join(markdown_cell(c) for c in row) + " |" for row in table.rows]
    return "\n".join(lines) + "\n"
