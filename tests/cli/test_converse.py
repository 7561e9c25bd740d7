"""``occubench converse`` on the public sample with the scripted generator."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from occubench.cli import _common, app
from occubench.dataset import load_dataset
from occubench.errors import ExitCode
from occubench.synthesis import CONVERSION_FILE

runner = CliRunner()


@pytest.fixture(autouse=True)
def quiet_wide(monkeypatch):
    """Lines unwrapped; Inspect's own display off (the command would set it)."""
    monkeypatch.setenv("INSPECT_DISPLAY", "none")
    for console in (_common.console, _common.err_console):
        monkeypatch.setattr(console, "width", 200)


def converse(dataset: str, out: str):
    args = ["converse", "--dataset", dataset, "--out", out]
    return runner.invoke(app, [*args, "--generator-model", "occubench/scripted-generator"])


def test_it_converts_the_sample_and_never_overwrites(public_sample, tmp_path):
    out = tmp_path / "out"
    done = converse(str(public_sample), str(out))
    assert done.exit_code == 0, done.output
    assert f"Converted 10 of 10 task(s) into {out}" in done.output
    assert (out / CONVERSION_FILE).is_file()
    assert all(t.user is not None for t in load_dataset(out).tasks)
    again = converse(str(public_sample), str(out))
    assert again.exit_code == ExitCode.BAD_INPUT
    assert "already holds a dataset" in again.output and "Traceback" not in again.output


def test_a_bad_dataset_is_one_message(tmp_path):
    done = converse(str(tmp_path / "missing"), str(tmp_path / "out"))
    assert done.exit_code == ExitCode.BAD_INPUT
    assert "dataset folder not found" in done.output and "Traceback" not in done.output


def test_nothing_converted_exits_nothing_made(tmp_path):
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "eval_benchmark_solvable.jsonl").write_text("")
    (folder / "task_scenario_all_pool.jsonl").write_text("")
    done = converse(str(folder), str(tmp_path / "out"))
    assert done.exit_code == ExitCode.NOTHING_MADE
    assert "Nothing converted" in done.output
