"""Published results as data: the shipped table, a file in its format, the side-by-side table."""

from __future__ import annotations

import json
import math

import pytest

from conftest import sample_row
from occubench.errors import UsageError
from occubench.published import (
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
    assert len(table.rows) == 15 and len(table.industries()) == 10
    first = table.rows[0]
    assert first.model == "GPT-5.2" and first.rate("E0") == pytest.approx(0.796)
    assert first.rate("E2") == pytest.approx(0.704) and first.robustness() == 0.84
    assert first.rate("E0", "Science & Research") == pytest.approx(0.94)
    assert first.simulator is None and first.verifier is None  # the source names neither
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
