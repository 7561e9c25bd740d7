"""The commands' tests read tables row by row: the consoles are wide while they run."""

from __future__ import annotations

import pytest

from occubench.cli import _common

WIDTH = 220
"""Columns of the commands' consoles in these tests: every table row on one line."""


@pytest.fixture(autouse=True)
def wide_console(monkeypatch):
    for console in (_common.console, _common.err_console):
        monkeypatch.setattr(console, "width", WIDTH)
