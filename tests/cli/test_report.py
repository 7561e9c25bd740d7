import json
import shutil
import zipfile

import pytest
from typer.testing import CliRunner

from conftest import SCRIPTED_ROLES, replay, run_task
from occubench.cli import app
from occubench.dataset import TASKS_FILE, reference_suite_dir
from occubench.results._store import read_log_samples

runner = CliRunner()
SCHEMA = "occubench/schema-agent"


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("logs")
    for mode in ("E0", "E1"):
        run_task(
            folder,
            agent=[SCHEMA, replay("I am done.")],
            roles=SCRIPTED_ROLES,
            env_mode=mode,
            task_ids="11,70",
        )
    return folder


def test_report_prints_leaderboard_with_intervals_and_r(logs, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["report", str(logs), "--resamples", "200"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "Leaderboard" in out and "R 95% CI" in out
    first = next(line for line in out.splitlines() if "│ 1 " in line)
    assert SCHEMA in first and "[34.2, 100.0]" in first  # Wilson 2/2
    assert "Paired comparisons" in out and "not distinguishable" in out
    # E0 and E1 only: no R, and a line says so
    assert (
        f"Left out: R of {SCHEMA} @ occubench/echo-simulator at fc=2 fd=2 seed=0 code "
        "occubench: no E2, E3 run: R = min(E1, E2, E3) / E0 needs all four modes" in out
    )
    assert "groups of runs" not in out  # one task set, one protocol: one group
    assert list(tmp_path.iterdir()) == []  # nothing written without --format or --out


def test_runs_on_other_task_sets_are_reported_apart(tmp_path):
    logs = tmp_path / "logs"
    run_task(logs, agent=SCHEMA, roles=SCRIPTED_ROLES, task_ids="11,70")
    run_task(logs, agent=replay("Done."), roles=SCRIPTED_ROLES, task_ids="24")
    result = runner.invoke(app, ["report", str(logs), "--resamples", "50", "--format", "json"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "2 groups of runs that are not compared with each other" in out
    assert "1. 2 tasks (11, 70), occubench protocol: 1 run(s)" in out
    assert "2. 1 tasks (24), occubench protocol: 1 run(s)" in out
    boards = [
        line for line in out.splitlines() if "│ 1 " in line and "not measured" not in line
    ]  # the leaderboards' lines, not those of the table beside them
    assert len(boards) == 2 and SCHEMA in boards[0] and "occubench/replay" in boards[1]
    assert "│ 2 │ occubench/" not in out  # never ranked together
    folder = tmp_path / "logs-report"  # beside the logs, named in the output
    assert f"Wrote the report's files to {folder / 'group-1'}" in out
    assert (folder / "group-1" / "report.json").is_file()
    assert (folder / "group-2" / "report.json").is_file()


def test_report_writes_the_formats_asked_for(logs, tmp_path):
    out = tmp_path / "rep"
    result = runner.invoke(
        app,
        [
            "report",
            str(logs),
            "--format",
            "html",
            "-f",
            "json",
            "--out",
            str(out),
            "--resamples",
            "100",
        ],
    )
    assert result.exit_code == 0, result.output
    assert f"HTML report: {out / 'report.html'}" in result.output
    assert {p.name for p in out.iterdir()} == {
        "report.html",
        "report.json",
        "samples.jsonl",
        "plots",
    }
    assert (out / "plots" / "env_modes.svg").is_file()
    report = json.loads((out / "report.json").read_text())
    assert report["agents"] == ["occubench/replay", SCHEMA] and report["env_modes"] == ["E0", "E1"]


def test_report_with_prices_shows_cost(logs, tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text(
        "models:\n"
        + "".join(
            f"  {m}: {{input_per_mtok: 1.0, output_per_mtok: 2.0}}\n"
            for m in (
                SCHEMA,
                "occubench/replay",
                "occubench/echo-simulator",
                "occubench/scripted-judge",
            )
        )
    )
    result = runner.invoke(
        app, ["report", str(logs), "--prices", str(prices), "--by", "domain", "--resamples", "50"]
    )
    assert result.exit_code == 0, result.output
    assert "$/task" in result.output and "$0.0" in result.output
    assert "Completion rate by domain" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["/nonexistent/logs"], "no log file or folder"),
        (["{logs}", "--by", "colour"], "unknown breakdown colour"),
        (["{logs}", "--prices", "{tmp}/missing.yaml"], "missing.yaml"),
        (["{tmp}"], "no samples"),
        (["{logs}", "--twin-fidelity", "{tmp}/absent.json"], "absent.json: cannot be read"),
        (["{logs}", "--twin-fidelity", "{tmp}"], "cannot be read"),
    ],
)
def test_report_errors_are_clean(logs, tmp_path, args, message):
    args = [a.format(logs=logs, tmp=tmp_path) for a in args]
    result = runner.invoke(app, ["report", *args])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output


def test_a_simulator_answering_nan_is_summarized_and_reported(tmp_path):
    """A reply holding NaN, Infinity and -Infinity: Inspect logs them; every reader reads them.

    The careful agent follows the task's plan, whose first call carries the values; the
    echo simulator answers with them (``json.dumps`` writes ``NaN``).
    """
    data = tmp_path / "data"
    shutil.copytree(reference_suite_dir(), data)
    tasks = data / TASKS_FILE
    records = [json.loads(line) for line in tasks.read_text().splitlines()]
    task = records[0]
    call = '{"patient_id": "P-2231"}'
    assert call in task["solution_plan"]
    odd = '{"patient_id": "P-2231", "reading": NaN, "high": Infinity, "low": -Infinity}'
    task["solution_plan"] = task["solution_plan"].replace(call, odd)
    tasks.write_text("".join(json.dumps(r) + "\n" for r in records))
    logs = tmp_path / "logs"
    run = runner.invoke(
        app,
        [
            "run",
            "--agent-model",
            "occubench/careful",
            "--simulator-model",
            "occubench/echo-simulator",
            "--verifier-model",
            "occubench/scripted-judge",
            "--dataset",
            str(data),
            "--tasks",
            str(task["task_id"]),
            "--with-plan",
            "--display",
            "none",
            "--log-dir",
            str(logs),
        ],
    )
    assert run.exit_code == 0, run.output
    summary = [line for line in run.output.splitlines() if line.startswith("│ all ")]
    assert summary and summary[0].split("│")[2].strip() == "1"  # one sample scored
    (log,) = logs.rglob("*.eval")
    with zipfile.ZipFile(log) as archive:
        member = archive.read(f"samples/{task['task_id']}_epoch_1.json")
    assert b'"reading": NaN' in member or b'"reading":NaN' in member  # as Inspect wrote it
    for table in logs.rglob("*.rows.parquet"):
        table.unlink()  # the report reads the log itself, not the run's cached rows
    report = runner.invoke(app, ["report", str(logs), "--out", str(tmp_path / "report")])
    assert report.exit_code == 0, report.output
    assert "occubench/careful" in report.output
    samples = (tmp_path / "report" / "samples.csv").read_text().splitlines()
    assert len(samples) == 2 and str(task["task_id"]) in samples[1]
    (document,) = read_log_samples(str(log), [(task["task_id"], 1)]).values()
    steps = document["store"]["Episode:steps"]
    observed = steps[0]["observation"]["arguments"]
    assert observed["reading"] != observed["reading"]  # NaN
    assert (observed["high"], observed["low"]) == (float("inf"), float("-inf"))


def test_report_shows_fidelity_against_the_twins_beside_each_line(logs, tmp_path):
    from occubench.results import read_runs
    from occubench.twins import Feeding, StepMatch, TwinFidelity, write_fidelity

    rows = read_runs([str(logs)])
    envs = sorted({r.env_name for r in rows})
    step = {"trajectory": "p", "step": 0, "tool": "t", "fields_changed": 0, "determined": 2}
    steps = [
        StepMatch(environment=env, outcome_match=True, determined_matched=1, **step) for env in envs
    ]
    simulator = rows[0].simulator_model or ""
    record = TwinFidelity(
        simulator=simulator, feeding=Feeding.TWIN, tolerance=0.01, environments=envs, steps=steps
    )
    path = tmp_path / "twin.json"
    write_fidelity(path, [record])
    result = runner.invoke(
        app,
        ["report", str(logs), "--resamples", "50", "--twin-fidelity", str(path)],
        env={"COLUMNS": "400"},
    )
    assert result.exit_code == 0, result.output
    assert "Simulators against the twins" in result.output
    assert f"fields 0.50, outcome 1.00 (n={len(envs)})" in result.output
