"""The whole pipeline offline: funnel, repair loop, selection, dataset, resume."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from occubench.dataset import load_dataset
from occubench.scripted._reply import Reply
from occubench.scripted._synthesis_world import ScriptedGenerator
from occubench.synthesis import (
    DATASET_DIR,
    MANIFEST_FILE,
    DropStage,
    Manifest,
    run_synthesis,
)
from occubench.task import occubench
from synthesis.world import (
    DOCK,
    PHISHING,
    PROFILES,
    SETTINGS,
    TRIAGE,
    World,
    mock,
    scenarios,
    scripted,
)


def funnel(manifest: Manifest) -> dict[str, tuple]:
    return {
        f.scenario: (
            f.subtopics,
            f.envs_valid,
            f.generated,
            f.valid,
            f.solvable,
            f.repaired,
            f.non_trivial,
            f.selected,
            f.selection.difficulty if f.selection else None,
        )
        for f in manifest.funnel
    }


def test_funnel_counts_every_stage(synthesized) -> None:
    # sub-topics, envs valid, generated, valid, solvable, repaired, non-trivial, selected, level
    assert funnel(synthesized.manifest) == {
        TRIAGE: (2, 1, 3, 3, 3, 0, 2, 1, 3),
        DOCK: (2, 2, 6, 6, 3, 3, 2, 1, 3),
        PHISHING: (2, 2, 6, 6, 6, 0, 3, 1, 2),
    }
    assert synthesized.manifest.totals()["selected"] == len(synthesized.manifest.tasks) == 3


def test_every_drop_has_a_stage_and_reason(synthesized) -> None:
    drops = {d.item: d for d in synthesized.manifest.drops}
    invalid = drops["emergency-department-triage/st02"]
    assert invalid.stage is DropStage.VALIDATE
    assert "duplicate tool name 'lookup_record'" in invalid.reason
    assert "'int' is not valid" in invalid.reason
    for level in (1, 2, 3):
        stuck = drops[f"dock-appointment-scheduling/st02/L{level}"]
        assert stuck.stage is DropStage.SOLVABILITY
        assert "0/1 runs with the plan passed after 2 repair(s)" in stuck.reason
        trivial = drops[f"reported-phishing-triage/st02/L{level}"]
        assert (trivial.stage, trivial.reason) == (
            DropStage.CALIBRATION,
            "trivial: 3/3 runs without the plan passed",
        )
    assert drops["emergency-department-triage/st01/L1"].stage is DropStage.CALIBRATION
    unselected = drops["reported-phishing-triage/st01/L3"]
    assert unselected.stage is DropStage.SELECTION
    assert "level is 2" in unselected.reason and "L3 0/3" in unselected.reason
    # every generated task is either selected or dropped exactly once
    task_drops = [d for d in synthesized.manifest.drops if d.item.count("/") == 2]
    assert len(task_drops) + len(synthesized.manifest.tasks) == 15


def test_repair_loop(synthesized) -> None:
    work = synthesized.out / "work" / "dock-appointment-scheduling"
    fixed = work / "st01" / "L2"
    assert json.loads((fixed / "solvability-0.json").read_text())["value"]["passed"] == 0
    repair = json.loads((fixed / "repair-1.json").read_text())["value"]
    assert repair["diagnosis"] == "impossible_state" and repair["changed"] == ["config"]
    records = repair["env"]["task_initial_state"]["records"]
    assert "REC-7" in [r["record_id"] for r in records]
    assert json.loads((fixed / "solvability-1.json").read_text())["value"]["passed"] == 1
    assert not (fixed / "repair-2.json").exists()
    stuck = work / "st02" / "L2"
    assert sorted(p.name for p in stuck.iterdir()) == [
        "repair-1.json",
        "repair-2.json",
        "solvability-0.json",
        "solvability-1.json",
        "solvability-2.json",
    ]
    # the repair prompt showed the generator what went wrong in the failed runs
    repairs = [p for p in synthesized.world.generator_prompts if p.startswith("# Stage: repair")]
    assert len(repairs) == 3 + 3 * 2
    assert all(
        "answer lacks ['Dana Ortiz']" in p and "no record with record_id REC-7" in p
        for p in repairs
    )
    selected = {t.instance: t for t in synthesized.manifest.tasks}
    assert selected["dock-appointment-scheduling/st01/L3"].repairs == 1


def test_generator_calls_per_stage(synthesized) -> None:
    stages = synthesized.world.stages()
    assert stages.count("sub-topics and reference document") == 3
    # 5 valid environments, the invalid one asked 1 + 2 re-asks
    assert stages.count("environment configuration") == 5 + 3
    assert stages.count("tasks") == 5
    assert stages.count("repair") == 3 + 3 * 2
    assert len(stages) == 25


def test_dataset_loads_and_runs(synthesized, tmp_path: Path) -> None:
    root = synthesized.out / DATASET_DIR
    dataset = load_dataset(root)
    # numbered in catalog order
    assert [(t.task_id, t.task_scenario_name, t.difficulty_level) for t in dataset.tasks] == [
        (1, PHISHING, 2),
        (2, DOCK, 3),
        (3, TRIAGE, 3),
    ]
    for task in dataset.tasks:
        assert task.solution_plan and task.checks and task.expected_tool_calls
        assert task.env_name.startswith("env_")
        assert dataset.industry(task) != "Unknown"
    manifest = Manifest.model_validate_json((root / MANIFEST_FILE).read_text())
    assert manifest == synthesized.manifest
    assert set(manifest.tokens) == {"generator", "agent", "simulator", "verifier"}
    assert manifest.tokens["generator"].total_tokens > 0
    models = World().models()
    [log] = inspect_eval(
        occubench(dataset=str(root)),
        model=models.agent,
        model_roles={"simulator": models.simulator, "verifier": models.verifier},
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success" and len(log.samples) == 3


def test_rerun_regenerates_nothing(synthesized) -> None:
    world = World()
    logs_before = sorted(synthesized.out.glob("runs/*/logs/*.eval"))
    manifest = run_synthesis(
        scenarios(TRIAGE, DOCK, PHISHING), world.models(), synthesized.out, SETTINGS
    )
    assert world.generator_prompts == [] and world.agent_calls == 0
    assert sorted(synthesized.out.glob("runs/*/logs/*.eval")) == logs_before
    assert manifest == synthesized.manifest
    changed = SETTINGS.model_copy(update={"runs_without_plan": 4})
    with pytest.raises(ValueError, match=r"runs_without_plan: 3 -> 4"):
        run_synthesis(scenarios(TRIAGE), world.models(), synthesized.out, changed)


class Interrupted(RuntimeError):
    pass


def test_interrupted_run_resumes(tmp_path: Path) -> None:
    scripted = ScriptedGenerator(PROFILES)

    def dies_at_tasks(messages, tools):
        reply = scripted(messages, tools)
        if messages[1].text.startswith("# Stage: tasks"):
            raise Interrupted("provider down")
        return reply

    settings = SETTINGS.model_copy(update={"run_batch": 2})  # 3 tasks: two evals per stage
    with pytest.raises(Interrupted):
        run_synthesis(scenarios(TRIAGE), World().models(dies_at_tasks), tmp_path, settings)
    done = sorted(tmp_path.glob("work/*/**/*.json"))
    assert {p.name for p in done} == {"plan.json", "env.json"}
    stamps = {p: p.stat().st_mtime_ns for p in done}

    world = World()
    manifest = run_synthesis(scenarios(TRIAGE), world.models(), tmp_path, settings)
    assert world.stages() == ["tasks"]  # only the missing step: one valid env's tasks
    assert len(list((tmp_path / "runs").iterdir())) == 4
    assert {p: p.stat().st_mtime_ns for p in done} == stamps
    assert funnel(manifest) == {TRIAGE: (2, 1, 3, 3, 3, 0, 2, 1, 3)}


def test_generation_failure_is_a_recorded_drop(tmp_path: Path) -> None:
    world = World()
    manifest = run_synthesis(
        scenarios(TRIAGE),
        world.models(lambda messages, tools: _text("Sorry, no JSON today.")),
        tmp_path,
        SETTINGS,
    )
    assert len(world.generator_calls) == 3  # the prompt, then 2 re-asks in the same conversation
    last = world.generator_calls[-1]
    assert [m.role for m in last] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert "Reply again" in last[-1].text and "holds no JSON object" in last[-1].text
    [drop] = manifest.drops
    assert drop.item == "emergency-department-triage" and drop.stage is DropStage.GENERATE
    assert "holds no JSON object" in drop.reason
    assert manifest.tasks == [] and funnel(manifest)[TRIAGE][0] == 0


def _text(content: str) -> Reply:
    return Reply(content=content)


def test_runs_that_error_are_dropped_not_repaired(tmp_path: Path) -> None:
    world = World()
    no_verdict = mock(lambda m, t, c, g: scripted(lambda m, t: _text("no verdict"), m, t))
    models = replace(world.models(), verifier=no_verdict)
    settings = SETTINGS.model_copy(update={"subtopics": 1})
    manifest = run_synthesis(scenarios(TRIAGE), models, tmp_path, settings)
    assert "repair" not in world.stages()
    assert [(d.item, d.stage) for d in manifest.drops] == [
        (f"emergency-department-triage/st01/L{n}", DropStage.SOLVABILITY) for n in (1, 2, 3)
    ]
    assert all(
        "runs with the plan errored" in d.reason and "judge votes were invalid" in d.reason
        for d in manifest.drops
    )
