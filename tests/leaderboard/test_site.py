"""The leaderboard site's data and files: boards apart, ties, costs, records, published rows."""

from __future__ import annotations

import json

import pytest

from leaderboard.sites import make_site
from occubench.bundle import BundleClass, Outcome, verify_bundle
from occubench.errors import UsageError
from occubench.leaderboard import build_site, tie_ranks


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    return make_site(tmp_path_factory.mktemp("leaderboard"))


def test_standard_and_custom_bundles_are_ranked_apart(site):
    _, data, _ = site
    kinds = [(b.bundle_class, [e.agent for e in b.entries]) for b in data.boards]
    assert kinds[0] == (BundleClass.STANDARD, ["occubench/schema-agent"])
    custom = [b for b in data.boards if b.bundle_class is BundleClass.CUSTOM]
    assert len(custom) == 1  # one simulator, one judge, one task set and protocol
    assert sorted(e.agent for e in custom[0].entries) == [
        "occubench/careful",
        "occubench/no-retry",
        "occubench/trusting",
    ]
    assert "simulator occubench/canned, verifier (the simulator)" in custom[0].title


def test_a_tampered_bundle_has_its_record_and_no_row(site):
    folder, data, _ = site
    (tampered,) = [b for b in data.bundles if b.name == "tampered.tar.gz"]
    assert tampered.outcome is Outcome.FAILED and tampered.bundle_class is None
    assert "its SHA-256 does not match the manifest" in tampered.first_problem
    record = json.loads((folder / tampered.record.replace(".html", ".json")).read_text())
    assert record["outcome"] == "failed"
    page = (folder / tampered.record).read_text()
    assert "its SHA-256 does not match the manifest" in page
    assert all(e.bundle != tampered.slug for b in data.boards for e in b.entries)


def test_every_row_links_to_its_bundles_verification_record(site):
    folder, data, paths = site
    for board in data.boards:
        for entry in board.entries:
            record = json.loads((folder / entry.record.replace(".html", ".json")).read_text())
            assert record["outcome"] == "verified" and (folder / entry.record).is_file()
    careful = next(e for b in data.boards for e in b.entries if e.agent == "occubench/careful")
    assert careful.record == f"records/{careful.bundle}.html"
    expected = verify_bundle(paths["careful"]).sha256
    assert careful.bundle.endswith(expected[:8])


def test_ties_costs_and_industries_come_from_the_recomputed_reports(site):
    _, data, _ = site
    custom = next(b for b in data.boards if b.bundle_class is BundleClass.CUSTOM)
    by_agent = {e.agent: e for e in custom.entries}
    assert [e.tie for e in custom.entries] == [1, 1, 1]  # 100% in E0 for all three
    assert by_agent["occubench/careful"].modes == {"E0": 1.0, "E1": 1.0, "E2": 1.0, "E3": 1.0}
    assert by_agent["occubench/no-retry"].r == 0.0
    assert by_agent["occubench/careful"].cost_per_task is not None  # priced in its bundle
    assert by_agent["occubench/trusting"].cost_per_task is None  # its bundle has no prices
    assert all(e.tokens_per_task and e.tokens_per_task > 0 for e in custom.entries)
    assert len(by_agent["occubench/careful"].industries) == 3  # the three tasks' industries


def test_tie_ranks_follow_the_mdd_marks():
    from occubench.analysis import LeaderboardRow

    lines = [
        LeaderboardRow.model_validate(
            dict(
                rank=i,
                agent=str(i),
                simulator="s",
                env_mode="E0",
                scored=10,
                passed=0,
                errors=0,
                rate=r,
                low=0,
                high=1,
                mode_rates={},
                r=0,
                r_low=0,
                r_high=0,
                not_distinguishable_from=close,
            )
        )
        for i, r, close in ((1, 0.9, [2]), (2, 0.6, [1]), (3, 0.1, []))
    ]
    assert tie_ranks(lines) == {1: 1, 2: 1, 3: 3}


def test_the_published_rows_are_stated_values_only(site):
    _, data, _ = site
    assert data.published is not None
    (row,) = data.published.rows
    assert row.modes == {"E0": 0.7, "E1": 0.6, "E2": 0.5, "E3": None} and row.r is None
    assert "never ranked with them" in data.published.apart


def test_no_bundle_or_one_given_twice_is_bad_input(site, tmp_path):
    _, _, paths = site
    with pytest.raises(UsageError, match="no bundle given"):
        build_site([], tmp_path / "none")
    with pytest.raises(UsageError, match="the same bundle is given twice"):
        build_site([paths["paper"], paths["paper"]], tmp_path / "twice", resamples=50)


def test_a_folder_with_someone_elses_page_is_refused_unless_forced(site, tmp_path):
    _, _, paths = site
    out = tmp_path / "site"
    out.mkdir()
    (out / "index.html").write_text("<p>the user's own page</p>")
    with pytest.raises(UsageError, match=r"index.html.*--force"):
        build_site([paths["paper"]], out, resamples=50)
    assert (out / "index.html").read_text() == "<p>the user's own page</p>"
    assert not (out / "data.json").exists()
    build_site([paths["paper"]], out, resamples=50, force=True)
    assert "the user's own page" not in (out / "index.html").read_text()
    build_site([paths["paper"]], out, resamples=50)  # its own site: replaced without asking
    assert json.loads((out / "data.json").read_text())["bundles"]
    assert not [p for p in out.iterdir() if p.name.endswith(".partial")]
