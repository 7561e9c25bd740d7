"""``occubench bundle``, ``verify``, ``leaderboard``, ``report --published``: exits and lines."""

from __future__ import annotations

import shutil

import pytest
from typer.testing import CliRunner

from bundle.scripted import FAKE_KEY, changed, edit_json, plant_key, reference_runs, user_runs
from occubench.bundle import MANIFEST, make_bundle
from occubench.cli import app
from occubench.cli.bundle import runs_table
from occubench.errors import ExitCode

runner = CliRunner()


def flat(output: str) -> str:
    return " ".join(output.split())


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    return reference_runs(
        tmp_path_factory.mktemp("runs"), agents=("occubench/careful",), modes=("E0", "E1")
    )


@pytest.fixture(scope="module")
def bundle(logs, tmp_path_factory):
    out = tmp_path_factory.mktemp("bundle") / "careful.tar.gz"
    result = runner.invoke(app, ["bundle", str(logs), "--out", str(out), "--resamples", "50"])
    assert result.exit_code == ExitCode.OK, result.output
    assert f"Wrote {out}: 2 log(s), 4 files" in flat(result.output)
    assert f"occubench verify {out}" in flat(result.output)
    return out


def test_verify_says_what_it_checked_and_why_the_bundle_is_custom(bundle, tmp_path):
    record = tmp_path / "record.json"
    result = runner.invoke(app, ["verify", str(bundle), "--record", str(record)])
    assert result.exit_code == ExitCode.OK, result.output
    text = flat(result.output)
    assert f"Bundle {bundle.name}: verified, custom" in text
    assert "checked summary: 1 group(s)" in text and "every one as stated" in text
    assert "Custom, because it departs from the benchmark in 4 way(s):" in text
    assert "- task set: 3 of the release's 382 tasks (2 runs)" in text
    assert '"outcome": "verified"' in record.read_text()


def test_an_edited_log_or_manifest_fails_verify_naming_it(bundle, tmp_path):
    def edit_log(files):
        name = next(n for n in files if n.startswith("logs/"))
        files[name] = files[name].replace(b"PK", b"PQ", 3)

    result = runner.invoke(app, ["verify", str(changed(bundle, tmp_path / "l.tar.gz", edit_log))])
    assert result.exit_code == ExitCode.BAD_INPUT
    text = flat(result.output)
    assert "Bundle l.tar.gz: FAILED (1 problem(s))" in text
    assert ".eval: its SHA-256 does not match the manifest" in text and "logs/001-" in text

    def edit_manifest(files):
        edit_json(files, MANIFEST, lambda m: m["runs"][0].update(agent="openai/gpt-5"))

    edited = changed(bundle, tmp_path / "m.tar.gz", edit_manifest)
    result = runner.invoke(app, ["verify", str(edited)])
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "manifest.json: its digest does not match its contents" in flat(result.output)
    assert "Traceback" not in result.output


def test_a_secret_refuses_the_bundle_with_exit_2(logs, tmp_path):
    copy = tmp_path / "logs"
    shutil.copytree(logs / "careful-E0", copy / "careful-E0")
    plant_key(copy)
    result = runner.invoke(app, ["bundle", str(copy), "--out", str(tmp_path / "s.tar.gz")])
    assert result.exit_code == ExitCode.BAD_INPUT
    text = flat(result.output)
    assert "bundle refused (1 problem(s))" in text
    assert ".eval:samples/1001_epoch_1.json: holds a secret" in text
    assert FAKE_KEY not in result.output and not (tmp_path / "s.tar.gz").exists()


def test_a_missing_bundle_or_a_bad_published_table_is_bad_input(tmp_path, logs):
    result = runner.invoke(app, ["verify", str(tmp_path / "none.tar.gz")])
    assert result.exit_code == ExitCode.BAD_INPUT and "no bundle file at" in flat(result.output)
    (tmp_path / "bad.json").write_text('{"source": 1}')
    result = runner.invoke(app, ["report", str(logs), "--published", str(tmp_path / "bad.json")])
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "bad.json: source: Input should be a valid string" in flat(result.output)


def test_report_puts_the_published_rows_beside_the_measured_ones(logs, tmp_path):
    from leaderboard.sites import PUBLISHED

    table = tmp_path / "published.json"
    table.write_text(PUBLISHED.model_dump_json())
    out = tmp_path / "report"
    args = ["report", str(logs), "--published", str(table), "--resamples", "20"]
    result = runner.invoke(app, [*args, "--out", str(out), "--format", "md"])
    assert result.exit_code == ExitCode.OK, result.output
    lines = [
        line for line in result.output.splitlines() if "measured" in line or "published" in line
    ]
    assert any("1 │ measured  │ occubench/careful" in line for line in lines), lines
    assert any(
        "- │ published │ vendor/model-a" in line and "not published" in line for line in lines
    ), lines
    assert "never ranked with them" in flat(result.output)
    assert "| \\- | published | vendor/model-a |" in (out / "published.md").read_text()
    paper = runner.invoke(app, ["report", str(logs), "--published", "paper", "--resamples", "20"])
    assert paper.exit_code == ExitCode.OK
    assert "- │ published │ GPT-5.2" in paper.output and "Gemini-3-Flash" in paper.output


def test_leaderboard_writes_the_site_and_fails_on_a_tampered_bundle(bundle, tmp_path):
    site = tmp_path / "site"
    result = runner.invoke(
        app,
        [
            "leaderboard",
            str(bundle),
            "--out",
            str(site),
            "--published",
            "paper",
            "--resamples",
            "20",
        ],
    )
    assert result.exit_code == ExitCode.OK, result.output
    assert f"Wrote {site / 'index.html'}: 1 row(s) on 1 board(s)" in flat(result.output)
    assert (site / "index.html").is_file() and (site / "data.json").is_file()

    def edit(files):
        files["summary.json"] = files["summary.json"].replace(b"1.0", b"0.9", 1)

    tampered = changed(bundle, tmp_path / "t.tar.gz", edit)
    result = runner.invoke(app, ["leaderboard", str(bundle), str(tampered), "--out", str(site)])
    assert result.exit_code == ExitCode.BAD_INPUT
    assert "t.tar.gz: failed, -" in flat(result.output)


def test_verify_with_the_dataset_the_runs_ran_passes_and_with_another_fails(bundle, tmp_path):
    from occubench.dataset import load_dataset, reference_suite_dir, write_dataset

    same = runner.invoke(app, ["verify", str(bundle), "--dataset", str(reference_suite_dir())])
    assert same.exit_code == ExitCode.OK, same.output
    assert "6 logged task and environment records match the dataset at" in flat(same.output)

    suite = load_dataset(reference_suite_dir())
    tasks = [
        t.model_copy(update={"agent_instruction": "Do something else."}) if t.task_id == 1002 else t
        for t in suite.tasks
        if t.task_id != 1003
    ]
    other = write_dataset(tmp_path / "other", tasks, suite.envs.values(), suite.scenarios.values())
    result = runner.invoke(app, ["verify", str(bundle), "--dataset", str(other)])
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    text = flat(result.output)
    assert f"Bundle {bundle.name}: FAILED (1 problem(s))" in text
    assert f"logs: 2 logged task(s) of dataset reference differ from the dataset at {other}:" in (
        text
    )
    assert "task 1002: task.agent_instruction (2 sample(s), first logs/001-" in text
    assert "task 1003: not in the dataset (2 sample(s), first logs/001-" in text


def test_the_runs_table_has_a_user_column_only_when_a_run_bound_a_user(logs, tmp_path):
    talked = make_bundle([user_runs(tmp_path, ["user-terse"])], tmp_path / "u.tar.gz", resamples=50)
    table = runs_table(talked)
    columns = {str(c.header): list(c._cells) for c in table.columns}
    assert columns["user"] == ["occubench/user-terse"]
    plain = runs_table(make_bundle([logs], tmp_path / "p.tar.gz", resamples=50))
    assert "user" not in {str(c.header) for c in plain.columns}
