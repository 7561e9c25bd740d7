"""``occubench review``: serve the app over logs, export the reviews; ``report --reviews``."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import sqlite3
import subprocess
import sys
import urllib.request

import pytest
from typer.testing import CliRunner

from conftest import HANG_BOUND
from occubench.cli import app
from occubench.results import read_runs, read_trajectories
from occubench.review import Review, ReviewStore, Verdict
from review.review_logs import make_review_logs

runner = CliRunner()


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    return make_review_logs(tmp_path_factory.mktemp("logs"), task_ids="1001,1002")


@pytest.fixture
def reviewed(logs, tmp_path):
    """A review database with two reviews: one agrees with the scored verdict, one not."""
    rows = read_runs([logs])
    store = ReviewStore(tmp_path / "reviews.sqlite")
    store.add_samples(rows, read_trajectories(rows))
    store.sign_in("ada")
    for item, agree in zip(store.queue("ada")[:2], (True, False), strict=True):
        passed = bool(item.row.passed) == agree
        store.save_review(
            Review(
                sample_key=item.sample_key,
                reviewer="ada",
                verdict=Verdict.PASS if passed else Verdict.FAIL,
                scenario_realism=4,
                comment="checked by hand",
                saved_at=dt.datetime.now(dt.UTC),
            )
        )
    return store.path


def served_url(server: subprocess.Popen[str]) -> str:
    """The URL the command prints once it listens (port 0: the port it was given)."""
    said = ""
    for line in server.stdout:
        said += line
        found = re.search(r"http://127\.0\.0\.1:\d+/", "".join(said.split()))
        if found:
            return found.group()
    raise AssertionError(f"the app printed no URL: {said}")


def test_review_serves_the_samples_of_the_logs_on_loopback(logs, tmp_path):
    db = tmp_path / "served.sqlite"
    command = [sys.executable, "-m", "occubench", "review", str(logs), "--db", str(db)]
    server = subprocess.Popen(
        [*command, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        # listening once the URL is printed: the page comes when the app has started
        page = urllib.request.urlopen(served_url(server), timeout=HANG_BOUND).read()
        assert b"12 sample(s) to review" in page
    finally:
        server.terminate()
        server.wait(timeout=HANG_BOUND)
    assert ReviewStore(db).sample_count() == 12  # kept for the next session


def test_export_then_report_with_the_reviews(reviewed, logs, tmp_path):
    out = tmp_path / "reviews.json"
    result = runner.invoke(app, ["review", "--db", str(reviewed), "--export", str(out)])
    assert result.exit_code == 0, result.output
    assert len(json.loads(out.read_text())["reviews"]) == 2
    csv_out = tmp_path / "reviews.csv"
    exported = runner.invoke(app, ["review", "--db", str(reviewed), "--export", str(csv_out)])
    assert exported.exit_code == 0
    files = ["--out", str(tmp_path / "report"), "-f", "html", "-f", "csv"]
    for source, extra in ((out, []), (csv_out, []), (reviewed, files)):
        command = ["report", str(logs), "--reviews", str(source), "--resamples", "100"]
        report = runner.invoke(app, [*command, *extra])
        assert report.exit_code == 0, report.output
        assert "Reviewer agreement: 2 review(s) by 1 reviewer(s) of 2 sample(s)" in report.output
        assert "CR with human verdicts" in report.output and "checked by hand" in report.output
    page = (tmp_path / "report" / "report.html").read_text()
    assert 'id="review-agreement"' in page and 'id="disagreements-table"' in page
    assert (tmp_path / "report" / "disagreements.csv").read_text().count("checked by hand") == 1


def test_bad_input_is_a_clear_error(logs, tmp_path):
    empty = runner.invoke(app, ["review", "--db", str(tmp_path / "new.sqlite")])
    assert empty.exit_code == 2 and "holds no sample yet" in empty.output
    broken = tmp_path / "broken.csv"
    broken.write_text("sample_key,reviewer,verdict,saved_at\nk,ada,maybe,2026-01-01T00:00:00Z\n")
    result = runner.invoke(app, ["report", str(logs), "--reviews", str(broken)])
    assert result.exit_code == 2 and "broken.csv, line 2: verdict" in result.output
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    result = runner.invoke(app, ["report", str(logs), "--reviews", str(other)])
    assert result.exit_code == 2 and "not a review database" in result.output
    assert "Traceback" not in result.output
