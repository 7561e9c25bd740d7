"""Floor records: built from the null agents' rows, matched to leaderboard lines."""

import math

import pytest

from conftest import sample_row
from occubench.errors import UsageError
from occubench.report import (
    floor_record,
    floor_table,
    floor_verdict,
    floors_beside,
    load_floor,
)

NULL = "occubench/null-one-call"


def rows(verifier="v/judge", **fields):
    """Four samples of one null agent: one passed; the judge's votes passed three."""
    votes = [(3, 3), (2, 3), (2, 3), (1, 3)]
    return [
        sample_row(
            agent_model=NULL,
            verifier_model=verifier,
            task_id=i,
            passed=i == 0,
            **{"votes_yes": yes, "votes_total": total, **fields},
        )
        for i, (yes, total) in enumerate(votes)
    ]


def test_a_record_counts_passes_and_the_verifiers_votes_alone():
    record = floor_record(rows(), "reference", "d" * 64)
    (rate,) = record.null_agents
    assert (rate.group, rate.scored, rate.passed) == (NULL, 4, 1)
    (alone,) = record.verifier_alone
    assert (alone.scored, alone.passed) == (4, 3)  # a strict majority of the votes
    assert record.highest() is rate
    assert "passes 25.0% of tasks" in floor_verdict(record)
    assert "Its votes alone, checks aside, pass 75.0%" in floor_verdict(record)
    assert floor_table(record).rows[0][:4] == [NULL, "4", "1", "25.0"]


def test_rows_graded_by_checks_alone_leave_the_verifier_column_empty():
    record = floor_record(rows(verifier=None, votes_yes=None, votes_total=None)[:1], "x", "d")
    assert math.isnan(record.verifier_alone[0].rate)
    assert "Its votes alone" not in floor_verdict(record)
    assert floor_table(record).rows[0][-2:] == ["-", "-"]
    assert "no verifier bound" in floor_verdict(record)


def test_a_record_takes_one_simulator_verifier_and_protocol():
    with pytest.raises(UsageError, match="one simulator, verifier and protocol"):
        floor_record(rows() + rows(verifier="v/other"), "x", "d")


def test_floors_match_lines_by_simulator_verifier_and_protocol():
    record = floor_record(rows(), "x", "d")
    lines = [("agent/a", "s/sim"), ("agent/b", "s/other")]
    found = floors_beside(lines, "v/judge", record.protocol.value, [record])
    assert [line.floor is not None for line in found] == [True, False]
    assert found[0].floor == record.highest()
    assert floors_beside(lines, None, record.protocol.value, [record])[0].floor is None
    assert floors_beside(lines, "v/judge", "paper", [record])[0].floor is None


def test_a_record_reads_back_and_a_wrong_file_is_bad_input(tmp_path):
    record = floor_record(rows(), "x", "d")
    path = tmp_path / "floor.json"
    path.write_text(record.model_dump_json())
    assert load_floor(path) == record
    path.write_text('{"dataset": "x"}')
    with pytest.raises(UsageError, match="not a floor record"):
        load_floor(path)


@pytest.mark.parametrize("verifier", ["v/judge", None])
def test_a_record_reads_back_with_each_optional_field_left_out(tmp_path, verifier):
    record = floor_record(rows(verifier=verifier), "x", "d")
    path = tmp_path / "floor.json"
    for leaner in (
        record.model_dump_json(exclude_none=True),
        record.model_dump_json(exclude_defaults=True),
    ):
        path.write_text(leaner)
        read = load_floor(path)
        assert read.model_dump_json() == record.model_dump_json()  # nan equals itself here
