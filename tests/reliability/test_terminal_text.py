"""Terminal output strips control sequences: the dataset and the models are input too.

Names with control characters are refused when the dataset loads (they would reach
Inspect's own result display too); what remains printable, rich markup included, is
shown as written in the run summary.
"""

from __future__ import annotations

import json
import re

from conftest import SCRIPTED_MODEL_ARGS
from occubench.cli._common import terminal_rows
from occubench.dataset import SCENARIOS_FILE, TASKS_FILE
from occubench.results import read_runs

ESCAPES = "Evil\x1b[2J\x1b]0;pwned\x07 Corp\x9b31m\u202eX\x00\x08"
"""Clear screen, retitle the window, 8-bit CSI, bidi override, NUL, backspace."""
MARKUP = "[blink]Evil[/blink] [b]Corp"
"""Rich markup: shown as written, never as style. (A stray closing tag such as "[/]" would
crash Inspect's own result display, which renders metric names, grouped by industry, as
markup: an Inspect issue, outside occubench's summary.)"""
CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def test_terminal_rows_neutralise_names(tmp_path):
    from conftest import run_task

    (row,) = read_runs([run_task(tmp_path, task_ids="11").location])
    hostile = row.model_copy(update={"industry": ESCAPES + MARKUP, "domain": "Ok"})
    (safe,) = terminal_rows([hostile])
    assert not CONTROLS.search(safe.industry) and "pwned" not in safe.industry
    assert safe.industry == r"Evil CorpX\[blink]Evil\[/blink] \[b]Corp"
    assert safe.domain == "Ok" and safe.scenario == row.scenario
    assert (safe.passed, safe.task_id) == (row.passed, row.task_id)


def with_industry(dataset, name: str) -> None:
    """Rename the industry of tasks 11 and 24 in the scenario pool."""
    tasks = [json.loads(line) for line in (dataset / TASKS_FILE).read_text().splitlines()]
    renamed = {t["task_scenario_name"] for t in tasks if t["task_id"] in (11, 24)}
    pool = dataset / SCENARIOS_FILE
    scenarios = [json.loads(line) for line in pool.read_text().splitlines() if line.strip()]
    for s in scenarios:
        if s["task_scenario_name"] in renamed:
            s["category"] = name
    pool.write_text("".join(json.dumps(s) + "\n" for s in scenarios))


def test_names_with_escapes_are_refused_cleanly(occubench_run, release_copy, tmp_path):
    with_industry(release_copy, ESCAPES)
    result = occubench_run(
        "--dataset",
        str(release_copy),
        "--log-dir",
        str(tmp_path / "logs"),
        models=SCRIPTED_MODEL_ARGS,
    )
    assert result.exit_code == 2, result.output
    assert f"{SCENARIOS_FILE}:" in result.output and "control characters in a name" in result.output
    assert not CONTROLS.search(result.output) and "Traceback" not in result.output


def test_run_summary_shows_markup_in_names_as_written(occubench_run, release_copy, tmp_path):
    with_industry(release_copy, MARKUP)
    result = occubench_run(
        "--dataset",
        str(release_copy),
        "--tasks",
        "11,24",
        "--log-dir",
        str(tmp_path / "logs"),
        models=SCRIPTED_MODEL_ARGS,
    )
    assert result.exit_code == 0, result.output
    assert not CONTROLS.search(result.output)
    row = next(line for line in result.output.splitlines() if "Corp" in line)
    assert MARKUP in row and " 2 " in row  # both tasks, under the name as written
