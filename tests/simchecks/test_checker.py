"""The online checker on hand-made observations: each kind of check, and what resets it."""

from occubench.dataset import EnvConfig
from occubench.simchecks import ObservationChecker, SimCheckKind, contradictions, entity_facts

ENV = EnvConfig(
    environment_name="beds",
    world_model_system_prompt="You simulate a bed board.",
    action_set_definitions=[
        {
            "name": "list_beds",
            "description": "Open beds.",
            "parameters": {"type": "object", "properties": {}},
            "example_output": {"beds": [{"bed_id": "B-1", "status": "clean"}]},
        },
        {
            "name": "get_bed",
            "description": "One bed.",
            "parameters": {"type": "object", "properties": {"bed_id": {"type": "string"}}},
            "example_output": {"bed_id": "B-1", "status": "clean"},
        },
        {
            "name": "assign_bed",
            "description": "Assign a bed.",
            "parameters": {"type": "object", "properties": {"bed_id": {"type": "string"}}},
        },
    ],
    task_initial_state={
        "beds": [{"bed_id": "B-1", "status": "clean"}, {"bed_id": "B-2", "status": "dirty"}]
    },
    state_description={"beds": "Beds of the unit."},
)
BEDS = {"beds": [{"bed_id": "B-1", "status": "clean"}, {"bed_id": "B-2", "status": "dirty"}]}


def kinds(checker, tool, arguments, obs):
    return {f.kind for f in checker.check(tool, arguments, obs)}


def test_a_faithful_trajectory_passes_every_check():
    checker = ObservationChecker(ENV)
    for tool, arguments, obs in [
        ("list_beds", {}, BEDS),
        ("get_bed", {"bed_id": "B-2"}, {"bed_id": "B-2", "status": "dirty"}),
        ("list_beds", {}, BEDS),
    ]:
        assert kinds(checker, tool, arguments, obs) == set()
        checker.record(tool, arguments, obs)


def test_each_flaw_fails_its_own_check():
    checker = ObservationChecker(ENV)
    invented = {"beds": [*BEDS["beds"], {"bed_id": "B-9", "status": "clean"}]}
    assert kinds(checker, "list_beds", {}, invented) == {SimCheckKind.FABRICATION}
    assert kinds(checker, "list_beds", {}, {"beds": BEDS["beds"][:1]}) == {
        SimCheckKind.INITIAL_STATE
    }
    assert kinds(checker, "get_bed", {"bed_id": "B-1"}, {"error": "not found"}) == {
        SimCheckKind.INITIAL_STATE
    }
    assert kinds(checker, "get_bed", {"bed_id": "B-1"}, {"colour": "red", "size": 3}) == {
        SimCheckKind.SCHEMA
    }
    changed = {"bed_id": "B-2", "status": "clean"}
    failures = checker.check("get_bed", {"bed_id": "B-2"}, changed)
    assert [f.kind for f in failures] == [SimCheckKind.INITIAL_STATE]
    assert "'dirty' -> 'clean'" in failures[0].detail


def test_an_earlier_observation_binds_later_reads_until_a_write():
    checker = ObservationChecker(ENV)
    checker.record("assign_bed", {"bed_id": "B-1"}, {"bed_id": "B-1", "status": "assigned"})
    # after a write the initial state no longer binds, the write's own answer does
    assert (
        kinds(checker, "get_bed", {"bed_id": "B-1"}, {"bed_id": "B-1", "status": "assigned"})
        == set()
    )
    assert kinds(checker, "get_bed", {"bed_id": "B-1"}, {"bed_id": "B-1", "status": "clean"}) == {
        SimCheckKind.CONSISTENCY
    }
    first = {"bed_id": "B-2", "status": "dirty"}
    checker.record("get_bed", {"bed_id": "B-2"}, first)
    again = checker.check("get_bed", {"bed_id": "B-2"}, {"bed_id": "B-2", "status": "closed"})
    assert [f.kind for f in again] == [SimCheckKind.CONSISTENCY]
    assert "answers differ" in again[0].detail
    checker.record("assign_bed", {"bed_id": "B-2"}, {"result": "ok"})
    assert (
        kinds(checker, "get_bed", {"bed_id": "B-2"}, {"bed_id": "B-2", "status": "closed"}) == set()
    )


def test_ids_created_by_a_write_are_not_fabricated():
    checker = ObservationChecker(ENV)
    checker.record("assign_bed", {"bed_id": "B-1"}, {"assignment_id": "A-77"})
    assert (
        kinds(
            checker,
            "get_bed",
            {"bed_id": "B-1"},
            {"bed_id": "B-1", "assignment_id": "A-77", "status": "clean"},
        )
        == set()
    )
    assert kinds(
        checker,
        "get_bed",
        {"bed_id": "B-1"},
        {"bed_id": "B-1", "assignment_id": "A-78", "status": "clean"},
    ) == {SimCheckKind.FABRICATION}


def test_entity_facts_identify_records_by_every_id_field():
    facts = entity_facts(
        {
            "patients": {"P-1": {"name": "Ana", "updated_at": "09:00"}, "P-2": {"name": "Bo"}},
            "beds": [{"id": "B-1", "status": "clean"}],
            "lines": [
                {"order_id": "O-1", "sku": "A", "qty": 2},
                {"order_id": "O-1", "sku": "B", "qty": 5},
            ],
        }
    )
    assert facts[frozenset({("patient_id", "P-1")})] == {"name": "Ana"}  # volatile key left out
    assert facts[frozenset({("bed_id", "B-1")})] == {"status": "clean"}
    assert len([k for k in facts if ("order_id", "O-1") in k]) == 2  # told apart by sku
    same = contradictions(facts, {"patientId": "P-1", "name": " ana "})
    assert same == []  # keys normalized, text compared without case or spaces
    assert contradictions(facts, {"bed_id": "B-1", "status": "dirty"}) == [
        "bed_id=B-1 status: 'clean' -> 'dirty'"
    ]
    assert contradictions(facts, {"error": {"bed_id": "B-1", "status": "x"}}) == []
