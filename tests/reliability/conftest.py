"""Helpers of the reliability tests: `occubench run` in-process, against the local server."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from typer.testing import CliRunner, Result

from conftest import HTTP_MODEL_ARGS
from occubench.cli import _common, app


@pytest.fixture(autouse=True)
def wide_console(monkeypatch):
    """Tables fit on one line each, so assertions can read rows."""
    for console in (_common.console, _common.err_console):
        monkeypatch.setattr(console, "width", 200)


@pytest.fixture
def http_models() -> list[str]:
    """The model options of a run through the local server."""
    return list(HTTP_MODEL_ARGS)


@pytest.fixture
def occubench_run(release_dir, monkeypatch, tmp_path) -> Callable[..., Result]:
    """Invoke ``occubench run`` in-process (one worker, no display) on the sample.

    Under the occubench protocol unless the arguments name one: these tests check the
    hardened protocol's retries and error accounting.
    """
    monkeypatch.chdir(tmp_path)

    def invoke(*args: str, models: list[str] = HTTP_MODEL_ARGS) -> Result:
        base = [
            "run",
            *models,
            "--dataset",
            str(release_dir),
            "--display",
            "none",
            "--workers",
            "1",
        ]
        if "--protocol" not in args:
            base += ["--protocol", "occubench"]
        return CliRunner().invoke(app, [*base, *args], terminal_width=200)

    return invoke
