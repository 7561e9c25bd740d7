"""The bundle's summary: the reports ``occubench report`` computes, and where two disagree."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from occubench.analysis import comparable_groups
from occubench.bundle._format import Settings, Summary, SummaryGroup
from occubench.costs import PriceTable
from occubench.report import build_report
from occubench.results import SampleRow
from occubench.twins import TwinFidelity

SHOWN_DIFFERENCES = 10
"""Differences a failed comparison names (the count says how many there were)."""


def compute_summary(
    rows: Sequence[SampleRow],
    settings: Settings,
    prices: PriceTable | None,
    twin: Sequence[TwinFidelity] = (),
) -> Summary:
    """One report per comparable group of runs, as ``occubench report`` makes it.

    The same functions as the report (``comparable_groups``, ``build_report``) with the
    bundle's settings and its simulators' steps against the twins: the same rows give the
    same numbers, to the last bit.
    """
    return Summary(
        groups=[
            SummaryGroup(
                label=g.label,
                report=build_report(
                    g.rows,
                    prices,
                    n_resamples=settings.resamples,
                    seed=settings.seed,
                    variance=settings.variance,
                    sources=rows,
                    twin=twin,
                ),
            )
            for g in comparable_groups(rows)
        ]
    )


def as_json(summary: Summary) -> Any:
    """The summary as plain JSON values (undefined numbers as "NaN"), for comparison."""
    return json.loads(summary.model_dump_json())


def differences(stated: Any, recomputed: Any, where: str = "") -> list[str]:
    """Every place two JSON values differ: ``path: stated X, recomputed Y``."""
    if isinstance(stated, dict) and isinstance(recomputed, dict):
        out = []
        for key in sorted(set(stated) | set(recomputed), key=str):
            path = f"{where}.{key}" if where else str(key)
            if key not in recomputed:
                out.append(f"{path}: stated, but the logs give no such value")
            elif key not in stated:
                out.append(f"{path}: missing (the logs give {_short(recomputed[key])})")
            else:
                out += differences(stated[key], recomputed[key], path)
        return out
    if isinstance(stated, list) and isinstance(recomputed, list):
        if len(stated) != len(recomputed):
            return [f"{where}: {len(stated)} entries stated, {len(recomputed)} recomputed"]
        out = []
        for i, (a, b) in enumerate(zip(stated, recomputed, strict=True)):
            out += differences(a, b, f"{where}[{i}]")
        return out
    if stated == recomputed and type(stated) is type(recomputed):
        return []
    return [f"{where}: stated {_short(stated)}, recomputed {_short(recomputed)}"]


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."
