"""Terminal tables at 80 columns: names never folded inside a word (``cli._fit``)."""

from __future__ import annotations

import io
import re

import pytest
from rich.table import Table

from occubench.cli._common import _Console
from occubench.cli._fit import BREAKS
from occubench.report import build_report, report_tables, rich_table
from occubench.results import read_runs


def printed(table: Table, width: int) -> str:
    out = io.StringIO()
    _Console(width=width, file=out).print(table)
    return out.getvalue()


def pieces(word: str) -> list[str]:
    """The parts a name may be put on lines at (``cli._fit.BREAKS``)."""
    found = [word]
    for pattern in BREAKS:
        found = [p for w in found for p in pattern.split(w)]
    return found


@pytest.fixture(scope="module")
def tables(demo_logs):
    report = build_report(read_runs([demo_logs]), None, n_resamples=50, seed=0)
    return report_tables(report)


def test_every_report_table_fits_80_columns_with_every_word_whole(tables):
    for text_table in tables:
        shown = printed(rich_table(text_table), 80)
        lines = shown.splitlines()
        assert max(len(line) for line in lines) <= 80, text_table.title
        words = set(re.findall(r"\S+", shown))
        for cell in [*text_table.columns, *(c for row in text_table.rows for c in row)]:
            for word in str(cell).split():
                for piece in pieces(word):  # a name on lines at its breaks, each part whole
                    assert any(piece in w for w in words), (text_table.title, word, piece)


def test_a_wide_terminal_keeps_every_name_on_one_line(tables):
    leaderboard = rich_table(tables[0])
    shown = printed(leaderboard, 200)
    assert "occubench/careful" in shown and "occubench/no-retry" in shown


def test_a_name_breaks_at_its_slash_before_its_hyphen():
    table = Table(title="t")
    table.add_column("agent")
    for i in range(9):
        table.add_column(f"E{i} %", justify="right")
    table.add_row("occubench/no-retry", *["100.0"] * 9)
    shown = printed(table, 80)
    assert "occubench/" in shown and "no-retry" in shown  # the hyphen kept: room enough


def test_a_table_whose_words_cannot_fit_is_shown_as_records():
    table = Table(title="Checks by kind")
    for name in ("simulator", "observations", "initial_state", "consistency", "fabrication"):
        table.add_column(name, justify="right")
    for _ in range(3):
        table.add_column("representment_of_chargebacks")
    table.add_row("occubench/canned", "659", "0", "0", "0", *["x"] * 3)
    shown = printed(table, 40)
    assert max(len(line) for line in shown.splitlines()) <= 40
    assert "observations" in shown and "659" in shown and "occubench/canned" in shown
