"""The reports of a set of runs: one per group of comparable runs (``occubench report``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from occubench.analysis import DIMENSIONS, RunGroup, comparable_groups
from occubench.costs import PriceTable
from occubench.defaults import DEFAULT_BOOTSTRAP_RESAMPLES, DEFAULT_BOOTSTRAP_SEED
from occubench.errors import UsageError
from occubench.report._floor import FloorRecord, floors_beside
from occubench.report._report import GoldAgreement, Report, build_report
from occubench.results import SampleRow, read_runs
from occubench.review import Review, is_database, load_reviews, read_reviews
from occubench.twins import TwinFidelity

GoldAgreements = Callable[[list[str]], list[GoldAgreement]]
"""Each named simulator's agreement with a gold world (``report --gold``)."""


@dataclass(frozen=True)
class GroupReport:
    """The report of one group of runs that compare with each other."""

    group: RunGroup
    report: Report


@dataclass(frozen=True)
class RunsReport:
    """Every group's report of a set of runs, and the rows read from their logs."""

    rows: list[SampleRow]
    groups: list[GroupReport]


def check_breakdowns(by: Sequence[str]) -> None:
    """Refuse a breakdown that is not one of ``DIMENSIONS``.

    Raises:
        UsageError: an unknown breakdown, named with the known ones.
    """
    unknown = [d for d in by if d not in DIMENSIONS]
    if unknown:
        raise UsageError(f"unknown breakdown {', '.join(unknown)}; use {', '.join(DIMENSIONS)}")


def reviews_at(path: Path) -> list[Review]:
    """Reviews from a review database or an export (JSON or CSV)."""
    return read_reviews(path) if is_database(path) else load_reviews(path)


def report_runs(
    logs: Sequence[str],
    prices: PriceTable | None = None,
    *,
    resamples: int = DEFAULT_BOOTSTRAP_RESAMPLES,
    seed: int = DEFAULT_BOOTSTRAP_SEED,
    reviews: Sequence[Review] | None = None,
    variance: bool = False,
    twin: Sequence[TwinFidelity] = (),
    floors: Sequence[FloorRecord] = (),
    gold: GoldAgreements | None = None,
) -> RunsReport:
    """Read the logs and report each group of comparable runs on its own.

    ``gold`` is asked once, with every simulator of the rows; its agreements go to each
    report. With ``floors`` each leaderboard line gets the floor of its simulator, verifier
    and protocol on its group's tasks.

    Raises:
        UsageError: no sample in the logs.
    """
    rows = read_runs(logs)
    if not rows:
        raise UsageError(f"no samples in {', '.join(logs)}")
    groups = comparable_groups(rows)
    results = [
        GroupReport(
            g,
            build_report(
                g.rows,
                prices,
                n_resamples=resamples,
                seed=seed,
                reviews=reviews,
                variance=variance,
                sources=rows,
                twin=twin,
            ),
        )
        for g in groups
    ]
    if gold is not None:
        agreements = gold(sorted({r.simulator_model or "" for r in rows}))
        for result in results:
            result.report.add_gold(agreements)
    for result in results:
        if not floors:
            break
        lines = [(line.agent, line.simulator) for line in result.report.leaderboard]
        tasks = {str(r.task_id) for r in result.group.rows}
        result.report.floor = floors_beside(
            lines, result.group.verifier, result.group.protocol, floors, tasks
        )
    return RunsReport(rows=rows, groups=results)


def default_report_dir(logs: Sequence[str]) -> Path:
    """Where the report's files go without --out: ``<first log folder>-report`` beside it."""
    first = Path(logs[0].rstrip("/"))
    folder = first.parent if first.suffix in (".eval", ".json") else first
    return folder.with_name(f"{folder.resolve().name}-report")


def group_folder(folder: Path, index: int, groups: int) -> Path:
    """The folder of group ``index`` (from 1): ``folder`` itself when it is the only one."""
    return folder if groups == 1 else folder / f"group-{index}"


def left_out(result: Report) -> list[str]:
    """What the report does not compute, and why (R per setup and fault setting)."""
    lines = []
    for rob in result.robustness:
        if rob.r_note:
            where = f" at {rob.setting}" if rob.setting else ""
            lines.append(f"R of {rob.agent} @ {rob.simulator}{where}: {rob.r_note}")
    return lines
