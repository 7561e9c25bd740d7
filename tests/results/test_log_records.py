"""Every writer's records read back: the runs whose logs every reader refused (issue 36).

Two writers stored step records the typed readers refused, and every reader then refused
the whole log: an online check whose re-ask gave no usable answer (``check`` without
``reask_failures``) and a simulator answer that could not be parsed under the paper
protocol (a step without ``observation``). Each is run here end to end and its log read
by every reader: the rows, the report command, trajectories, the failure taxonomy's
reader. A log with a record no reader can read still reports its other samples, naming
what it left out.
"""

from __future__ import annotations

import json
import zipfile

from inspect_ai.model import ModelOutput, ModelUsage, get_model
from typer.testing import CliRunner

from conftest import run_task
from occubench.agent import episode_in, read_episode
from occubench.cli import app
from occubench.dataset import reference_suite_dir
from occubench.results import read_runs, read_trajectories, unread_lines


def simulator(answer):
    """A mockllm simulator whose every answer is ``answer(messages)``."""

    def generate(input, tools, tool_choice, config):
        out = ModelOutput.from_content("mockllm/model", answer(input))
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    return get_model("mockllm/model", custom_outputs=generate, memoize=False)


def off_schema_then_unusable(messages):
    """An answer off every tool's example (fails ``schema``); prose when re-asked about it."""
    if any("harness_check" in m.text for m in messages if m.role != "system"):
        return "I cannot answer that."
    return '{"zzz": 1}'


def stored_steps(log_path):
    """The steps of each sample as the log file holds them (JSON, as Inspect wrote them)."""
    with zipfile.ZipFile(log_path) as z:
        return [
            json.loads(z.read(n))["store"]["Episode:steps"]
            for n in z.namelist()
            if n.startswith("samples/")
        ]


def read_by_every_reader(log, tmp_path):
    rows = read_runs([log.location], cache=False)
    assert rows and all(r.unread == [] for r in rows), [r.unread for r in rows]
    assert read_runs([log.location]) == rows  # through the results store too
    assert read_runs([log.location]) == rows  # and read back from it
    trajectories = read_trajectories(rows)
    assert len(trajectories) == len(rows) and all(t.turns for t in trajectories)
    for sample in log.samples:
        assert read_episode(sample.store)[1] == []
    report = CliRunner().invoke(app, ["report", log.location, "--out", str(tmp_path / "rep")])
    assert report.exit_code == 0, report.output
    assert "could not be read" not in report.output
    return rows


def test_a_check_whose_reask_was_unusable_is_read_back(tmp_path):
    log = run_task(
        tmp_path / "logs",
        agent="occubench/careful",
        roles={
            "simulator": simulator(off_schema_then_unusable),
            "verifier": "occubench/scripted-judge",
        },
        dataset=str(reference_suite_dir()),
        task_ids=[1001],
        sim_checks=True,
        with_plan=True,
    )
    steps = [s for sample in stored_steps(log.location) for s in sample]
    checks = [s["check"] for s in steps if "check" in s]
    assert checks and all("reask_failures" not in c for c in checks)  # as Inspect writes it
    rows = read_by_every_reader(log, tmp_path)
    assert rows[0].sim_check_failures.get("schema", 0) >= 1
    episode = episode_in(log.samples[0].store)
    assert all(s.check.reask_failures is None for s in episode.steps if s.check)


def test_an_unparsed_simulator_answer_is_read_back(tmp_path):
    log = run_task(
        tmp_path / "logs",
        roles={
            "simulator": simulator(lambda messages: "no JSON at all"),
            "verifier": "occubench/scripted-judge",
        },
        protocol="paper",
    )
    steps = [s for sample in stored_steps(log.location) for s in sample]
    assert steps and all("observation" not in s and s["parse_failed"] for s in steps)
    read_by_every_reader(log, tmp_path)
    episode = episode_in(log.samples[0].store)
    assert all(s.observation is None and s.parse_failed for s in episode.steps)


def test_a_record_no_reader_can_read_leaves_the_rest_reported(tmp_path):
    log = run_task(tmp_path / "logs")
    path = log.location
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    samples = sorted(n for n in members if n.startswith("samples/"))
    assert len(samples) >= 3
    first = json.loads(members[samples[0]])
    first["store"]["Episode:steps"][0]["check"] = {"kept": "neither"}  # a step no one reads
    members[samples[0]] = json.dumps(first).encode()
    second = json.loads(members[samples[1]])
    second["scores"]["occubench_scorer"]["metadata"] = {"votes": "many"}  # a grade
    members[samples[1]] = json.dumps(second).encode()
    members[samples[2]] = b'{"id": 1, "epoch'  # a torn sample
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)

    rows = read_runs([path], cache=False)
    assert len(rows) == len(samples)  # every sample has its row
    by_member = {f"samples/{r.task_id}_epoch_{r.epoch}.json": r for r in rows}
    step_row = by_member[samples[0]]
    assert step_row.passed is not None  # its verdict stands; one step left out
    assert [u.split(":")[0] for u in step_row.unread] == ["steps[0]"]
    grade_row = by_member[samples[1]]
    assert grade_row.passed is None and "its grade cannot be read (votes" in grade_row.error
    torn = by_member[samples[2]]
    assert torn.passed is None and torn.unread and "cannot be read" in torn.error
    others = [r for m, r in by_member.items() if m not in samples[:3]]
    assert all(r.unread == [] and r.error is None for r in others)

    trajectories = read_trajectories(rows)  # a torn sample's is empty, the others' read
    assert [bool(t.turns) for t in trajectories] == [r is not torn for r in rows]

    lines = unread_lines(rows)
    assert lines[0].startswith("3 record(s) of 3 sample(s) could not be read")
    report = CliRunner().invoke(app, ["report", path, "--out", str(tmp_path / "rep")])
    assert report.exit_code == 0, report.output
    assert "3 record(s) of 3 sample(s) could not be read" in report.output
    assert "steps[0]" in report.output
