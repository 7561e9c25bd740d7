"""The records this part writes read back with every optional field left out.

Flip and quality rows (in ``report.json``, a bundle's ``summary.json`` and the
leaderboard's ``data.json``), floor records with their task set, the leaderboard's
entries, and sample rows with their trajectory and regrade source (the results store
and ``samples.jsonl``): each written without its defaults or its None fields, and read
back by its reader, gives the same record.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from conftest import sample_row
from occubench.analysis import FlipRow, GuardQuality, RateRow, RowQuality
from occubench.leaderboard import Entry, SiteData
from occubench.report import FloorRecord, Report, build_report
from occubench.results import SampleRow
from occubench.results._store import rows_table, table_rows

counts = st.integers(min_value=0, max_value=10_000)
rates = st.floats(min_value=0, max_value=1) | st.just(float("nan"))
names = st.text(min_size=1, max_size=20)
maybe = st.none

flip_rows = st.builds(
    FlipRow,
    agent=names,
    simulator=names,
    env_mode=st.sampled_from(["E0", "E1", "E2", "E3"]),
    tasks=counts,
    samples=counts,
    flipped=counts,
    rate=rates,
    low=rates,
    high=rates,
    pairs=counts,
    agent_pairs=counts,
    simulator_pairs=counts,
    verifier_pairs=counts,
    unknown_pairs=counts,
    replayed=counts,
    regraded=maybe() | counts,
    regrade_flips=counts,
)
quality_rows = st.builds(
    RowQuality,
    agent=names,
    simulator=names,
    env_mode=st.just("E0"),
    scored=counts,
    checked=counts,
    flagged=counts,
    flagged_passed=counts,
    flagged_failed=counts,
    flagged_rate=rates,
    flagged_low=rates,
    flagged_high=rates,
    voted=counts,
    unanimous=counts,
    unanimous_rate=rates,
    unanimous_low=rates,
    unanimous_high=rates,
    kappa=maybe() | st.floats(min_value=-1, max_value=1) | st.just(float("nan")),
    reviewed=maybe() | counts,
    gold=maybe() | st.floats(min_value=0, max_value=1),
    twin_steps=maybe() | counts,
    twin_outcome=maybe() | st.floats(min_value=0, max_value=1),
    twin_determined=maybe() | st.floats(min_value=0, max_value=1),
    twin_state=maybe() | st.floats(min_value=0, max_value=1),
)
guard_rows = st.builds(
    GuardQuality,
    agent=names,
    simulator=names,
    env_mode=st.just("E0"),
    scored=counts,
    guarded=counts,
    passes=counts,
    suspected=counts,
    suspected_rate=rates,
    suspected_low=rates,
    suspected_high=rates,
    recorded=counts,
    off_contract=counts,
    off_contract_passed=counts,
    off_contract_failed=counts,
    off_contract_rate=rates,
    off_contract_low=rates,
    off_contract_high=rates,
)
rate_rows = st.builds(
    RateRow,
    group=names,
    samples=counts,
    scored=counts,
    passed=counts,
    errors=counts,
    agent_errors=counts,
    rate=rates,
    low=rates,
    high=rates,
)


def leaner(record: BaseModel, none: bool = True) -> list[str]:
    """The record's JSON without its defaults, and (``none``) without its None fields."""
    texts = [record.model_dump_json(exclude_defaults=True)]
    return texts + ([record.model_dump_json(exclude_none=True)] if none else [])


def reads_back(model: type[BaseModel], record: BaseModel, none: bool = True) -> None:
    """Read back without its defaults (and its None fields, where a None is never required)."""
    for text in leaner(record, none):
        assert model.model_validate_json(text).model_dump_json() == record.model_dump_json()


@given(guard_rows)
def test_guard_rows_read_back(guard):
    reads_back(GuardQuality, guard)


@given(flip_rows)
def test_flip_rows_read_back(flip):
    reads_back(FlipRow, flip)


@given(quality_rows)
def test_quality_rows_read_back(quality):
    reads_back(RowQuality, quality)


@given(st.lists(rate_rows, min_size=1, max_size=3), maybe() | st.lists(names, max_size=4))
def test_floor_records_read_back(null_agents, task_ids):
    record = FloorRecord(
        dataset="reference",
        dataset_digest="d" * 64,
        simulator="s/sim",
        protocol="paper",
        null_agents=null_agents,
        task_ids=task_ids,
    )
    reads_back(FloorRecord, record)


@given(maybe() | flip_rows, maybe() | quality_rows, maybe() | rate_rows, maybe() | guard_rows)
def test_leaderboard_entries_read_back(flips, quality, floor, guard):
    entry = Entry(
        id="custom-1-1",
        tie=1,
        rank=1,
        agent="a/one",
        simulator="s/sim",
        verifier="(the simulator)",
        bundle="b",
        record="records/b.html",
        rate=None,
        low=None,
        high=None,
        scored=0,
        modes={"E0": None},
        r=None,
        r_low=None,
        r_high=None,
        r_note="",
        cost_per_task=None,
        tokens_per_task=None,
        industries={},
        close=[],
        close_agents=[],
        believe={"flips %": "not measured"},
        flips=flips,
        quality=quality,
        floor=floor,
        guard=guard,
    )
    reads_back(Entry, entry, none=False)  # its None numbers are written as null
    site = SiteData(generated="now", boards=[], bundles=[], published=None)
    reads_back(SiteData, site, none=False)


def test_a_report_written_before_flips_and_quality_reads_back():
    report = build_report([sample_row(trajectory=["f:x"])], n_resamples=10)
    older = json.loads(report.model_dump_json())
    del older["flips"], older["quality"]
    read = Report.model_validate(older)
    assert read.flips == [] and read.quality == []


def test_a_report_written_before_the_guard_findings_reads_back():
    report = build_report([sample_row(exploit_suspected=False)], n_resamples=10)
    assert report.guard and report.guard[0].guarded == 1
    older = json.loads(report.model_dump_json())
    del older["guard"]
    assert Report.model_validate(older).guard == []


@given(maybe() | st.booleans())
def test_sample_rows_keep_the_simulator_off_contract_in_the_store(off_contract):
    row = sample_row(exploit_suspected=False, simulator_off_contract=off_contract)
    (back,) = table_rows(rows_table([row]))
    assert back == row
    older = json.loads(row.model_dump_json())
    del older["simulator_off_contract"]  # a samples.jsonl written before issue 48
    assert SampleRow.model_validate(older).simulator_off_contract is None


@settings(suppress_health_check=[HealthCheck.too_slow], max_examples=30)
@given(
    st.lists(st.text(alphabet="aof:0123456789abcdef", max_size=16), max_size=6),
    maybe() | names,
)
def test_sample_rows_keep_their_trajectory_and_regrade_source_in_the_store(trajectory, source):
    row = sample_row(trajectory=trajectory, regraded_from_run=source)
    (back,) = table_rows(rows_table([row]))
    assert back == row
    for text in leaner(row, none=False):  # samples.jsonl; its older fields need their None
        assert SampleRow.model_validate_json(text) == row
    (plain,) = table_rows(rows_table([sample_row()]))  # a row without either field
    assert plain.trajectory == [] and plain.regraded_from_run is None
