"""Expert reviews in the report: kappa by hand, majority verdicts, realism, human CR."""

from __future__ import annotations

import datetime as dt
import math

import pytest

from conftest import sample_row
from occubench.analysis._stats import cohen_kappa
from occubench.report import build_report, report_tables
from occubench.review import (
    Review,
    ReviewFileError,
    Verdict,
    load_reviews,
    review_report,
    reviews_csv,
    reviews_json,
)

AT = dt.datetime(2026, 3, 1, 12, tzinfo=dt.UTC)


def test_kappa_matches_a_hand_computed_example():
    # automatic x human over 10 samples: pass/pass 4, pass/fail 1, fail/pass 2, fail/fail 3
    automatic = ["pass"] * 5 + ["fail"] * 5
    human = ["pass"] * 4 + ["fail"] + ["pass"] * 2 + ["fail"] * 3
    # p_o = 7/10; shares: automatic pass 5/10, human pass 6/10
    # p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5; kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4
    result = cohen_kappa(automatic, human, n_resamples=2000, seed=0)
    assert result.estimate == pytest.approx(0.4)
    assert -1 <= result.low < 0.4 < result.high <= 1


def test_kappa_edge_cases():
    assert cohen_kappa(["pass", "fail"], ["pass", "fail"]).estimate == pytest.approx(1.0)
    assert cohen_kappa(["pass", "fail"], ["fail", "pass"]).estimate == pytest.approx(-1.0)
    assert math.isnan(cohen_kappa(["pass"] * 3, ["pass"] * 3).estimate)  # p_e = 1
    assert math.isnan(cohen_kappa([], []).estimate)
    with pytest.raises(ValueError, match="align"):
        cohen_kappa(["pass"], [])


def rows():
    out = []
    for task, passed in enumerate([True, True, True, False, False, None]):
        out.append(
            sample_row(
                task_id=task,
                passed=passed,
                error="down" if passed is None else None,
                scenario=f"S{task % 2}",
                industry=f"I{task % 3}",
            )
        )
    return out


def review(task, reviewer, verdict, scenario=None, rubric=None, comment="", minutes=0):
    return Review(
        sample_key=f"run1:{task}:1",
        reviewer=reviewer,
        verdict=Verdict(verdict),
        scenario_realism=scenario,
        rubric_realism=rubric,
        comment=comment,
        saved_at=AT + dt.timedelta(minutes=minutes),
    )


REVIEWS = [
    review(0, "ada", "pass", 5, 4),
    review(0, "bob", "pass", 3, 4),
    review(1, "ada", "fail", 2, 1, "the answer invents a bed", minutes=1),
    review(1, "ada", "fail", 2, 2, "the answer invents a bed", minutes=5),  # a later save
    review(2, "ada", "pass", 4),
    review(2, "bob", "fail"),  # a tie: no human verdict
    review(3, "ada", "pass", comment="the judge was too strict"),
    review(4, "ada", "unsure"),
    review(5, "bob", "pass"),  # an errored sample
    review(77, "ada", "pass"),  # not in these logs
]


def test_review_report_majorities_agreement_and_disagreements():
    result = review_report(rows(), REVIEWS, n_resamples=200)
    a = result.agreement
    assert (a.reviews, a.samples_reviewed, a.reviewers) == (8, 6, ["ada", "bob"])
    # human verdicts: 0 pass, 1 fail, 3 pass, 5 pass (errored: not compared); 2 tie, 4 unsure
    assert (a.compared, a.undecided) == (3, 2)
    assert a.confusion == {"pass": {"pass": 1, "fail": 1}, "fail": {"pass": 1, "fail": 0}}
    # p_o = 1/3; automatic pass 2/3, human pass 2/3; p_e = 4/9 + 1/9 = 5/9; kappa = -0.5
    assert a.observed == pytest.approx(1 / 3) and a.kappa == pytest.approx(-0.5)
    assert [(d.task_id, d.automatic, d.human) for d in a.disagreements] == [
        ("1", "pass", "fail"),
        ("3", "fail", "pass"),
    ]
    assert a.disagreements[0].comments == ["the answer invents a bed"]
    assert result.unmatched == 1


def test_realism_per_scenario_and_industry_and_cr_with_human_verdicts():
    result = review_report(rows(), REVIEWS, n_resamples=50)
    realism = {(x.dimension, x.group): x for x in result.realism}
    s0 = realism[("scenario", "S0")]  # tasks 0, 2, 4: ratings 5, 3, 4 and rubric 4, 4
    assert (s0.reviews, s0.scenario_n, s0.scenario_mean) == (5, 3, pytest.approx(4.0))
    assert (s0.rubric_n, s0.rubric_mean) == (2, pytest.approx(4.0))
    assert realism[("industry", "I1")].rubric_mean == pytest.approx(2.0)  # task 1, last save
    (line,) = result.rates
    # as scored: 3 of 5; with humans: 0 pass, 1 fail, 2 pass (kept), 3 pass, 4 fail (kept),
    # 5 pass (the errored sample now has a verdict): 4 of 6
    assert (line.automatic_rate, line.rate, line.scored) == (
        pytest.approx(0.6),
        pytest.approx(4 / 6),
        6,
    )
    assert (line.human_verdicts, line.changed) == (4, 2)


def test_report_tables_and_files_show_the_review(tmp_path):
    report = build_report(rows(), n_resamples=50, reviews=REVIEWS)
    titles = [t.title for t in report_tables(report)]
    assert any(t.startswith("Reviewer agreement") for t in titles)
    assert "Realism ratings (1-5): mean (n)" in titles
    assert build_report(rows(), n_resamples=50).review is None


def test_exports_round_trip_and_bad_files_name_the_line(tmp_path):
    as_json, as_csv = tmp_path / "r.json", tmp_path / "r.csv"
    as_json.write_text(reviews_json(REVIEWS))
    as_csv.write_text(reviews_csv(REVIEWS))
    assert load_reviews(as_json) == REVIEWS == load_reviews(as_csv)
    broken = tmp_path / "broken.csv"
    lines = reviews_csv(REVIEWS[:2]).splitlines()
    broken.write_text("\n".join([lines[0], lines[1], lines[2].replace(",pass,", ",maybe,")]))
    with pytest.raises(ReviewFileError, match=r"broken.csv, line 3: verdict"):
        load_reviews(broken)
    bad = tmp_path / "bad.json"
    bad.write_text(
        '{"reviews": [{"sample_key": "k", "reviewer": "a", "verdict": "pass", '
        '"saved_at": "2026-01-01T00:00:00Z", "scenario_realism": 9}]}'
    )
    with pytest.raises(ReviewFileError, match=r"review 0: scenario_realism"):
        load_reviews(bad)
    with pytest.raises(ReviewFileError, match="cannot read"):
        load_reviews(tmp_path / "missing.json")
