"""Terminal tables that fit a narrow console without cutting a word.

Rich fits a wide table by collapsing its widest columns, folding words mid-way
(``occubench/tr`` over ``usting``) and numbers too. A table printed by a command is fitted
here first, in stages, each only when the one before does not fit:

1. each column at least its widest word, a numeric (right-aligned) column its widest
   cell, so numbers stay whole; the rest of the width in proportion to what each column
   would take on one line;
2. numbers fold at their spaces (``[72.2,`` over ``100.0]``);
3. names break after a ``/`` (``occubench/`` over ``trusting``), then after a ``_`` or
   ``-`` between letters (``initial_`` over ``state``), only where their column is
   narrower than the name;
4. the table drawn compact: one space between columns, no frame.

A table whose words still do not fit is shown as records, one row after another, each
value beside its column's name. Nothing is cut with an ellipsis or folded inside a word.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from rich import box
from rich.cells import cell_len
from rich.console import Console, Group, RenderableType
from rich.measure import Measurement
from rich.table import Column, Table

BREAKS = (re.compile(r"(?<=\S/)(?=\S)"), re.compile(r"(?<=[A-Za-z][_-])(?=[A-Za-z])"))
"""Where a name breaks, in order: after a ``/`` inside it; after ``_`` or ``-`` between letters."""


class _Stage(NamedTuple):
    whole_numbers: bool
    breaks: int
    """How many of ``BREAKS`` a name may break at."""
    compact: bool


STAGES = (
    _Stage(True, 0, False),
    _Stage(False, 0, False),
    _Stage(False, 1, False),
    _Stage(False, 2, False),
    _Stage(False, 2, True),
)


def fitted(renderable: RenderableType, console: Console) -> RenderableType:
    """``renderable`` made to fit ``console`` (module doc): a table, or a group's tables."""
    if isinstance(renderable, Group):
        return Group(*(fitted(part, console) for part in renderable.renderables))
    if not isinstance(renderable, Table):
        return renderable
    for column in renderable.columns:
        column.overflow = "fold"
        column.no_wrap = False
    natural = [_natural(console, c) for c in renderable.columns]
    if _frame(renderable) + sum(natural) <= console.width:
        return renderable
    records = _records(renderable)
    for stage in STAGES:
        if stage.compact:
            _compact(renderable)
        least = [_least(console, c, stage) for c in renderable.columns]
        room = console.width - _frame(renderable)
        if sum(least) <= room:
            _set_widths(renderable, least, natural, room, stage.breaks)
            return renderable
    return records


def _texts(column: Column) -> list[RenderableType]:
    return [column.header, *column.cells]


def _pieces(word: str, breaks: int) -> list[str]:
    """A word cut at the first ``breaks`` of ``BREAKS`` (each piece keeps its separator)."""
    pieces = [word]
    for pattern in BREAKS[:breaks]:
        pieces = [part for piece in pieces for part in pattern.split(piece)]
    return pieces


def _natural(console: Console, column: Column) -> int:
    """The width a column takes with each of its texts on one line."""
    options = console.options.update(width=10**6)  # the measure is clamped to it
    widest = max((Measurement.get(console, options, t).maximum for t in _texts(column)), default=0)
    return max(widest, column.min_width or 0)


def _least(console: Console, column: Column, stage: _Stage) -> int:
    """The narrowest a column may be at ``stage`` without folding a word (or a number)."""
    options = console.options.update(width=10**6)
    found = column.min_width or 0
    for index, text in enumerate(_texts(column)):
        if not isinstance(text, str):
            found = max(found, Measurement.get(console, options, text).minimum)
        elif stage.whole_numbers and index > 0 and column.justify == "right":
            found = max(found, max((cell_len(line) for line in text.split("\n")), default=0))
        else:
            pieces = [p for word in text.split() for p in _pieces(word, stage.breaks)]
            found = max(found, max(map(cell_len, pieces), default=0))
    return found


def _set_widths(table: Table, least: list[int], natural: list[int], room: int, breaks: int) -> None:
    """The columns' widths: their least, plus the room left in proportion to their want."""
    spare = room - sum(least)
    want = [max(n - low, 0) for n, low in zip(natural, least, strict=True)]
    total = sum(want) or 1
    for column, low, more in zip(table.columns, least, want, strict=True):
        column.width = low + spare * more // total
        _broken(column, column.width, breaks)


def _broken(column: Column, width: int, breaks: int) -> None:
    """Each name wider than ``width`` in the column's texts put on lines at its breaks."""

    def cut(word: str, depth: int = 0) -> list[str]:
        """A word at the first break that fits, each piece cut further only if it must."""
        if cell_len(word) <= width or depth >= breaks:
            return [word]
        return [p for part in BREAKS[depth].split(word) for p in cut(part, depth + 1)]

    def fit(text: str) -> str:
        return "".join(w if w.isspace() else "\n".join(cut(w)) for w in re.split(r"(\s+)", text))

    if isinstance(column.header, str):
        column.header = fit(column.header)
    cells = column._cells  # rich keeps a column's cells there; str cells are plain text
    for i, cell in enumerate(cells):
        if isinstance(cell, str):
            cells[i] = fit(cell)


def _frame(table: Table) -> int:
    """The width a table's frame and padding take beside its columns' text."""
    pads = sum(table._get_padding_width(i) for i in range(len(table.columns)))
    return table._extra_width + pads


def _compact(table: Table) -> None:
    """The table drawn with one space between columns and no outer frame."""
    table.box = box.SIMPLE_HEAD
    table.padding = (0, 0)
    table.collapse_padding = True
    table.show_edge = False
    table.pad_edge = False


def _records(table: Table) -> Table:
    """The table as records: for each row, each column's name and its value, one a line."""
    out = Table(title=table.title, show_header=False, box=box.SIMPLE, padding=(0, 1))
    out.add_column("field", style="bold", overflow="fold")
    out.add_column("value", overflow="fold")
    for row in range(table.row_count):
        if row:
            out.add_section()
        for column in table.columns:
            header = column.header if isinstance(column.header, str) else str(column.header)
            out.add_row(" ".join(header.split()), column._cells[row])
    return out
