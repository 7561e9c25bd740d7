"""The report counts the simulated user's errors per setup, apart from the agent's failures."""

import csv

from conftest import sample_row
from occubench.report import build_report, report_tables, write_report


def rows():
    talked = dict(agent_model="a/asks", user_model="u/one", user_turns=3, user_ended=True)
    return [
        sample_row(**talked, task_id=1, user_errors=0, passed=True),
        sample_row(**talked, task_id=2, user_errors=2, passed=False),
        sample_row(agent_model="a/plain", task_id=1, passed=True),
    ]


def test_user_errors_per_setup_and_not_measured_without_a_user(tmp_path):
    report = build_report(rows(), n_resamples=50)
    by_agent = {u.agent: u for u in report.user_errors}
    asks, plain = by_agent["a/asks"], by_agent["a/plain"]
    assert (asks.with_user, asks.user_turns, asks.user_errors) == (2, 6, 2)
    assert (asks.samples_with_user_errors, asks.user_ended, asks.user_model) == (1, 2, "u/one")
    assert (asks.rate, asks.clean_rate) == (0.5, 1.0)  # the user's error kept apart
    assert plain.user_turns is None and plain.rate is None
    (table,) = [t for t in report_tables(report) if t.title.startswith("Simulated user")]
    assert table.rows[1][4:] == ["not measured"] * 6
    write_report(report, rows(), ["csv"], tmp_path)
    with (tmp_path / "user_errors.csv").open() as f:
        lines = {r["agent"]: r for r in csv.DictReader(f)}
    assert lines["a/plain"]["user_errors"] == "not measured"
    assert lines["a/asks"]["user_errors"] == "2"


def test_a_report_without_any_user_has_no_user_section():
    report = build_report([sample_row(passed=True)], n_resamples=50)
    assert report.user_errors == [] and "user_errors" not in report.model_dump(mode="json")
    assert not [t for t in report_tables(report) if t.title.startswith("Simulated user")]
