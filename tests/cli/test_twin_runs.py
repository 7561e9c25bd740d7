"""Runs with the twin as simulator (``--simulator-model occubench/twin``), end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log
from typer.testing import CliRunner

from occubench.cli import app
from occubench.results import read_runs
from twin_fixtures import ENV, write_counters

runner = CliRunner()

TRIAGE = "1001"
"""The reference task whose environment has a twin in the package."""
TWIN_RUN = [
    "run",
    "--agent-model",
    "occubench/careful",
    "--simulator-model",
    "occubench/twin",
    "--verifier-model",
    "occubench/scripted-judge",
    "--dataset",
    "reference",
    "--with-plan",
    "--display",
    "none",
]


def run(tmp_path: Path, *settings: str, tasks: str = TRIAGE) -> tuple[int, str, list]:
    logs = tmp_path / "logs"
    result = runner.invoke(app, [*TWIN_RUN, "--tasks", tasks, "--log-dir", str(logs), *settings])
    found = sorted(str(p) for p in logs.rglob("*.eval"))
    return result.exit_code, result.output, read_runs(found, cache=False) if found else []


@pytest.mark.parametrize(
    "settings",
    [
        ("--protocol", "paper"),
        ("--protocol", "occubench"),
        ("--protocol", "occubench", "--state-mode", "explicit"),
    ],
)
def test_the_careful_agent_solves_the_task_on_its_twin(tmp_path, settings):
    code, output, rows = run(tmp_path, *settings)
    assert code == 0, output
    assert [(r.passed, r.error, r.faults) for r in rows] == [(True, None, [])]
    assert rows[0].simulator_model == "occubench/twin" and rows[0].tool_calls >= 3


@pytest.mark.parametrize(
    ("mode", "protocol"),
    [
        ("E1", ("--protocol", "occubench")),
        ("E2", ("--protocol", "occubench")),
        ("E3", ("--protocol", "occubench")),
        ("E1", ("--protocol", "paper", "--fault-engine", "code")),
    ],
)
def test_code_places_faults_on_the_twins_answers(tmp_path, mode, protocol):
    code, output, rows = run(tmp_path, *protocol, "--env-mode", mode)
    assert code == 0, output
    [row] = rows
    assert row.error is None and row.faults and all(f.applied for f in row.faults)
    explicit = {f.explicit for f in row.faults}
    assert explicit == {"E1": {True}, "E2": {False}, "E3": explicit}[mode]
    assert row.passed  # the careful agent retries past every fault


@pytest.mark.parametrize(
    ("settings", "tasks", "said"),
    [
        (("--env-mode", "E1"), TRIAGE, "follows no fault rule"),
        (("--simulator-model", "occubench/canned", "--twins", "."), TRIAGE, "--twins is read by"),
        (("--twins", "no-such-folder"), TRIAGE, "not a folder of twins"),
    ],
)
def test_a_run_the_twin_cannot_answer_is_one_line_and_exit_2(tmp_path, settings, tasks, said):
    code, output, rows = run(tmp_path, *settings, tasks=tasks)
    assert code == 2 and not rows, output
    assert said in " ".join(output.split()) and "Traceback" not in output


def test_a_run_whose_environment_has_no_twin_is_refused_naming_it(tmp_path):
    data, _ = write_counters(tmp_path)  # its twin is in a folder the run does not name
    code, output, rows = run(tmp_path, "--dataset", str(data), "--allow-missing-fields", tasks="1")
    assert code == 2 and not rows, output
    assert f"no twin in the package for the environment(s) {ENV}" in " ".join(output.split())


FOLDER_TWIN = """
from occubench.twins import Answer, tool
from occubench.twins.envs.ref_emergency_department_triage import EmergencyTriageTwin


class MarkedTriage(EmergencyTriageTwin):
    @tool
    def get_triage_protocol(self, arguments):
        answer = super().get_triage_protocol(arguments)
        return Answer(observation={**answer.observation, "answered_by": "folder-twin"})
"""


def test_a_named_folder_of_twins_answers_the_run(tmp_path):
    folder = tmp_path / "twins"
    folder.mkdir()
    (folder / "triage.py").write_text(FOLDER_TWIN)
    code, output, rows = run(tmp_path, "--protocol", "occubench", "--twins", str(folder))
    assert code == 0, output
    log = read_eval_log(str(next((tmp_path / "logs").rglob("*.eval"))))
    assert log.samples and "folder-twin" in log.samples[0].model_dump_json()
    assert rows[0].passed


def test_a_world_recorded_with_the_twin_replays(tmp_path):
    world = str(tmp_path / "world")
    code, output, rows = run(tmp_path / "record", "--protocol", "occubench", "--world", world)
    assert code == 0, output
    code, output, replayed = run(
        tmp_path / "replay", "--protocol", "occubench", "--world", world, "--world-mode", "replay"
    )
    assert code == 0, output
    assert [r.passed for r in replayed] == [True] and replayed[0].world_hits >= 3


def test_env_try_answers_from_the_twin_of_a_new_env(tmp_path):
    made = runner.invoke(
        app, ["env", "new", "shelf", "--industry", "I", "--domain", "D", "--dir", str(tmp_path)]
    )
    assert made.exit_code == 0, made.output
    asked = ["env", "try", str(tmp_path), "--env", "shelf", "--tool", "get_record"]
    asked += ["--args", '{"record_id": "R-1001"}', "--simulator-model", "occubench/twin", "--json"]
    result = runner.invoke(app, [*asked, "--twins", str(tmp_path / "twins")])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["observation"]["record_id"] == "R-1001"
    refused = runner.invoke(app, asked)  # the folder is not named: no twin of the env
    assert refused.exit_code == 2 and "no twin in the package" in " ".join(refused.output.split())
