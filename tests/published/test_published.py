"""Published results as data: the shipped table, a file in its format, the side-by-side table."""

from __future__ import annotations

import json
import math

import pytest

from conftest import sample_row
from occubench.errors import UsageError
from occubench.published import (
    MODES,
    NOT_PUBLISHED,
    PAPER,
    Metric,
    PublishedTable,
    load_published,
    published_lines,
    side_by_side,
)
from occubench.report import build_report

TABLE = {
    "source": "Example 2026",
    "title": "A made-up publication for this test",
    "url": "https://example.org/paper",
    "rows": [
        {
            "model": "vendor/model-a",
            "simulator": "vendor/sim",
            "values": [
                {"metric": "cr", "env_mode": "E0", "value": 61.5, "source": "Table 3"},
                {"metric": "cr", "env_mode": "E2", "value": 40.0, "source": "Table 3"},
                {
                    "metric": "cr",
                    "env_mode": "E0",
                    "industry": "Health",
                    "value": 70.0,
                    "source": "Table 2",
                },
                {"metric": "r", "value": 0.65, "source": "Table 3"},
            ],
        }
    ],
}


def test_the_shipped_paper_table_holds_the_authors_stated_values_and_no_more():
    table = load_published(PAPER)
    page = table.rows[:15]  # the project page's E0 leaderboard, the paper's 15 agents
    assert len({row.model for row in page}) == 15 and len(table.industries()) == 10
    assert {row.model for row in table.agents()} == {row.model for row in page}
    first = table.rows[0]
    assert first.model == "GPT-5.2" and first.rate("E0") == pytest.approx(0.796)
    assert first.rate("E2") == pytest.approx(0.704) and first.robustness() == 0.84
    assert first.rate("E0", "Science & Research") == pytest.approx(0.94)
    # the paper's default simulator and verifier (PAPER_NUMBERS.md); its effort: high
    assert first.simulator == first.verifier == "Gemini-3-Flash-Preview"
    assert first.reasoning_effort is None and table.reasoning_effort == "high"
    stated_r = [row.model for row in table.rows if not math.isnan(row.robustness())]
    assert len(stated_r) == 9  # the robustness table covers 9 of the 15 models
    claude_4 = next(row for row in table.rows if row.model == "Claude Sonnet 4")
    assert math.isnan(claude_4.rate("E1")) and math.isnan(claude_4.robustness())
    for row in table.rows:  # every stated R is min(E1..E3) / E0 of the stated rates
        if not math.isnan(row.robustness()):
            worst = min(row.rate(m) for m in ("E1", "E2", "E3"))
            assert worst / row.rate("E0") == pytest.approx(row.robustness(), abs=0.006)


def test_a_file_in_the_format_gives_only_what_it_states(tmp_path):
    path = tmp_path / "pub.json"
    path.write_text(json.dumps(TABLE))
    row = load_published(path).rows[0]
    assert row.rate("E0") == pytest.approx(0.615) and row.rate("E0", "Health") == 0.7
    assert math.isnan(row.rate("E1")) and row.value(Metric.CR, "E3") is None
    assert row.robustness() == 0.65


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("{", "not JSON: line 1"),
        ("[" * 200 + "]" * 200, "nested deeper than 100 levels"),
        (
            json.dumps(
                {
                    **TABLE,
                    "rows": [
                        {
                            "model": "m",
                            "simulator": "s",
                            "values": [
                                {"metric": "cr", "env_mode": "E9", "value": 1, "source": "T"}
                            ],
                        }
                    ],
                }
            ),
            "rows.0.values.0.env_mode: String should match pattern",
        ),
        (
            json.dumps(
                {
                    **TABLE,
                    "rows": [
                        {
                            "model": "m",
                            "simulator": "s",
                            "values": [
                                {"metric": "cr", "env_mode": "E0", "value": 1, "source": ""}
                            ],
                        }
                    ],
                }
            ),
            "rows.0.values.0.source: String should have at least 1 character",
        ),
    ],
)
def test_a_bad_file_is_one_message_naming_the_field(tmp_path, text, said):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(UsageError, match=said.replace(".", r"\.")):
        load_published(path)


def test_a_missing_file_is_bad_input(tmp_path):
    with pytest.raises(UsageError, match="no published table at"):
        load_published(tmp_path / "nope.json")


def test_published_rows_sit_beside_the_measured_ones_unranked():
    rows = [
        sample_row(agent_model=a, env_mode=m, task_id=t, passed=(t < p))
        for a, p in (("x/one", 3), ("x/two", 1))
        for m in ("E0", "E1")
        for t in range(4)
    ]
    report = build_report(rows, n_resamples=20)
    table = side_by_side(report, PublishedTable.model_validate(TABLE))
    kinds = [(r[0], r[1], r[2]) for r in table.rows]
    assert kinds == [
        ("1", "measured", "x/one"),
        ("2", "measured", "x/two"),
        ("-", "published", "vendor/model-a"),
    ]
    published = table.rows[2]
    assert published[5:10] == ["61.5", NOT_PUBLISHED, "40.0", NOT_PUBLISHED, "0.65"]
    assert published[10] == "Table 3"  # the tables stating its overall values
    assert "never ranked with them" in published_lines(PublishedTable.model_validate(TABLE))[0]


def rows_named(table, model, simulator="Gemini-3-Flash-Preview", effort=None):
    return [
        r
        for r in table.agents()
        if (r.model, r.simulator, r.reasoning_effort) == (model, simulator, effort)
    ]


def test_the_papers_other_figures_are_entered_as_stated_with_their_sources():
    table = load_published(PAPER)
    # Table 4: agents under the GPT-5.2 and Qwen 3.5 Plus simulators, E0
    [gpt_under_gpt] = rows_named(table, "GPT-5.2", "GPT-5.2")
    assert gpt_under_gpt.value(Metric.CR, "E0").model_dump(exclude_none=True) == {
        "metric": Metric.CR,
        "env_mode": "E0",
        "value": 42.4,
        "source": "Table 4",
    }
    assert gpt_under_gpt.value(Metric.RANK, "E0").value == 1
    [glm_under_qwen] = rows_named(table, "GLM-5", "Qwen 3.5 Plus")
    assert glm_under_qwen.rate("E0") == pytest.approx(0.641)
    [gemini_pro] = rows_named(table, "Gemini 3.1 Pro", "GPT-5.2")
    assert math.isnan(gemini_pro.rate("E0"))  # only its rank is stated
    assert gemini_pro.value(Metric.RANK, "E0").source == "Table 4 (tied)"
    # Figure 4: E3 at each fault count and duration; two sources disagree at (2, 2)
    opus = table.rows[2]
    assert opus.model == "Claude Opus 4.6"
    assert [v.value for v in opus.values_at(Metric.CR, "E3", faults=(2, 2))] == [66.0, 63.9]
    assert [v.source for v in opus.values_at(Metric.CR, "E3", faults=(2, 2))] == [
        "Figure 4a",
        "Figure 4b",
    ]
    assert opus.value(Metric.CR, "E3", faults=(4, 2)).value == 60.2
    assert opus.value(Metric.CR, "E3", faults=(2, 4)).value == 57.9
    assert opus.rate("E3") == pytest.approx(0.639)  # the default setting: Table 3's
    # Figure 7: one row per stated effort
    efforts = {
        r.reasoning_effort: r.rate("E0")
        for r in table.agents()
        if (r.model, r.simulator) == ("GPT-5.2", "Gemini-3-Flash-Preview")
    }
    assert efforts[None] == pytest.approx(0.796) and efforts["high"] == pytest.approx(0.762)
    assert sorted(e for e in efforts if e) == ["high", "low", "medium", "none", "xhigh"]
    [opus_max] = rows_named(table, "Claude Opus 4.6", effort="max")
    assert opus_max.rate("E0") == pytest.approx(0.738)
    # averages: Table 3, Table 4 per simulator (with its range), Figure 12 per industry
    averages = {(r.model, r.simulator): r for r in table.rows if r.averages}
    table3 = averages["Average of Table 3's 9 models", "Gemini-3-Flash-Preview"]
    assert [table3.rate(m) * 100 for m in MODES] == pytest.approx([67.5, 62.6, 53.4, 54.4])
    assert table3.averages == [r.model for r in table.rows[:15] if r.value(Metric.R)]
    under_gpt = averages["Average of Table 4's 8 agents", "GPT-5.2"]
    assert under_gpt.rate("E0") == pytest.approx(0.293)
    assert (
        under_gpt.value(Metric.LOWEST, "E0").value,
        under_gpt.value(Metric.HIGHEST, "E0").value,
    ) == (23.0, 42.4)
    industries = averages["Average of the 15 models", "Gemini-3-Flash-Preview"]
    assert industries.rate("E0", "Business & Enterprise") == pytest.approx(0.701)
    # Figure 8: ranking agreement between simulators
    stated = {tuple(a.simulators): (a.value, a.agreeing_pairs, a.pairs) for a in table.agreements}
    assert stated == {
        ("Gemini-3-Flash-Preview", "Qwen 3.5 Plus"): (85.7, 24, 28),
        ("Gemini-3-Flash-Preview", "GPT-5.2"): (75.0, 21, 28),
        ("Qwen 3.5 Plus", "GPT-5.2"): (82.1, None, None),
    }
    every = [v for r in table.rows for v in r.values] + table.agreements
    assert all(v.source for v in every)


GPT = "openai/gpt-5.2"
OPUS = "anthropic/claude-opus-4-6"
GEMINI = "google/gemini-3-flash-preview"
QWEN = "openai-api/dashscope/qwen3.5-plus"


def measured(agent, simulator, passes, mode="E0", faults=(2, 2), effort="high"):
    """Ten samples of one setup, ``passes`` of them passed."""
    return [
        sample_row(
            agent_model=agent,
            simulator_model=simulator,
            env_mode=mode,
            fault_count=faults[0],
            fault_duration=faults[1],
            reasoning_effort=effort,
            task_id=t,
            passed=t < passes,
        )
        for t in range(10)
    ]


def test_the_papers_rows_follow_the_run_of_the_same_model_simulator_and_effort():
    table = load_published(PAPER)
    rows = [
        *measured(GPT, GEMINI, 8),
        *measured(GPT, QWEN, 7),
        *measured(GPT, GEMINI, 5, effort="none"),
        *measured(OPUS, GEMINI, 6, mode="E3", faults=(1, 2)),
    ]
    report = build_report(rows, n_resamples=20)
    lines = [(r[0], r[1], r[2], r[3], r[5], r[-1]) for r in side_by_side(report, table).rows]
    gpt_high = f"{GPT}[reasoning_effort=high]"
    at_gemini = lines[: lines.index(("2", "measured", gpt_high, QWEN, "70.0", "these logs"))]
    assert at_gemini == [
        ("1", "measured", gpt_high, GEMINI, "80.0", "these logs"),
        # the project page's row (the paper's default effort: high) and Figure 7's high
        (
            "-",
            "published",
            "GPT-5.2",
            "Gemini-3-Flash-Preview",
            "79.6",
            "project page, E0 leaderboard, project page, robustness table",
        ),
        ("-", "published", "GPT-5.2 [high]", "Gemini-3-Flash-Preview", "76.2", "Figure 7"),
    ]
    none = lines.index(
        ("3", "measured", f"{GPT}[reasoning_effort=none]", GEMINI, "50.0", "these logs")
    )
    assert lines[none + 1][2:5] == ("GPT-5.2 [none]", "Gemini-3-Flash-Preview", "54.7")
    # no Table 4 CR is stated for GPT-5.2 under Qwen 3.5 Plus: nothing follows that run
    assert (
        lines[lines.index(("2", "measured", gpt_high, QWEN, "70.0", "these logs")) + 1][1]
        == "measured"
    )
    # the Opus run at fc 1, fd 2 in E3: Figure 4a's value beside it, in the E3 column
    setting = [r for r in side_by_side(report, table).rows if "(fc 1, fd 2)" in r[2]]
    assert [(r[1], r[2], r[8], r[-1]) for r in setting] == [
        ("measured", f"{OPUS}[reasoning_effort=high] (fc 1, fd 2)", "60.0", "these logs"),
        ("published", "Claude Opus 4.6 (fc 1, fd 2)", "71.5", "Figure 4a"),
    ]
    # rows no run matched follow, unranked; rows without a value for the columns do not
    rest = lines[max(i for i, line in enumerate(lines) if line[1] == "measured") + 1 :]
    assert all(line[0] == "-" and line[1] == "published" for line in rest)
    assert ("Qwen 3.5 Plus", "Qwen 3.5 Plus") not in {(line[2], line[3]) for line in lines}


def test_a_run_without_an_effort_matches_rows_that_state_none():
    table = load_published(PAPER)
    report = build_report(measured(GPT, GEMINI, 8, effort=None), n_resamples=20)
    followers = [r[2] for r in side_by_side(report, table).rows[1:3]]
    assert followers == ["GPT-5.2", "Gemini 3.1 Pro"]  # then the unmatched rows, in order


def test_the_stated_ranking_agreement_is_printed_beside_the_measured_one():
    table = load_published(PAPER)
    rows = [
        *measured(GPT, GEMINI, 8),
        *measured(OPUS, GEMINI, 6),
        *measured(GPT, QWEN, 7),
        *measured(OPUS, QWEN, 3),
    ]
    report = build_report(rows, n_resamples=20)
    lines = published_lines(table, report)
    assert lines[1:] == [
        f"Ranking agreement of {GEMINI} and {QWEN} in E0: measured 100.0 % (1 of 1 pairs); "
        "published 85.7 % (24 of 28 pairs) (Figure 8)."
    ]
    assert published_lines(table) == lines[:1]  # without the report: why apart only
