"""The public release's result format, both ways: an occubench run written as the release's
harness writes one, and a release results folder read beside occubench runs."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from occubench.cli import app
from occubench.export import write_release
from occubench.results import (
    RELEASE_ARGS,
    RELEASE_RESULTS,
    Harness,
    read_release_results,
    read_runs,
)

RELEASE_LINE_FIELDS = [
    "task_id", "task_scenario_name", "category", "domain", "difficulty_level", "agent_model",
    "world_model", "env_mode", "fault_count", "fault_duration", "with_plan", "is_correct",
    "feedback", "step_count", "trajectory",
]  # fmt: skip
"""The keys of a results.jsonl line, in the order the release's evaluate.py writes them."""
RELEASE_ARG_FIELDS = [
    "agent_model", "world_model", "verifier_model", "env_mode", "fault_count",
    "fault_duration", "with_plan", "eval_data", "scenario_pool", "config_dir", "output_dir",
    "run_name", "max_workers", "task_ids", "categories", "api_key", "base_url", "debug",
]  # fmt: skip
"""The keys of args.json: the release's command-line arguments, in their order."""


def flat(text: str) -> str:
    return " ".join(text.split())


def test_a_demo_run_exported_reads_back_by_the_releases_field_names(demo_logs, tmp_path):
    out = tmp_path / "results"
    written = write_release([demo_logs], out)
    assert len(written.folders) == 12 and written.samples == 120 and written.left_out == 0
    names = sorted(f.name for f in written.folders)
    assert "occubench_careful__occubench_canned__E0" in names
    assert "occubench_careful__occubench_canned__E1__fc2_fd2" in names
    for folder in written.folders:
        args = json.loads((folder / RELEASE_ARGS).read_text())
        assert list(args) == RELEASE_ARG_FIELDS and args["run_name"] == folder.name
        lines = [json.loads(x) for x in (folder / RELEASE_RESULTS).read_text().splitlines()]
        assert len(lines) == 10
        for line in lines:
            assert list(line) == RELEASE_LINE_FIELDS  # field for field, in order
            assert line["trajectory"].startswith("\n[Agent Action]: Call tool `")
            assert line["step_count"] == line["trajectory"].count("[Agent Action]")
            if line["env_mode"] == "E0":
                assert line["fault_count"] == 0 and line["fault_duration"] == 0

    ours = {(r.agent_model, r.env_mode, r.task_id): r.passed for r in read_runs([demo_logs])}
    back = read_runs([out])
    assert len(back) == 120 and all(r.harness is Harness.RELEASE for r in back)
    assert {(r.agent_model, r.env_mode, r.task_id): r.passed for r in back} == ours
    assert all(r.seed is None and r.tokens == {} and r.votes_total is None for r in back)


def release_folder(root, *, bad: bool = False):
    """A run folder as the release's harness writes one (our own values in its fields)."""
    folder = root / "qwen3.5-plus__qwen3.5-plus__E0"
    folder.mkdir(parents=True)
    args = dict.fromkeys(RELEASE_ARG_FIELDS)  # task_ids, categories, keys, run name: null
    args.update(agent_model="qwen3.5-plus", world_model="qwen3.5-plus", env_mode="E0",
                fault_count=2, fault_duration=2, with_plan=False, max_workers=8, debug=False,
                eval_data="data/eval_benchmark_solvable.jsonl", output_dir="./results",
                scenario_pool="data/task_scenario_all_pool.jsonl",
                config_dir="data/world_model_configs")  # fmt: skip
    (folder / RELEASE_ARGS).write_text(json.dumps(args, indent=2))
    lines = []
    for task_id, correct in ((1001, True), (1002, False)):
        line = {
            "task_id": task_id, "task_scenario_name": "Emergency Department Triage",
            "category": "Healthcare & Life Sciences", "domain": "Emergency Medicine",
            "difficulty_level": 2, "agent_model": "qwen3.5-plus", "world_model": "qwen3.5-plus",
            "env_mode": "E0", "fault_count": 0, "fault_duration": 0, "with_plan": False,
            "is_correct": correct, "feedback": "The agent checked the vitals.",
            "step_count": 3, "trajectory": "\n[Agent Action]: Call tool `get_patient_vitals` ...\n",
        }  # fmt: skip
        if bad and task_id == 1002:
            del line["is_correct"]
        lines.append(json.dumps(line, ensure_ascii=False))
    (folder / RELEASE_RESULTS).write_text("\n".join(lines) + "\n")
    return folder


def test_a_release_results_folder_is_reported_beside_an_occubench_run(demo_logs, tmp_path):
    release_folder(tmp_path / "results")
    result = CliRunner().invoke(
        app,
        ["report", str(demo_logs), str(tmp_path / "results"), "--out", str(tmp_path / "r")],
        terminal_width=200,
    )
    assert result.exit_code == 0, result.output
    said = flat(result.output)
    assert "2 groups of runs that are not compared with each other" in said
    assert "paper protocol, the release's harness" in said  # marked, never pooled with ours
    assert "qwen3.5-plus" in said and "not recorded" in said  # its tokens: not zero
    (rows,) = [[r for r in read_runs([tmp_path / "results"])]]
    assert [r.passed for r in rows] == [True, False] and rows[0].difficulty == 2


def test_a_release_line_missing_a_field_is_one_line_naming_it(tmp_path):
    folder = release_folder(tmp_path / "results", bad=True)
    result = CliRunner().invoke(app, ["report", str(tmp_path / "results")])
    assert result.exit_code == 2
    said = "".join(result.output.split())  # the path may wrap anywhere
    assert f"{folder / RELEASE_RESULTS}:2:is_correct:Fieldrequired" in said
    assert "Traceback" not in result.output
    assert read_release_results  # the reader is public for the release's own tools
