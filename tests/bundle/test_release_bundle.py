"""Runs of the release's harness in a bundle: verified, custom, on a board of their own."""

from __future__ import annotations

import json

import pytest

from bundle.scripted import changed, edit_json, reference_runs, resign
from occubench.bundle import MANIFEST, BundleClass, Outcome, make_bundle, verify_bundle
from occubench.export import write_release
from occubench.leaderboard import build_site
from occubench.results import RELEASE_RESULTS


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """A bundle of an occubench run and the same run written in the release's format."""
    root = tmp_path_factory.mktemp("mixed")
    logs = reference_runs(root / "runs", agents=["occubench/careful"], modes=["E0"])
    write_release([logs], root / "results")
    out = root / "mixed.tar.gz"
    manifest = make_bundle([logs, root / "results"], out, resamples=50)
    return out, manifest


def test_a_release_run_travels_in_a_bundle_and_verifies_as_custom(mixed):
    out, manifest = mixed
    (release,) = manifest.release_runs
    assert release.results.startswith("release/001-") and release.tasks == 3
    assert release.results in manifest.files and release.args in manifest.files
    result = verify_bundle(out)
    assert result.outcome is Outcome.VERIFIED and result.bundle_class is BundleClass.CUSTOM
    assert any("a run of the release's own harness" in d for d in result.departures)
    assert result.summary is not None and len(result.summary.groups) == 2
    assert any("1 run(s) of the release's harness match their files" in c for c in result.checked)


def test_an_edited_release_result_is_caught_by_the_recomputed_summary(mixed, tmp_path):
    out, manifest = mixed
    (release,) = manifest.release_runs

    def flip(files):
        lines = [json.loads(x) for x in files[release.results].decode().splitlines()]
        lines[0]["is_correct"] = not lines[0]["is_correct"]
        files[release.results] = "".join(json.dumps(x) + "\n" for x in lines).encode()
        resign(files)

    result = verify_bundle(changed(out, tmp_path / "x.tar.gz", flip))
    assert result.outcome is Outcome.FAILED
    assert "do not follow from the logs" in result.problems[0].message


def test_a_release_run_record_edited_in_the_manifest_is_caught(mixed, tmp_path):
    out, _ = mixed

    def claim(files):
        edit_json(files, MANIFEST, lambda m: m["release_runs"][0].update(agent="openai/gpt-5"))
        resign(files)

    result = verify_bundle(changed(out, tmp_path / "x.tar.gz", claim))
    assert result.outcome is Outcome.FAILED
    assert 'agent: stated "openai/gpt-5"' in result.problems[0].message


def test_the_leaderboard_puts_the_release_run_on_a_board_of_its_own(mixed, tmp_path):
    out, _ = mixed
    data = build_site([out], tmp_path / "site", resamples=50)
    titles = [board.title for board in data.boards]
    assert len(titles) == 2 and sum("the release's harness" in t for t in titles) == 1
    assert RELEASE_RESULTS == "results.jsonl"
