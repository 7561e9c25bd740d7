"""Beside each leaderboard line: flips and quality figures, "not measured" where missing."""

import csv
import datetime as dt

from conftest import sample_row
from occubench.report import (
    NOT_MEASURED,
    GoldAgreement,
    believe_table,
    build_report,
    flips_table,
    render_html,
    report_tables,
    write_report,
)
from occubench.review import Review, Verdict
from occubench.twins import Feeding, StepMatch, TwinFidelity

READ = ["a:read", "o:record", "f:answer"]


def epochs(agent, verdicts, **fields):
    return [
        sample_row(agent_model=agent, task_id=t, epoch=e, passed=p, trajectory=READ, **fields)
        for t, row in enumerate(verdicts, start=1)
        for e, p in enumerate(row, start=1)
    ]


def rows():
    """a/one: checked and voted, one task flipping on the verifier; a/two: nothing measured."""
    measured = {"sim_checked": 2, "simulator_suspect": False, "votes_yes": 3, "votes_total": 3}
    return [
        *epochs("a/one", [[True, False], [True, True]], **measured),
        sample_row(agent_model="a/two", run_id="run2", task_id=1, passed=False),
    ]


def cells(table, agent):
    row = next(r for r in table.rows if r[1] == agent)
    return dict(zip(table.columns, row, strict=True))


def test_each_line_shows_its_figures_or_not_measured():
    report = build_report(rows(), n_resamples=50)
    one, two = cells(believe_table(report), "a/one"), cells(believe_table(report), "a/two")
    assert one["flips %"].startswith("50.0 [") and one["flips %"].endswith("(1/2)")
    assert one["flips by cause"] == "agent 0.0, simulator 0.0, verifier 100.0"
    assert one["flagged by checks"] == "0.0 (0/4: 0 passed, 0 failed)"
    assert one["unanimous votes"] == "100.0 (4/4)"
    for name in ("expert kappa", "against gold"):
        assert one[name] == NOT_MEASURED
    for name in (
        "flips %",
        "flips by cause",
        "flagged by checks",
        "exploit suspected",
        "simulator off contract",
        "unanimous votes",
        "expert kappa",
        "against gold",
    ):
        assert two[name] == NOT_MEASURED, name
    assert "floor %" not in one  # no floor given
    (flips,) = flips_table(report).rows
    assert flips[:5] == ["a/one", "E0", "none", "2", "1"]
    assert flips_table(report) in report_tables(report)


def test_reviews_and_a_gold_world_fill_kappa_and_gold():
    samples = rows()
    saved = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    reviews = [
        Review(sample_key=r.sample_key, reviewer="ann", verdict=Verdict(v), saved_at=saved)
        for r, v in zip(samples[:4], ["pass", "fail", "pass", "fail"], strict=True)
    ]
    report = build_report(samples, n_resamples=50, reviews=reviews)
    report.add_gold(
        [
            GoldAgreement(simulator="s/sim", world="w", entries=3, mean=0.75),
            GoldAgreement(simulator="s/other", world="w", entries=3, mean=0.1),
        ]
    )
    one = cells(believe_table(report), "a/one")
    assert one["expert kappa"] == "0.50 (n=4)"  # 3 of 4 agree, chance 1/2
    assert one["against gold"] == "0.75"
    assert [a.simulator for a in report.against_gold] == ["s/sim"]
    assert cells(believe_table(report), "a/two")["expert kappa"] == NOT_MEASURED


def test_every_file_says_not_measured_never_blank(tmp_path):
    report = build_report(rows(), n_resamples=50)
    written = write_report(report, rows(), ["md", "csv", "json"], tmp_path)
    assert {p.name for p in written} >= {"flips.csv", "quality.csv", "report.md"}
    with (tmp_path / "quality.csv").open() as f:
        quality = {r["agent"]: r for r in csv.DictReader(f)}
    assert quality["a/two"]["flagged_rate"] == NOT_MEASURED
    assert quality["a/two"]["kappa"] == quality["a/two"]["gold"] == NOT_MEASURED
    assert quality["a/one"]["unanimous_rate"] == "1.0"
    assert all(value != "" for r in quality.values() for value in r.values())
    with (tmp_path / "flips.csv").open() as f:
        (flip,) = csv.DictReader(f)
    assert (flip["flipped"], flip["regraded"]) == ("1", NOT_MEASURED)
    markdown = (tmp_path / "report.md").read_text()
    assert "Can I believe each line?" in markdown and "Verdict flips" in markdown
    page = render_html(report, [], [], {})  # no trajectory to embed
    assert 'id="believe"' in page and page.count(NOT_MEASURED) >= 6


def test_exploits_and_a_simulator_off_contract_are_two_columns(tmp_path):
    """Issue 48: the agent's suspected exploits apart from the simulator's broken contract."""
    kept = {"simulator_off_contract": False}
    guarded = [
        sample_row(agent_model="a/gamer", task_id=1, exploit_suspected=True, **kept),
        sample_row(agent_model="a/gamer", task_id=2, exploit_suspected=False, **kept),
        *[
            sample_row(
                agent_model="a/honest",
                run_id="run2",
                task_id=t,
                passed=t < 3,
                exploit_suspected=False,
                simulator_off_contract=t != 2,
            )
            for t in (1, 2, 3)
        ],
    ]
    report = build_report(guarded, n_resamples=50)
    table = believe_table(report)
    gamer, honest = cells(table, "a/gamer"), cells(table, "a/honest")
    assert gamer["exploit suspected"] == "50.0 (1/2 passes)"
    assert gamer["simulator off contract"] == "0.0 (0/2: 0 passed, 0 failed)"
    assert honest["exploit suspected"] == "0.0 (0/2 passes)"
    assert honest["simulator off contract"] == "66.7 (2/3: 1 passed, 1 failed)"
    write_report(report, guarded, ["md", "csv"], tmp_path)
    markdown = (tmp_path / "report.md").read_text()
    assert "| exploit suspected | simulator off contract |" in markdown
    assert "66.7 (2/3: 1 passed, 1 failed)" in markdown
    with (tmp_path / "guard.csv").open() as f:
        guard = {r["agent"]: r for r in csv.DictReader(f)}
    assert (guard["a/gamer"]["suspected"], guard["a/honest"]["off_contract"]) == ("1", "2")
    page = render_html(report, [], [], {})
    assert "simulator off contract" in page and "1/2 passes" in page


def _twin_record(simulator, environments, determined_matched=(2, 1)):
    steps = [
        StepMatch(
            environment=env,
            trajectory="t",
            step=i,
            tool="read",
            fields_changed=0,
            outcome_match=True,
            determined=2,
            determined_matched=matched,
        )
        for i, (env, matched) in enumerate(zip(environments, determined_matched, strict=True))
    ]
    return TwinFidelity(
        simulator=simulator,
        feeding=Feeding.TWIN,
        tolerance=0.01,
        environments=environments,
        steps=steps,
    )


def test_fidelity_against_the_twins_is_shown_where_it_covers_the_lines_environments(tmp_path):
    samples = [
        sample_row(agent_model="a/one", task_id=1, env_name="env_a"),
        sample_row(agent_model="a/two", run_id="run2", task_id=1, env_name="env_b"),
    ]
    # measured on env_a and env_c: a/one's line (env_a) is covered, a/two's (env_b) is not
    twin = [_twin_record("s/sim", ["env_a", "env_c"], (2, 0)), _twin_record("x/other", ["e"], (1,))]
    report = build_report(samples, n_resamples=50, twin=twin)
    one, two = cells(believe_table(report), "a/one"), cells(believe_table(report), "a/two")
    assert one["against twin"] == "fields 1.00, outcome 1.00 (n=1)"  # env_c's step left out
    assert two["against twin"] == NOT_MEASURED
    (summary,) = report.against_twin  # only the report's own simulators
    assert (summary.simulator, summary.steps, summary.determined) == ("s/sim", 2, 0.5)
    tables = report_tables(report)
    assert any(t.title.startswith("Simulators against the twins") for t in tables)
    write_report(report, samples, ["csv", "json"], tmp_path)
    with (tmp_path / "quality.csv").open() as f:
        quality = {r["agent"]: r for r in csv.DictReader(f)}
    assert quality["a/one"]["twin_determined"] == "1.0"
    assert quality["a/two"]["twin_determined"] == NOT_MEASURED
    plain = build_report(samples, n_resamples=50)
    dumped = plain.model_dump()
    assert "against_twin" not in dumped and "twin_steps" not in dumped["quality"][0]
