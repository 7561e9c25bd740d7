"""A bundle made from runs of the reference agents, verified, then changed every way.

Each change is made after the bundle was made (a log, the manifest, the summary, a file
added or taken away, a planted secret), first without fixing the manifest (the sums
catch it, naming the file), then with the manifest's sums and digest made to agree (the
claims recomputed from the logs catch it, naming what differs).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bundle.scripted import (
    FAKE_KEY,
    changed,
    edit_json,
    plant_key,
    read_tar,
    reference_runs,
    resign,
    rezip,
    write_tar,
)
from occubench.bundle import (
    MANIFEST,
    SUMMARY,
    BundleClass,
    BundleRefused,
    Outcome,
    make_bundle,
    read_bundle,
    verify_bundle,
)
from occubench.dataset import content_digest, reference_suite_dir
from occubench.errors import ExitCode
from occubench.grading import SCORER_NAME
from occubench.report import build_report
from occubench.results import read_runs


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    return reference_runs(tmp_path_factory.mktemp("runs"))


@pytest.fixture(scope="module")
def bundle(logs, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "reference.tar.gz"
    make_bundle([logs], out, resamples=100)
    return out


def first_log(files: dict[str, bytes]) -> str:
    return next(name for name in files if name.startswith("logs/"))


def test_a_bundle_verifies_and_says_why_it_is_custom(bundle, logs):
    result = verify_bundle(bundle)
    assert result.outcome is Outcome.VERIFIED and result.exit_code is ExitCode.OK
    assert result.bundle_class is BundleClass.CUSTOM
    said = "\n".join(result.departures)
    assert "protocol occubench (standard: paper)" in said
    assert "setting with_plan = True (default: False)" in said
    assert "dataset reference (digest" in said and "is not the pinned public release" in said
    assert "task set: 3 of the release's 382 tasks (8 runs)" in said
    assert [c.samples for c in result.runs] == [3] * 8 and not any(c.missing for c in result.runs)
    assert any(line.startswith("summary: 1 group(s)") for line in result.checked)
    manifest = result.manifest
    assert manifest is not None and len(manifest.runs) == 8
    assert {r.simulator for r in manifest.runs} == {"occubench/canned"}
    assert {r.verifier for r in manifest.runs} == {None}
    assert manifest.runs[0].points["fault_engine"] == "code"
    assert manifest.runs[0].config["protocol"] == "occubench"
    assert manifest.datasets[0].digest == content_digest(reference_suite_dir())
    assert manifest.runs[0].inspect_version and manifest.inspect_version
    assert set(manifest.files) == {SUMMARY, *(r.log for r in manifest.runs)}


def test_the_summary_holds_the_reports_numbers(bundle, logs):
    stated = json.loads(read_tar(bundle)[SUMMARY])
    report = build_report(read_runs([logs]), n_resamples=100, variance=True)
    board = stated["groups"][0]["report"]["leaderboard"]
    assert [(line["agent"], line["rate"], line["r"]) for line in board] == [
        (line.agent, line.rate, line.r) for line in report.leaderboard
    ]
    assert board[0]["mode_rates"] == {"E0": 1.0, "E1": 1.0, "E2": 1.0, "E3": 1.0}


def failed(result, member: str, words: str) -> None:
    assert result.outcome is Outcome.FAILED and result.exit_code is ExitCode.BAD_INPUT
    found = [p for p in result.problems if p.member == member]
    assert found and words in found[0].message, result.problems


def test_an_edited_log_is_caught_and_named(bundle, tmp_path):
    name = ""

    def edit(files):
        nonlocal name
        name = first_log(files)
        data = bytearray(files[name])
        data[len(data) // 2] ^= 0xFF
        files[name] = bytes(data)

    result = verify_bundle(changed(bundle, tmp_path / "x.tar.gz", edit))
    failed(result, name, "its SHA-256 does not match the manifest")


def test_an_edited_manifest_is_caught_by_its_digest(bundle, tmp_path):
    def edit(files):
        edit_json(files, MANIFEST, lambda m: m["runs"][0].update(simulator="openai/gpt-5"))

    failed(verify_bundle(changed(bundle, tmp_path / "x.tar.gz", edit)), MANIFEST, "was edited")


def test_a_resigned_manifest_is_caught_by_the_logs(bundle, tmp_path):
    def edit(files):
        edit_json(files, MANIFEST, lambda m: m["runs"][0].update(simulator="openai/gpt-5"))
        resign(files)

    result = verify_bundle(changed(bundle, tmp_path / "x.tar.gz", edit))
    failed(result, MANIFEST, 'simulator: stated "openai/gpt-5", recomputed "occubench/canned"')


def test_a_changed_verdict_with_resigned_sums_is_caught_by_its_own_record(bundle, tmp_path):
    name = ""

    def fail_one(members):
        edit_json(
            members,
            "samples/1001_epoch_1.json",
            lambda s: s["scores"][SCORER_NAME].update(value="I"),
        )

    def edit(files):
        nonlocal name
        name = first_log(files)
        files[name] = rezip(files[name], fail_one)
        resign(files)

    result = verify_bundle(changed(bundle, tmp_path / "x.tar.gz", edit))
    failed(result, name, "sample 1001 epoch 1: verdict failed, but its own record says checks")
    assert "the verdict was edited" in result.problems[0].message


def test_verdicts_flipped_then_bundled_again_are_caught(logs, tmp_path):
    """The attack: failed samples made 'passed' in the logs, and a new bundle made of them."""
    import shutil

    edited = tmp_path / "logs"
    shutil.copytree(logs, edited)
    flipped = 0

    def pass_all(members):
        nonlocal flipped
        for member in [m for m in members if m.startswith("samples/")]:
            sample = json.loads(members[member])
            score = sample["scores"][SCORER_NAME]
            if score["value"] == "I":
                score["value"] = "C"
                score["metadata"]["passed"] = True
                flipped += 1
                members[member] = json.dumps(sample).encode()

    for log in edited.rglob("*.eval"):
        log.write_bytes(rezip(log.read_bytes(), pass_all))
        for cached in log.parent.glob(log.name + ".*"):
            cached.unlink()
    assert flipped
    out = tmp_path / "flipped.tar.gz"
    make_bundle([edited], out, resamples=100)
    result = verify_bundle(out)
    assert result.outcome is Outcome.FAILED
    assert len(result.problems) == flipped
    assert all(
        "verdict passed, but its own record says checks" in p.message for p in result.problems
    )


def test_a_changed_summary_is_caught(bundle, tmp_path):
    def edit(files):
        edit_json(
            files,
            SUMMARY,
            lambda s: s["groups"][0]["report"]["robustness"][1].update(r=0.9),
        )
        resign(files)

    result = verify_bundle(changed(bundle, tmp_path / "x.tar.gz", edit))
    failed(result, SUMMARY, "robustness[1].r: stated 0.9, recomputed 0.0")


def test_a_file_added_or_taken_away_is_named(bundle, tmp_path):
    def add(files):
        files["extra.txt"] = b"hello"

    failed(verify_bundle(changed(bundle, tmp_path / "a.tar.gz", add)), "extra.txt", "not listed")
    gone = ""

    def drop(files):
        nonlocal gone
        gone = first_log(files)
        del files[gone]

    result = verify_bundle(changed(bundle, tmp_path / "d.tar.gz", drop))
    failed(result, gone, "listed in the manifest but not in the bundle")


def test_a_secret_in_a_log_refuses_the_bundle_naming_the_member(logs, tmp_path):
    import shutil

    copy = tmp_path / "logs"
    shutil.copytree(logs / "careful-E0", copy / "careful-E0")
    plant_key(copy)
    out = tmp_path / "secret.tar.gz"
    with pytest.raises(BundleRefused) as refused:
        make_bundle([copy], out, resamples=10)
    (problem,) = refused.value.problems
    assert problem.member.startswith("logs/001-") and problem.member.endswith(
        ".eval:samples/1001_epoch_1.json"
    )
    assert "holds a secret" in problem.message
    assert FAKE_KEY not in str(refused.value)  # named, never shown
    assert not out.exists() and list(tmp_path.glob("*.partial")) == []


def test_a_secret_in_a_bundle_fails_its_verification(bundle, tmp_path):
    def plant(members):
        edit_json(members, "header.json", lambda h: h["eval"].update(note=f"key {FAKE_KEY}"))

    name = ""

    def edit(files):
        nonlocal name
        name = first_log(files)
        files[name] = rezip(files[name], plant)
        resign(files)

    result = verify_bundle(changed(bundle, tmp_path / "x.tar.gz", edit))
    failed(result, f"{name}:header.json", "holds a secret")


def test_a_run_missing_a_declared_task_is_incomplete(logs, tmp_path):
    import shutil

    copy = tmp_path / "logs"
    shutil.copytree(logs / "no-retry-E1", copy / "no-retry-E1")
    log = sorted(copy.rglob("*.eval"))[0]
    log.write_bytes(rezip(log.read_bytes(), lambda m: m.pop("samples/1002_epoch_1.json")))
    for cached in copy.rglob("*.parquet"):
        cached.unlink()
    out = make_bundle([copy], tmp_path / "short.tar.gz", resamples=10)
    result = verify_bundle(tmp_path / "short.tar.gz")
    assert out.runs[0].sample_ids == ["1001", "1002", "1003"]
    assert result.outcome is Outcome.INCOMPLETE and result.exit_code is ExitCode.INCOMPLETE
    assert result.runs[0].missing == ["1002:1"] and result.runs[0].samples == 2
    assert "completeness: 1 log(s) lack declared task:epoch pairs" in "\n".join(result.checked)


def test_a_world_in_the_log_travels_with_the_bundle(logs, tmp_path):
    import shutil

    copy = tmp_path / "logs"
    shutil.copytree(logs / "careful-E0", copy / "careful-E0")
    log = sorted(copy.rglob("*.eval"))[0]
    world = {"path": "worlds/reference", "digest": "ab" * 32, "mode": "replay", "variant": 0}

    def add_world(members):
        edit_json(members, "header.json", lambda h: h["eval"]["metadata"].update(world=world))

    log.write_bytes(rezip(log.read_bytes(), add_world))
    manifest = make_bundle([copy], tmp_path / "w.tar.gz", resamples=10)
    assert manifest.runs[0].world is not None and manifest.runs[0].world.digest == "ab" * 32
    result = verify_bundle(tmp_path / "w.tar.gz")
    assert result.outcome is Outcome.VERIFIED
    assert "simulator answers from a recorded world (digest abababababab, replay)" in (
        result.departures
    )
    assert any("world abababababab (replay)" in note for note in result.notes)


def test_read_bundle_gives_the_logs_samples(bundle):
    verified = read_bundle(bundle)
    assert verified.verification.outcome is Outcome.VERIFIED
    assert len(verified.rows) == 24 and verified.rows[0].log.startswith("logs/001-")


def test_a_bundle_from_no_logs_or_a_json_log_is_bad_input(tmp_path):
    from occubench.errors import UsageError

    with pytest.raises(UsageError, match="no logs in"):
        make_bundle([tmp_path], tmp_path / "x.tar.gz")
    (tmp_path / "run.json").write_text("{}")
    with pytest.raises(UsageError, match="a bundle holds local .eval logs"):
        make_bundle([tmp_path / "run.json"], tmp_path / "x.tar.gz")


def test_not_a_bundle_is_one_problem(tmp_path):
    path = write_tar(tmp_path / "empty.tar.gz", {"readme.txt": b"hi"})
    failed(verify_bundle(path), MANIFEST, "missing: this is not an occubench bundle")
    (tmp_path / "text.tar.gz").write_text("not an archive")
    failed(verify_bundle(tmp_path / "text.tar.gz"), "text.tar.gz", "corrupt or not a .tar.gz")


def test_samples_that_ended_in_errors_are_said_with_exit_3(logs, tmp_path):
    import shutil

    copy = tmp_path / "logs"
    shutil.copytree(logs / "careful-E0", copy / "careful-E0")
    log = sorted(copy.rglob("*.eval"))[0]
    error = {"message": "provider down", "traceback": "Traceback ...\nOSError: down\n"}

    def errored(members):
        edit_json(members, "samples/1003_epoch_1.json", lambda s: s.update(error=error))

    log.write_bytes(rezip(log.read_bytes(), errored))
    for cached in copy.rglob("*.parquet"):
        cached.unlink()
    make_bundle([copy], tmp_path / "errors.tar.gz", resamples=10)
    result = verify_bundle(tmp_path / "errors.tar.gz")
    assert result.outcome is Outcome.ERRORS and result.exit_code is ExitCode.SAMPLE_ERRORS
    assert result.runs[0].errors == 1 and result.runs[0].samples == 3


def test_a_dataset_edited_for_the_runs_then_put_back_is_stated_as_they_ran(tmp_path):
    """The attack: runs on an edited copy of the suite, the copy restored, then bundled."""
    import shutil

    suite = tmp_path / "suite"
    shutil.copytree(reference_suite_dir(), suite)
    tasks = suite / "eval_benchmark_solvable.jsonl"
    original = tasks.read_bytes()
    tasks.write_bytes(
        original.replace(
            b'"verification_plan": "', b'"verification_plan": "Any answer is a success. '
        )
    )
    edited = content_digest(suite)
    reference_runs(
        tmp_path / "runs", agents=["occubench/careful"], modes=["E0"], dataset=str(suite)
    )
    tasks.write_bytes(original)  # put back before bundling
    assert content_digest(suite) == content_digest(reference_suite_dir()) != edited

    out = tmp_path / "b.tar.gz"
    manifest = make_bundle([tmp_path / "runs"], out, resamples=50)
    (record,) = manifest.datasets
    assert record.digest == edited and "changed since the runs read it" in record.note
    assert all(r.dataset_digest == edited for r in manifest.runs)
    result = verify_bundle(out)
    assert result.outcome is not Outcome.FAILED and result.bundle_class is BundleClass.CUSTOM

    def claim_the_suite(files):  # the manifest made to name the restored folder's digest
        def restate(m):
            m["datasets"][0]["digest"] = content_digest(reference_suite_dir())

        edit_json(files, MANIFEST, restate)
        resign(files)

    forged = verify_bundle(changed(out, tmp_path / "forged.tar.gz", claim_the_suite))
    failed(forged, MANIFEST, f"but its runs recorded {edited[:12]} when they ran")
