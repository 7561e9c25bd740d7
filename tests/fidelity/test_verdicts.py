"""Verdicts against a reference simulator: hand-built rows whose answers are known, and real
runs of the reference agents under the canned simulator (the reference) and flawed ones."""

import math

import pytest

from conftest import sample_row
from occubench.analysis import FlipCause, first_difference
from occubench.fidelity import (
    DifferenceKind,
    against_reference,
    compare_simulators,
    comparison_tables,
    locate,
)
from occubench.fidelity._verdicts import ANSWERED_INSTEAD, PREVIEW_CHARS, _previewed, around
from occubench.simulator import SimStep

REF, SIM = "sim/real", "sim/flawed"


def row(simulator, task, passed, *, agent="a/one", epoch=1, run=None, trajectory=(), **fields):
    return sample_row(
        run_id=run or f"{agent}-{simulator}",
        agent_model=agent,
        simulator_model=simulator,
        task_id=task,
        epoch=epoch,
        env_name="env_x",
        passed=passed,
        trajectory=list(trajectory),
        **fields,
    )


def test_locate_names_the_first_difference_and_agrees_with_the_flip_causes():
    call, answer, other = ["a:1", "o:1"], ["a:2", "o:2"], ["a:2", "o:9"]
    cases = {
        DifferenceKind.OBSERVATION: ([*call, *answer, "f:x"], [*call, *other, "f:y"]),
        DifferenceKind.CALL: ([*call, *answer, "f:x"], [*call, "a:3", "o:3", "f:x"]),
        DifferenceKind.ANSWER: ([*call, "f:x"], [*call, "f:y"]),
        DifferenceKind.NONE: ([*call, "f:x"], [*call, "f:x"]),
        DifferenceKind.UNKNOWN: ([*call, "f:x"], []),
    }
    steps = {DifferenceKind.OBSERVATION: 2, DifferenceKind.CALL: 2}
    causes = {
        DifferenceKind.OBSERVATION: FlipCause.SIMULATOR,
        DifferenceKind.CALL: FlipCause.AGENT,
        DifferenceKind.ANSWER: FlipCause.AGENT,
        DifferenceKind.NONE: FlipCause.VERIFIER,
        DifferenceKind.UNKNOWN: FlipCause.UNKNOWN,
    }
    for kind, (a, b) in cases.items():
        found = locate(a, b)
        assert (found.kind, found.step) == (kind, steps.get(kind)), kind
        assert first_difference(a, b) is causes[kind]  # the same rule as verdict flips
    # an answer instead of a call: the agent's, at the step it stopped calling
    assert locate([*call, "f:x"], [*call, *answer, "f:x"]).kind is DifferenceKind.CALL


def test_previews_show_where_two_long_answers_differ():
    head = '{"records": [' + ", ".join(f'{{"id": "R-{i}"}}' for i in range(20))
    ours, theirs = around(head + ', {"id": "R-99"}]}', head + "]}")
    assert ours.startswith("...") and '"R-99"' in ours and '"R-99"' not in theirs
    assert len(ours) <= PREVIEW_CHARS and len(theirs) <= PREVIEW_CHARS
    assert around("short", "shirt") == ("short", "shirt")


def test_a_flip_at_a_call_shows_both_calls_and_an_answer_instead_of_one():
    read = SimStep(tool="get_bed", arguments={"bed_id": "B-1"}, observation={"ok": True})
    ours = [read, SimStep(tool="assign_bed", arguments={"bed_id": "B-1"}, observation={})]
    theirs = [read, SimStep(tool="assign_bed", arguments={"bed_id": "B-2"}, observation={})]
    at_call = locate(["a:1", "o:1", "a:2", "o:2", "f:x"], ["a:1", "o:1", "a:3", "o:2", "f:x"])
    shown = _previewed(at_call, ours, theirs)
    assert (shown.kind, shown.step, shown.tool) == (DifferenceKind.CALL, 2, "assign_bed")
    assert shown.reference.endswith('"B-1"})') and shown.simulator.endswith('"B-2"})')
    stopped = _previewed(at_call, ours, theirs[:1])  # the simulator's run answered at step 2
    assert stopped.simulator == ANSWERED_INSTEAD and "assign_bed" in stopped.reference
    unread = _previewed(at_call, ours, None)  # a log gone since: the step stays, no preview
    assert (unread.step, unread.tool, unread.reference, unread.simulator) == (2, None, "", "")


def test_gap_agreement_pairs_and_flips_on_hand_built_rows():
    verdicts = {1: (True, True), 2: (True, False), 3: (False, False), 4: (True, False)}
    rows = [row(REF, t, ours) for t, (ours, _) in verdicts.items()]
    rows += [row(SIM, t, theirs) for t, (_, theirs) in verdicts.items()]
    rows += [row(SIM, 5, True), row(REF, 6, None, error="down"), row(SIM, 6, True)]
    [result] = against_reference(rows, REF)
    assert (result.pairs, result.tasks, result.unpaired) == (4, 4, 2)  # 5: alone, 6: errored
    assert (result.agreeing, result.agreement) == (2, 0.5)
    assert (result.reference_rate, result.simulator_rate) == (0.75, 0.25)
    assert result.gap == pytest.approx(-0.5)
    assert -1.0 <= result.low < result.gap < result.high <= 0.0
    assert [(f.task_id, f.reference_passed, f.simulator_passed) for f in result.flips] == [
        ("2", True, False),
        ("4", True, False),
    ]
    assert {f.cause.kind for f in result.flips} == {DifferenceKind.UNKNOWN}  # no trajectory


def test_the_interval_resamples_tasks_with_their_epochs():
    verdicts = {t: (True, t % 3 == 0) for t in range(12)}

    def runs(epochs):
        return [
            row(sim, t, pair[i], epoch=e)
            for t, pair in verdicts.items()
            for e in range(1, epochs + 1)
            for i, sim in enumerate((REF, SIM))
        ]

    [one], [three] = against_reference(runs(1), REF), against_reference(runs(3), REF)
    assert three.pairs == 3 * one.pairs and three.tasks == one.tasks == 12
    assert one.gap == three.gap == pytest.approx(-8 / 12)
    # three alike epochs of a task are one task's worth of evidence: the same interval
    assert (three.low, three.high) == (one.low, one.high)
    assert one.low < one.gap < one.high


def test_pairs_need_the_same_agent_mode_and_faults():
    rows = [
        row(REF, 1, True, agent="a/one"),
        row(SIM, 1, False, agent="a/two"),  # another agent: no pair
        row(REF, 2, True, env_mode="E1", fault_count=2),
        row(SIM, 2, False, env_mode="E1", fault_count=3),  # another fault setting
        row(REF, 3, True, env_mode="E1", fault_count=2),
        row(SIM, 3, True, env_mode="E1", fault_count=2),
    ]
    [result] = against_reference(rows, REF)  # fc=3 and a/two have nothing to pair with
    assert (result.env_mode, result.pairs, result.unpaired) == ("E1", 1, 1)  # task 2: alone
    assert result.faults.startswith("fc=2 ")


def test_a_reference_absent_from_the_rows_is_a_clear_error():
    rows = [row(REF, 1, True), row(SIM, 1, True)]
    with pytest.raises(ValueError, match="no run under the reference simulator occubench/twin"):
        against_reference(rows, "occubench/twin")
    with pytest.raises(ValueError, match="no run under the reference"):
        compare_simulators(rows, "occubench/twin")


CANNED, INCONSISTENT, OMITTING = "occubench/canned", "occubench/inconsistent", "occubench/omitting"


@pytest.fixture(scope="module")
def rows(simulator_logs):
    """The reference agents under canned, inconsistent and omitting (``simulator_logs``)."""
    from occubench.results import read_runs

    return read_runs([simulator_logs])


def test_real_runs_gap_agreement_and_the_step_that_flipped_them(rows):
    result = {(r.agent, r.simulator): r for r in against_reference(rows, CANNED)}
    assert len(result) == 6
    careful = result[("occubench/careful", INCONSISTENT)]
    assert (careful.reference_rate, careful.simulator_rate) == (1.0, 0.0)
    assert (careful.gap, careful.low, careful.high) == (-1.0, -1.0, -1.0)
    assert (careful.pairs, careful.agreeing) == (2, 0)
    vitals = next(f for f in careful.flips if f.task_id == "1001")
    # careful's second read of the vitals is the first answer inconsistent shifts
    assert (vitals.cause.kind, vitals.cause.step) == (DifferenceKind.OBSERVATION, 2)
    assert vitals.cause.tool == "get_patient_vitals"
    assert '"heart_rate": 128' in vitals.cause.reference
    assert '"heart_rate": 130' in vitals.cause.simulator
    first_read = result[("occubench/no-retry", INCONSISTENT)]  # reads once: nothing shifts
    assert (first_read.agreement, first_read.gap, first_read.flips) == (1.0, 0.0, [])
    assert (first_read.low, first_read.high) == (0.0, 0.0)
    for agent, step in (("occubench/trusting", 2), ("occubench/careful", 4)):
        omitted = result[(agent, OMITTING)]
        assert omitted.gap == -1.0 and omitted.agreeing == 0
        beds = next(f for f in omitted.flips if f.task_id == "1001").cause
        # the bed list is the first list: after one vitals read (trusting) or three (careful)
        assert (beds.kind, beds.step, beds.tool) == (
            DifferenceKind.OBSERVATION,
            step,
            "list_open_beds",
        )
        assert '"ED-11"' in beds.reference and '"ED-11"' not in beds.simulator


def test_tables_against_the_reference(rows):
    comparison = compare_simulators(rows, CANNED)
    titles = [str(t.title) for t in comparison_tables(comparison)]
    assert len(titles) == 6 and "ranking agreement with the reference occubench/canned" in titles[3]
    assert "verdicts against the reference" in titles[4] and "flip" in titles[5]
    ranking = {
        (a.simulator_a, a.simulator_b): a
        for a in comparison.agreements
        if CANNED in (a.simulator_a, a.simulator_b)
    }
    assert len(ranking) == 2
    assert math.isnan(ranking[(CANNED, INCONSISTENT)].tau)  # canned ties every agent
    assert [t.title for t in comparison_tables(compare_simulators(rows))][3:] == []
