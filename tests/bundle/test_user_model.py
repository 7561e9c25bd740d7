"""Bundles state the user model: runs with another one are custom and summarised apart.

The rule on records made by hand, then runs of the scripted asking agent with scripted
users on the one-task user dataset, bundled and verified end to end; the fixture
dataset stands for a release whose standard names a user model (``Standard``).
"""

from __future__ import annotations

import pytest

from bundle.scripted import changed, edit_json, reference_runs, resign, user_runs
from bundle.test_standard import RELEASE, record
from occubench.bundle import (
    BundleClass,
    Outcome,
    Standard,
    departures,
    make_bundle,
    read_bundle,
    verify_bundle,
)
from occubench.bundle._standard import run_key
from occubench.dataset import content_digest

COOPERATIVE = "occubench/user-cooperative"
TERSE = "occubench/user-terse"
NO_USER = "user model {} (standard: none: the release's tasks have no user)"


def test_a_run_that_talked_to_a_user_departs_from_a_standard_that_names_none():
    assert departures([record(user=COOPERATIVE)], [RELEASE], talked={"logs/001-x.eval"}) == [
        NO_USER.format(COOPERATIVE)
    ]


def test_a_user_model_its_tasks_never_called_departs_in_nothing():
    assert departures([record(user=COOPERATIVE)], [RELEASE], talked=set()) == []
    assert departures([record()], [RELEASE], talked=set()) == []


def test_without_the_samples_a_bound_user_model_counts_as_used():
    assert departures([record(user=COOPERATIVE)], [RELEASE]) == [NO_USER.format(COOPERATIVE)]


def test_the_standards_user_model_at_the_default_budget_is_standard():
    standard = Standard(user_model=COOPERATIVE)
    talked = {"logs/001-x.eval"}
    assert departures([record(user=COOPERATIVE)], [RELEASE], standard, talked=talked) == []
    assert departures([record(user=TERSE)], [RELEASE], standard, talked=talked) == [
        f"user model {TERSE} (standard: {COOPERATIVE})"
    ]
    assert departures([record()], [RELEASE], standard, talked=talked) == [
        f"user model unset (standard: {COOPERATIVE})"  # a run that talked to no model
    ]
    budget = record(user=COOPERATIVE, config={"user_turns": 3})
    assert departures([budget], [RELEASE], standard, talked=talked) == [
        "setting user_turns = 3 (default: unset)"
    ]


def test_runs_with_different_user_models_are_different_runs():
    assert run_key(record(user=COOPERATIVE)) != run_key(record(user=TERSE))


@pytest.fixture(scope="module")
def talked(tmp_path_factory):
    """Bundles of the asking agent with the cooperative user, and with it and the terse one."""
    folder = tmp_path_factory.mktemp("users")
    logs = user_runs(folder, [COOPERATIVE.split("/")[1], TERSE.split("/")[1]])
    one = make_bundle([logs / f"asking-{COOPERATIVE.split('/')[1]}"], folder / "one.tar.gz")
    both = make_bundle([logs], folder / "both.tar.gz")
    standard = Standard(
        dataset_digest=content_digest(folder / "data"), release_tasks=1, user_model=COOPERATIVE
    )
    return folder, one, both, standard


def test_the_manifest_states_each_runs_user_model(talked):
    folder, one, both, _ = talked
    assert [r.user for r in one.runs] == [COOPERATIVE]
    assert sorted(r.user or "" for r in both.runs) == [COOPERATIVE, TERSE]
    assert both.format == 5


def test_the_standards_user_model_is_standard_and_another_is_custom(talked):
    folder, _, _, standard = talked
    result = verify_bundle(folder / "one.tar.gz", standard=standard)
    assert result.outcome is Outcome.VERIFIED, result.problems
    assert result.bundle_class is BundleClass.STANDARD, result.departures
    assert [r.user for r in result.runs] == [COOPERATIVE]
    mixed = verify_bundle(folder / "both.tar.gz", standard=standard)
    assert mixed.outcome is Outcome.VERIFIED, mixed.problems
    assert mixed.bundle_class is BundleClass.CUSTOM
    assert mixed.departures == [f"user model {TERSE} (standard: {COOPERATIVE})"]
    plain = verify_bundle(folder / "one.tar.gz")  # the benchmark's standard names no user
    assert NO_USER.format(COOPERATIVE) in plain.departures


def test_the_summary_reports_each_user_model_apart(talked):
    folder, _, _, _ = talked
    summary = read_bundle(folder / "both.tar.gz").verification.summary
    assert summary is not None
    assert sorted(g.label.rsplit(", ", 1)[1] for g in summary.groups) == [
        f"user {COOPERATIVE}",
        f"user {TERSE}",
    ]
    users = [{u.user_model for u in g.report.user_errors} for g in summary.groups]
    assert sorted(users, key=str) == [{COOPERATIVE}, {TERSE}]


def test_a_format_4_bundle_verifies_with_or_without_the_user_model_in_its_runs(talked, tmp_path):
    """Bundles from before format 5 state no user model: their runs are compared without it."""
    folder, _, _, _ = talked

    def older(files):
        def drop(manifest):
            manifest.update(format=4)
            for run in manifest["runs"]:
                run.pop("user", None)

        edit_json(files, "manifest.json", drop)
        resign(files)

    result = verify_bundle(changed(folder / "both.tar.gz", tmp_path / "four.tar.gz", older))
    assert result.outcome is Outcome.VERIFIED, result.problems


def test_a_bundle_without_a_user_states_none_and_its_digest_is_as_before(tmp_path):
    logs = reference_runs(tmp_path / "logs", agents=["occubench/careful"], modes=["E0"])
    manifest = make_bundle([logs], tmp_path / "plain.tar.gz", resamples=50)
    assert all(r.user is None for r in manifest.runs)
    assert all("user" not in run for run in manifest.model_dump(mode="json")["runs"])

    def older(files):
        edit_json(files, "manifest.json", lambda m: m.update(format=4))
        resign(files)

    result = verify_bundle(changed(tmp_path / "plain.tar.gz", tmp_path / "four.tar.gz", older))
    assert result.outcome is Outcome.VERIFIED, result.problems


def test_an_edited_user_model_fails_verification(talked, tmp_path):
    folder, _, _, _ = talked

    def edit(files):
        edit_json(files, "manifest.json", lambda m: m["runs"][0].update(user="someone/else"))
        resign(files)

    result = verify_bundle(changed(folder / "one.tar.gz", tmp_path / "edited.tar.gz", edit))
    assert result.outcome is Outcome.FAILED
    assert any("user" in p.message and "someone/else" in p.message for p in result.problems)
