"""Boards of runs with a simulated user: one user model a board, named in its title and lines.

Two bundles of the scripted asking and non-asking agents on the one-task user dataset,
one with the cooperative user, one with the terse user: a different user model makes a
different measurement, so their rows are never ranked together.
"""

from __future__ import annotations

import pytest

from bundle.scripted import user_runs
from occubench.bundle import BundleClass, Standard, make_bundle
from occubench.dataset import content_digest
from occubench.leaderboard import build_site

AGENTS = ("asking", "non-asking")


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    folder = tmp_path_factory.mktemp("users")
    out = []
    for user in ("user-cooperative", "user-terse"):
        logs = user_runs(folder / user, [user], agents=AGENTS)
        make_bundle([logs], folder / f"{user}.tar.gz", resamples=50)
        out.append(folder / f"{user}.tar.gz")
    return folder, out, content_digest(folder / "user-cooperative" / "data")


def test_each_user_model_is_a_board_of_its_own_naming_it(bundles, tmp_path):
    _, files, _ = bundles
    data = build_site(files, tmp_path / "site", resamples=50)
    assert [b.bundle_class for b in data.boards] == [BundleClass.CUSTOM] * 2
    assert sorted(b.user or "" for b in data.boards) == [
        "occubench/user-cooperative",
        "occubench/user-terse",
    ]
    for board in data.boards:
        assert f", user {board.user}: " in board.title
        named = sorted(e.agent.split(" ")[0] for e in board.entries)  # + its bundle's name
        assert named == [f"occubench/{a}" for a in AGENTS]
        assert {e.user for e in board.entries} == {board.user}
        assert board.title.count(f"user {board.user}") == 1
    page = (tmp_path / "site" / "index.html").read_text()
    assert "user occubench/user-terse" in page
    record = next((tmp_path / "site" / "records").glob("user-terse*.html")).read_text()
    assert "<th>user</th>" in record and "<td>occubench/user-terse</td>" in record


def test_the_standard_user_model_is_standard_and_another_is_custom(bundles, tmp_path):
    _, files, digest = bundles
    standard = Standard(
        dataset_digest=digest, release_tasks=1, user_model="occubench/user-cooperative"
    )
    data = build_site(files, tmp_path / "site", resamples=50, standard=standard)
    kinds = {b.bundle_class: b.user for b in data.boards}
    assert kinds == {
        BundleClass.STANDARD: "occubench/user-cooperative",
        BundleClass.CUSTOM: "occubench/user-terse",
    }
    (terse,) = [b for b in data.bundles if b.name == "user-terse.tar.gz"]
    assert terse.departures == 1
