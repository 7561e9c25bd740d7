"""Model text in CSV files: no formula in a spreadsheet, numbers kept, text read back."""

from __future__ import annotations

import csv
import io
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from occubench.analysis._sanitize import csv_text, from_spreadsheet_cell, spreadsheet_cell

FORMULAS = [
    '=HYPERLINK("http://evil.example/x","click")',
    "+1+1",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1+1)",
    "\t=1+1",
    "\r=1+1",
    "  =1+1",
    "'=1+1",
]


@pytest.mark.parametrize("text", FORMULAS)
def test_a_formula_cell_is_quoted(text):
    cell = spreadsheet_cell(text)
    assert cell == "'" + text and from_spreadsheet_cell(cell) == text


def test_numbers_stay_numbers_and_plain_text_stays():
    for value in (-0.25, -3, 0, 2.5, True, None, float("nan")):
        assert spreadsheet_cell(value) is value
    for text in ("plain", "3", "it's", "a=b", "E0"):
        assert spreadsheet_cell(text) == text
    written = csv_text([{"delta": -0.25, "name": "-0.25", "note": None}], ["delta", "name", "note"])
    assert written.splitlines() == ["delta,name,note", "-0.25,'-0.25,"]  # text is text


@given(st.text())
def test_every_text_comes_back_and_none_starts_a_formula(text):
    cell = spreadsheet_cell(text)
    assert from_spreadsheet_cell(cell) == text
    assert not re.match(r"[\s]*[=+\-@]|[\t\r]", cell)


def test_csv_text_quotes_header_and_cells_alike():
    text = csv_text([{"=h": "=1+1", "b": 2}], ["=h", "b"])
    assert list(csv.reader(io.StringIO(text))) == [["'=h", "b"], ["'=1+1", "2"]]
    with pytest.raises(ValueError):
        csv_text([{"other": 1}], ["b"])
