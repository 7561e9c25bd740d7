"""The fidelity audit: flawed scripted simulators are caught by their own metric."""

import pytest
from inspect_ai.model import get_model

from occubench.dataset import EnvConfig, TaskRecord, reference_suite_dir
from occubench.fidelity import (
    AuditReport,
    FidelityMetric,
    ProbeKind,
    ProbeResult,
    TrajectoryResult,
    env_trajectories,
    id_values,
    is_id_key,
    known_values,
    run_audit,
    trajectory_checks,
    unknown_value,
)

CANNED = "occubench/canned"
FLAWED = {
    "occubench/fabricating": {FidelityMetric.FABRICATION, FidelityMetric.UNKNOWN_ID},
    "occubench/omitting": {FidelityMetric.OMISSION},
    "occubench/inconsistent": {FidelityMetric.DETERMINISM},
    "occubench/rule-inventing": {FidelityMetric.RULE_INVENTION},
}


@pytest.fixture(scope="module")
def report() -> AuditReport:
    return run_audit(
        [CANNED, *FLAWED], reference_suite_dir(), verifier="occubench/rule-judge", rule_checks=40
    )


def by_model(report: AuditReport):
    return {s.model: s for s in report.simulators}


def test_canned_simulator_is_faithful_on_every_part(report):
    canned = by_model(report)[CANNED]
    assert canned.score == 1.0
    for metric in FidelityMetric:
        assert canned.parts[metric].score == 1.0 and canned.parts[metric].checked > 0, metric
    assert not any(e.flags for e in canned.environments)
    assert not canned.errors


@pytest.mark.parametrize("model", list(FLAWED))
def test_each_flaw_is_caught_by_its_own_metric_only(report, model):
    canned, flawed = by_model(report)[CANNED], by_model(report)[model]
    expected = FLAWED[model]
    for metric in FidelityMetric:
        if metric in expected:
            assert flawed.parts[metric].score <= 0.7, (model, metric)
        else:
            assert flawed.parts[metric].score == canned.parts[metric].score == 1.0, (model, metric)
    assert flawed.score < canned.score
    flagged = {f.metric for e in flawed.environments for f in e.flags}
    assert flagged == expected
    assert sum(bool(e.flags) for e in flawed.environments) >= 9  # nearly every env shows it
    for env in flawed.environments:
        for flag in env.flags:
            assert flag.examples and flag.score < 1


def test_flag_examples_say_what_failed(report):
    envs = {s.model: {e.env_name: e for e in s.environments} for s in report.simulators}
    triage = "ref_emergency_department_triage"
    examples = {m: [x for f in envs[m][triage].flags for x in f.examples] for m in FLAWED}
    assert any("ED-18" in x for x in examples["occubench/fabricating"])  # the invented bed
    assert any("P-9999" in x for x in examples["occubench/fabricating"])  # the unknown patient
    assert any("lacks ED-11" in x for x in examples["occubench/omitting"])
    assert any("128 -> 129" in x for x in examples["occubench/inconsistent"])
    assert any("site policy" in x for x in examples["occubench/rule-inventing"])


def test_audit_json_round_trips(report):
    again = AuditReport.model_validate_json(report.model_dump_json())
    assert again == report
    assert {t.env_name for t in report.probes} == {
        e.env_name for e in report.simulators[0].environments
    }
    assert len(report.probes) == 10
    steps = report.simulators[0].environments[0].trajectories[0].steps
    assert steps and all(s.observation is not None for s in steps)


def test_without_verifier_rule_invention_is_skipped_with_a_note():
    result = run_audit([CANNED, "occubench/rule-inventing"], reference_suite_dir())
    for sim in result.simulators:
        part = sim.parts[FidelityMetric.RULE_INVENTION]
        assert part.score is None and part.checked == 0 and "no verifier" in part.note
        assert sim.score == 1.0  # the one flaw only a judge sees goes unnoticed
    assert result.verifier_model is None


def test_simulator_errors_end_a_trajectory_and_are_reported():
    garbage = get_model("occubench/replay", outputs=["no json here"])
    result = run_audit([garbage], reference_suite_dir())
    sim = result.simulators[0]
    assert len(sim.errors) == 10
    assert (
        sim.errors[0].startswith("ref_card_chargeback_representment: ")
        and "no json here" in sim.errors[0]
    )
    assert sim.score is None


ENV = EnvConfig(
    environment_name="clinic",
    world_model_system_prompt="You simulate a clinic. Ward W-1 is open.",
    action_set_definitions=[
        {
            "name": "list_patients",
            "description": "Patients of a ward.",
            "parameters": {
                "type": "object",
                "properties": {"ward": {"type": "string"}},
                "required": ["ward"],
            },
            "example_output": {"ward": "W-1", "patients": [{"id": "P-1", "name": "A"}]},
        },
        {
            "name": "get_patient",
            "description": "One patient.",
            "parameters": {
                "type": "object",
                "properties": {"patientId": {"type": "string"}},
                "required": ["patientId"],
            },
            "example_output": {"id": "P-1", "name": "A"},
        },
        {
            "name": "admit_patient",
            "description": "Admit a patient.",
            "parameters": {
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
            },
        },
    ],
    task_initial_state={
        "ward": "W-1",
        "patients": [
            {"id": "P-1", "name": "A", "ward": "W-1"},
            {"id": "P-2", "name": "B", "ward": "W-2"},
        ],
    },
    state_description={"patients": "Patients and their ward."},
)


def test_id_extraction_and_unknown_ids():
    assert is_id_key("patient_id") and is_id_key("patientId") and is_id_key("room_number")
    assert not is_id_key("status_code") and not is_id_key("heart_rate") and not is_id_key("valid")
    found = list(id_values({"beds": [{"bed_id": "B1"}], "error": {"id": "X"}, "tags_ids": ["T1"]}))
    assert found == [("beds[0].bed_id", "B1"), ("tags_ids", "T1")]
    assert unknown_value("P-2231", {"P-9999"}) == "P-99999"
    assert unknown_value(42, set()) == 999 and unknown_value("ED", set()) == "ED-999"
    assert {"P-1", "W-1", "ward"} <= known_values(ENV)


def test_generated_probes_match_entities_by_name():
    [trajectory] = env_trajectories(ENV, [])
    calls = [(p.kind, p.tool, p.arguments) for p in trajectory.probes]
    assert calls == [
        (ProbeKind.GENERATED, "list_patients", {"ward": "W-1"}),
        (ProbeKind.GENERATED, "list_patients", {"ward": "W-2"}),
        (ProbeKind.GENERATED, "get_patient", {"patientId": "P-1"}),
        (ProbeKind.GENERATED, "get_patient", {"patientId": "P-2"}),
        (ProbeKind.REPEAT, "list_patients", {"ward": "W-1"}),
        (ProbeKind.REPEAT, "list_patients", {"ward": "W-2"}),
        (ProbeKind.REPEAT, "get_patient", {"patientId": "P-1"}),
        (ProbeKind.REPEAT, "get_patient", {"patientId": "P-2"}),
        (ProbeKind.UNKNOWN_ID, "get_patient", {"patientId": "P-9"}),
    ]


def test_solution_plan_lines_give_the_probes_and_repeats_stop_at_writes():
    task = TaskRecord(
        task_id=1,
        difficulty_level=1,
        task_scenario_name="s",
        agent_instruction="i",
        env_name="clinic",
        verification_plan="v",
        solution_plan='1. Call get_patient with {"patientId": "P-1"}.\n'
        "2. Then admit_patient for the newcomer.\n"
        '3. Run list_patients with {"ward": "W-1"} to confirm.',
    )
    [trajectory] = env_trajectories(ENV, [task])
    assert trajectory.source == "task 1 solution_plan"
    kinds = [(p.kind.value, p.tool) for p in trajectory.probes]
    assert kinds == [
        ("plan", "get_patient"),
        ("repeat", "get_patient"),
        ("plan", "admit_patient"),
        ("plan", "list_patients"),
        ("repeat", "list_patients"),
        ("unknown_id", "get_patient"),
    ]


def step(tool, arguments, observation, kind=ProbeKind.PLAN, read=True, repeat_of=None):
    return ProbeResult(
        tool=tool,
        arguments=arguments,
        kind=kind,
        read=read,
        repeat_of=repeat_of,
        observation=observation,
    )


def checks_of(*steps):
    result = TrajectoryResult(env_name="clinic", source="test", steps=list(steps))
    return {(c.metric, c.step): c.value for c in trajectory_checks(ENV, result, known_values(ENV))}


def test_omission_respects_filters_and_fabrication_allows_created_ids():
    ward = {"ward": "W-1", "patients": [{"id": "P-1", "name": "A"}]}
    checks = checks_of(
        step("list_patients", {"ward": "W-1"}, ward),  # P-2 is in ward W-2: filtered out
        step("list_patients", {"ward": "W-2"}, {"ward": "W-2", "patients": []}),
        step("get_patient", {"patientId": "P-2"}, {"error": {"code": "NOT_FOUND"}}),
        step("admit_patient", {"name": "C"}, {"id": "P-3", "name": "C"}, read=False),
        step("get_patient", {"patientId": "P-3"}, {"id": "P-3", "name": "C"}),
        step("get_patient", {"patientId": "P-1"}, {"id": "P-7", "name": "A"}),
    )
    assert checks[(FidelityMetric.OMISSION, 0)] == 1.0
    assert (FidelityMetric.OMISSION, 1) not in checks  # nothing listed that the state holds
    assert checks[(FidelityMetric.OMISSION, 2)] == 0.0  # the state holds P-2
    assert (FidelityMetric.OMISSION, 4) not in checks  # after a write the state may differ
    assert checks[(FidelityMetric.FABRICATION, 4)] == 1.0  # P-3 was created by admit_patient
    assert checks[(FidelityMetric.FABRICATION, 5)] == 0.0  # P-7 exists nowhere
    assert checks[(FidelityMetric.SCHEMA, 0)] == 1.0 and checks[(FidelityMetric.SCHEMA, 5)] == 1.0


def test_determinism_and_schema_scores():
    first = {"id": "P-1", "name": "A"}
    checks = checks_of(
        step("get_patient", {"patientId": "P-1"}, first),
        step(
            "get_patient",
            {"patientId": "P-1"},
            {"id": "P-1", "name": "B", "age": 3},
            kind=ProbeKind.REPEAT,
            repeat_of=0,
        ),
        step("get_patient", {"patientId": "P-9"}, {"error": "no such patient"}),
        step(
            "get_patient",
            {"patientId": "P-9"},
            {"error": {"code": "NOT_FOUND"}},
            kind=ProbeKind.REPEAT,
            repeat_of=2,
        ),
    )
    assert checks[(FidelityMetric.DETERMINISM, 1)] == 0.0
    assert checks[(FidelityMetric.DETERMINISM, 3)] == 1.0  # two errors, worded differently
    assert checks[(FidelityMetric.SCHEMA, 1)] == pytest.approx(2 / 3)  # one unexpected key of three
