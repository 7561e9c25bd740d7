"""The results store: rows as Inspect's reader gives them, cached beside each log."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import orjson
import pyarrow.parquet as pq
import pytest
from inspect_ai.log import read_eval_log, read_eval_log_samples, write_eval_log
from inspect_ai.scorer import CORRECT
from typer.testing import CliRunner

from conftest import SCRIPTED_ROLES, replay, run_task
from occubench.agent import episode_in
from occubench.cli import app
from occubench.grading import SCORER_NAME
from occubench.results import _runs, _store, read_runs, read_trajectories
from occubench.results._trajectory import trajectory

TASKS = [11, 24, 47]


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    """Logs with faults (E3), two epochs, judge votes, an errored sample, and a JSON log."""
    root = tmp_path_factory.mktemp("store-logs")
    run_task(
        root / "eval",
        env_mode="E3",
        fault_count=2,
        fault_duration=2,
        task_ids=TASKS,
        eval_args={"epochs": 2},
    )
    run_task(
        root / "eval",
        roles={**SCRIPTED_ROLES, "simulator": replay(*["no json here"] * 40)},
        task_ids=[11],
        eval_args={"fail_on_error": False},
    )
    run_task(root / "json", task_ids=TASKS, eval_args={"log_format": "json"})
    return root


def inspect_rows(file: str) -> list[_runs.SampleRow]:
    """Rows as made from Inspect's own sample reader and typed models."""
    run = _runs.run_fields(file, read_eval_log(file, header_only=True))
    return [
        _runs.sample_row(run, sample.model_dump(include=_runs.ROW_FIELDS))
        for sample in read_eval_log_samples(file, all_samples_required=False)
    ]


def copy_of(logs: Path, tmp_path: Path) -> Path:
    target = tmp_path / "logs"
    shutil.copytree(logs, target)
    return target


def test_rows_of_an_eval_log_are_those_of_inspects_reader(logs):
    files = _runs.log_files([logs])
    assert any(f.endswith(".json") for f in files) and any(f.endswith(".eval") for f in files)
    rows = []
    for file in files:
        fast = _runs.read_log_rows(file)
        assert fast == inspect_rows(file)
        rows += fast
    assert {r.epoch for r in rows} == {1, 2}
    assert any(r.error for r in rows) and any(r.faults for r in rows)
    assert any(r.votes_total for r in rows) and any(r.passed for r in rows)


def test_rows_match_the_logged_samples(logs):
    faulted = [
        f
        for f in _runs.log_files([logs / "eval"])
        if any(r.faults for r in read_runs([f], cache=False))
    ]
    assert faulted
    rows = {(str(r.task_id), r.epoch): r for r in _runs.read_log_rows(faulted[0])}
    for sample in read_eval_log_samples(faulted[0], all_samples_required=False):
        row = rows[(str(sample.id), sample.epoch)]
        episode = episode_in(sample.store)
        assert (row.tool_calls, row.faults) == (episode.tool_calls, episode.fault_log)
        assert row.stop_reason == episode.stop_reason
        score = sample.scores[SCORER_NAME] if sample.scores else None
        if sample.error is None and score is not None:
            assert row.passed == (score.value == CORRECT)
        assert row.wall_time == sample.total_time


def members(log: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(log) as archive:
        return {n: archive.read(n) for n in archive.namelist() if n.startswith("samples/")}


def test_samples_parse_without_their_events_as_when_parsed_whole(logs):
    for log in (logs / "eval").glob("*.eval"):
        for data in members(log).values():
            whole = orjson.loads(data)
            whole.pop("events")
            assert _store.without_events(data) == whole


@pytest.mark.parametrize(
    "sample",
    [
        # the keys inside strings (escaped) and nested, before and after the events
        {
            "id": 1,
            "epoch": 1,
            "scores": {},
            "metadata": {"t": ',"events":[ ,"model_usage":'},
            "store": {"x": {"events": [1, {"model_usage": 2}]}},
            "events": [{"model_usage": {"a": 1}, "events": []}],
            "model_usage": {"m": {}},
            "error": None,
            "attachments": {"k": '"model_usage":{'},
        },
        # another layout: events last, no model usage after them
        {
            "id": "a",
            "epoch": 2,
            "scores": {},
            "metadata": {},
            "store": {},
            "model_usage": {},
            "events": [{"model_usage": {}}],
        },
        # no events at all
        {"id": 3, "epoch": 1, "scores": {}, "metadata": {}, "store": {}, "model_usage": {}},
    ],
)
def test_hostile_layouts_parse_right(sample):
    expected = {k: v for k, v in sample.items() if k != "events"}
    assert _store.without_events(json.dumps(sample, separators=(",", ":")).encode()) == expected


NOT_FINITE = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}
"""What Python's json (and so Inspect's log) writes and orjson refuses."""


@pytest.mark.parametrize("where", ["store", "events", "model_usage"])
def test_what_inspect_writes_and_orjson_refuses_is_read(where):
    sample = {
        "id": 1,
        "epoch": 1,
        "scores": {},
        "metadata": {},
        "store": {"observation": {"ok": 1}},
        "events": [{"event": "model"}],
        "model_usage": {"m": {}},
    }
    sample[where] = [NOT_FINITE] if where == "events" else {"x": NOT_FINITE}
    data = json.dumps(sample, separators=(",", ":")).encode()
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(data)
    expected = {k: v for k, v in sample.items() if k != "events"}
    assert json.dumps(_store.without_events(data)) == json.dumps(expected)  # NaN != NaN
    assert json.dumps(_store.log_json(data)) == json.dumps(sample)


def test_the_second_read_comes_from_the_store(logs, tmp_path, monkeypatch):
    folder = copy_of(logs, tmp_path)
    first = read_runs([folder])
    tables = sorted(folder.rglob(f"*{_store.STORE_SUFFIX}"))
    assert len(tables) == len(_runs.log_files([folder]))
    meta = pq.read_schema(tables[0]).metadata
    assert meta[_store.VERSION_FIELD] == _store.STORE_VERSION.encode()

    def no_log_reading(file: str):
        raise AssertionError(f"read {file} again")

    monkeypatch.setattr(_runs, "read_log_rows", no_log_reading)
    assert read_runs([folder]) == first


def test_a_changed_log_is_read_again(logs, tmp_path):
    folder = copy_of(logs, tmp_path)
    (log,) = [p for p in (folder / "json").glob("*.json") if p.name != "logs.json"][:1]
    key = _store.log_digest(log)
    log.write_text(log.read_text().replace('"total_time"', '"total_time" ', 1))
    assert _store.log_digest(log) != key  # a JSON log: the key is its bytes' digest
    eval_log = next((folder / "eval").glob("*.eval"))
    key = _store.log_digest(eval_log)
    read_runs([eval_log])
    data = read_eval_log(str(eval_log))
    data.samples[0].total_time = 12345.0
    write_eval_log(data, str(eval_log))
    assert _store.log_digest(eval_log) != key
    assert read_runs([eval_log])[0].wall_time == 12345.0


def test_a_store_that_cannot_be_written_is_skipped(logs, tmp_path, monkeypatch):
    folder = copy_of(logs, tmp_path)

    def read_only(*args, **kwargs):
        raise PermissionError("read-only folder")

    monkeypatch.setattr(_store.pq, "write_table", read_only)
    expected = read_runs([folder], cache=False)
    assert read_runs([folder]) == expected and read_runs([folder]) == expected
    assert not list(folder.rglob(f"*{_store.STORE_SUFFIX}*"))


def test_a_store_of_another_version_or_log_is_rebuilt(logs, tmp_path, monkeypatch):
    folder = copy_of(logs, tmp_path)
    expected = read_runs([folder])
    for table in folder.rglob(f"*{_store.STORE_SUFFIX}"):
        table.write_bytes(b"not parquet")
    assert read_runs([folder]) == expected
    monkeypatch.setattr(_store, "STORE_VERSION", "0-other")
    calls = []
    real = _runs.read_log_rows
    monkeypatch.setattr(_runs, "read_log_rows", lambda f: calls.append(f) or real(f))
    assert read_runs([folder]) == expected and len(calls) == len(_runs.log_files([folder]))


def test_parquet_export_round_trips_and_queries_with_duckdb(logs, tmp_path):
    duckdb = pytest.importorskip("duckdb")
    rows = read_runs([logs], cache=False)
    path = _store.write_parquet(rows, tmp_path / _store.EXPORT_FILE)
    assert _store.table_rows(pq.read_table(path)) == rows
    result = CliRunner().invoke(
        app, ["report", str(logs), "--format", "parquet", "--out", str(tmp_path / "out")]
    )
    assert result.exit_code == 0, result.output
    exported = tmp_path / "out" / "**" / _store.EXPORT_FILE  # one per group of runs
    assert list((tmp_path / "out").rglob(_store.EXPORT_FILE))
    scored = [r for r in rows if r.passed is not None]
    ((passed, count),) = duckdb.sql(
        f"SELECT sum(passed::INT), count(passed) FROM '{exported}'"
    ).fetchall()
    assert (passed, count) == (sum(bool(r.passed) for r in scored), len(scored))
    ((tokens,),) = duckdb.sql(f"SELECT sum(tokens['simulator']) FROM '{exported}'").fetchall()
    assert tokens == sum(r.tokens.get("simulator", 0) for r in rows)


def test_trajectories_read_only_the_samples_asked_for(logs, monkeypatch):
    rows = [r for r in read_runs([logs / "eval"], cache=False) if r.error is None][:2]
    read: list[str] = []
    real_read = zipfile.ZipFile.read
    monkeypatch.setattr(
        zipfile.ZipFile,
        "read",
        lambda self, name, pwd=None: read.append(name) or real_read(self, name, pwd),
    )
    found = read_trajectories(rows)
    monkeypatch.undo()
    assert sorted(read) == sorted(_store.sample_member(r.task_id, r.epoch) for r in rows)
    for row, got in zip(rows, found, strict=True):
        (sample,) = [
            s
            for s in read_eval_log_samples(row.log, all_samples_required=False)
            if (str(s.id), s.epoch) == (str(row.task_id), row.epoch)
        ]
        assert got == trajectory(sample) and got.turns


def test_the_drill_down_shows_errors_then_failures_then_passes(logs):
    from occubench.report._files import drill_down

    rows = read_runs([logs], cache=False)
    order = drill_down(rows, len(rows))
    kinds = [0 if rows[i].error else 1 if not rows[i].passed else 2 for i in order]
    assert kinds == sorted(kinds) and sorted(order) == list(range(len(rows)))
    shown = drill_down(rows, 2)
    assert shown == order[:2] and rows[shown[0]].error is not None
    found = read_trajectories(rows, only=set(shown))
    assert [bool(t.turns) for t in found] == [i in shown for i in range(len(rows))]


def test_the_store_has_a_column_for_every_row_field():
    from occubench.results import SampleRow

    names = set(_store.SCHEMA.names)
    assert set(SampleRow.model_fields) | set(SampleRow.model_computed_fields) <= names
    assert names - set(SampleRow.model_fields) - set(SampleRow.model_computed_fields) == {
        "task_id_is_int"
    }
