"""Flips and quality figures in a bundle: recomputed by ``verify``, shown by the leaderboard.

The runs are the noisy scripted models (an agent that sometimes gives up, a simulator
that is sometimes busy, a judge that sometimes turns its verdict) on three tasks of the
reference suite, four epochs, three votes: every figure has something to count.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bundle.scripted import TASKS, changed, edit_json, resign
from conftest import run_task
from occubench.analysis import comparable_groups
from occubench.bundle import (
    BUNDLE_FORMAT,
    MANIFEST,
    REPORT_SECTIONS_SINCE,
    SUMMARY,
    TWIN_FIDELITY,
    Outcome,
    make_bundle,
    read_bundle,
)
from occubench.leaderboard import build_site
from occubench.report import NOT_MEASURED, build_report, floor_record
from occubench.results import read_runs
from occubench.twins import Feeding, StepMatch, TwinFidelity

NOISY = {"simulator": "occubench/noisy-simulator", "verifier": "occubench/noisy-judge"}


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("noisy")
    run_task(
        folder,
        agent="occubench/noisy-agent",
        roles=NOISY,
        dataset="reference",
        task_ids=TASKS,
        with_plan=True,
        eval_args={"epochs": 4},
    )
    return folder


@pytest.fixture(scope="module")
def bundle(logs, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "noisy.tar.gz"
    make_bundle([logs], out, resamples=50)
    return out


def test_verify_recomputes_flips_and_quality_from_the_logs(bundle, logs):
    verified = read_bundle(bundle)
    assert verified.verification.outcome is Outcome.VERIFIED, verified.verification.problems
    summary = verified.verification.summary
    assert summary is not None
    stated = summary.groups[0].report
    rows = read_runs([logs])
    (group,) = comparable_groups(rows)
    report = build_report(group.rows, n_resamples=50, variance=True, sources=rows)
    assert stated.flips == report.flips and stated.quality == report.quality
    assert stated.guard == report.guard
    (guard,) = stated.guard
    assert guard.guarded == 12 and guard.recorded == 12  # the guard flags by default
    (flip,) = stated.flips
    assert flip.tasks == 3 and flip.samples == 12 and flip.pairs > 0
    (quality,) = stated.quality
    assert quality.voted == 12 and quality.checked == 12  # three votes; checks on (occubench)
    assert any("verdict flips" in line for line in verified.verification.checked)


@pytest.mark.parametrize(
    ("table", "field"),
    [
        ("flips", "flipped"),
        ("flips", "verifier_pairs"),
        ("quality", "unanimous"),
        ("guard", "off_contract"),
    ],
)
def test_a_tampered_figure_is_caught(bundle, tmp_path, table, field):
    stated = {}

    def edit(files):
        def bump(summary):
            record = summary["groups"][0]["report"][table][0]
            stated["was"] = record[field]
            record[field] += 1

        edit_json(files, SUMMARY, bump)
        resign(files)

    result = read_bundle(changed(bundle, tmp_path / "x.tar.gz", edit)).verification
    assert result.outcome is Outcome.FAILED
    (problem,) = result.problems
    assert problem.member == SUMMARY
    was = stated["was"]
    assert f"{table}[0].{field}: stated {was + 1}, recomputed {was}" in problem.message


def test_the_leaderboard_shows_the_figures_and_the_matching_floor(bundle, logs, tmp_path):
    rows = read_runs([logs])
    nulls = [r.model_copy(update={"agent_model": "occubench/null-answer"}) for r in rows]
    here = floor_record(nulls, "reference", "d" * 64)
    elsewhere = here.model_copy(update={"task_ids": ["1"]})
    site = build_site([bundle], tmp_path / "site", resamples=50, floors=[elsewhere, here])
    (board,) = site.boards
    (entry,) = board.entries
    assert entry.flips is not None and entry.quality is not None
    assert entry.floor == here.highest()
    assert entry.believe["floor %"].endswith("occubench/null-answer")
    assert entry.believe["flips %"] != NOT_MEASURED
    assert entry.believe["expert kappa"] == entry.believe["against gold"] == NOT_MEASURED
    assert entry.guard is not None and entry.guard.recorded == 12
    assert entry.believe["exploit suspected"].startswith("0.0 (0/")  # the agent
    assert entry.believe["simulator off contract"] == "0.0 (0/12: 0 passed, 0 failed)"
    page = (tmp_path / "site" / "index.html").read_text()
    assert "flips by cause" in page and NOT_MEASURED in page
    assert "exploit suspected" in page and "simulator off contract" in page

    site = build_site([bundle], tmp_path / "other", resamples=50, floors=[elsewhere])
    (entry,) = site.boards[0].entries
    assert entry.floor is None and entry.believe["floor %"] == NOT_MEASURED


def test_a_format_1_bundle_verifies_without_the_sections_it_did_not_state(bundle, tmp_path):
    def edit(files):
        def older(summary):
            for group in summary["groups"]:
                for section in REPORT_SECTIONS_SINCE:
                    del group["report"][section]

        edit_json(files, SUMMARY, older)
        edit_json(files, MANIFEST, lambda manifest: manifest.update(format=1))
        resign(files)

    result = read_bundle(changed(bundle, tmp_path / "old.tar.gz", edit)).verification
    assert result.outcome is Outcome.VERIFIED, result.problems
    assert any("format 1 states no flips, quality" in line for line in result.checked)
    assert result.summary is not None and result.summary.groups[0].report.flips


def test_a_bundle_of_a_later_format_is_refused(bundle, tmp_path):
    def edit(files):
        edit_json(files, MANIFEST, lambda manifest: manifest.update(format=BUNDLE_FORMAT + 1))
        resign(files)

    result = read_bundle(changed(bundle, tmp_path / "new.tar.gz", edit)).verification
    assert result.outcome is Outcome.FAILED
    assert f"this occubench reads formats 1 to {BUNDLE_FORMAT}" in result.problems[0].message


def test_a_format_2_bundle_verifies_without_the_guard_findings(bundle, tmp_path):
    """Bundles made before issue 48 state no guard section: recomputed, not compared."""

    def edit(files):
        def older(summary):
            for group in summary["groups"]:
                del group["report"]["guard"]

        edit_json(files, SUMMARY, older)
        edit_json(files, MANIFEST, lambda manifest: manifest.update(format=2))
        resign(files)

    result = read_bundle(changed(bundle, tmp_path / "two.tar.gz", edit)).verification
    assert result.outcome is Outcome.VERIFIED, result.problems
    assert any("format 2 states no guard" in line for line in result.checked)
    assert result.summary is not None and result.summary.groups[0].report.guard


def _twin_records(rows, matched=3):
    """The noisy simulator measured against the twins on the runs' environments."""
    envs = sorted({r.env_name for r in rows})
    steps = [
        StepMatch(
            environment=env,
            trajectory="probe",
            step=0,
            tool="read",
            fields_changed=0,
            outcome_match=True,
            determined=4,
            determined_matched=matched,
        )
        for env in envs
    ]
    record = TwinFidelity(
        simulator=NOISY["simulator"],
        feeding=Feeding.TWIN,
        tolerance=0.01,
        environments=envs,
        steps=steps,
    )
    return [record]


def test_twin_fidelity_travels_in_the_bundle_and_verify_recomputes_it(logs, tmp_path):
    rows = read_runs([logs])
    out = tmp_path / "twin.tar.gz"
    manifest = make_bundle([logs], out, twin=_twin_records(rows), resamples=50)
    assert TWIN_FIDELITY in manifest.files and manifest.format == BUNDLE_FORMAT
    verified = read_bundle(out).verification
    assert verified.outcome is Outcome.VERIFIED, verified.problems
    assert any("steps against the twins" in line for line in verified.checked)
    assert verified.summary is not None
    (quality,) = verified.summary.groups[0].report.quality
    assert (quality.twin_steps, quality.twin_determined) == (3, 0.75)
    site = build_site([out], tmp_path / "site", resamples=50)
    (entry,) = site.boards[0].entries
    assert entry.believe["against twin"] == "fields 0.75, outcome 1.00 (n=3)"

    def better(files):  # the steps edited after the summary was made: caught
        edit_json(
            files,
            TWIN_FIDELITY,
            lambda records: [s.update(determined_matched=4) for s in records[0]["steps"]],
        )
        resign(files)

    result = read_bundle(changed(out, tmp_path / "edited.tar.gz", better)).verification
    assert result.outcome is Outcome.FAILED
    assert "quality[0].twin_determined: stated 0.75, recomputed 1.0" in result.problems[0].message

    def broken(files):
        edit_json(files, TWIN_FIDELITY, lambda records: records[0].pop("feeding"))
        resign(files)

    result = read_bundle(changed(out, tmp_path / "broken.tar.gz", broken)).verification
    assert result.outcome is Outcome.FAILED
    assert result.problems[0].member == TWIN_FIDELITY
    assert "not twin-fidelity records: 0.feeding" in result.problems[0].message
