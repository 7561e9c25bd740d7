"""The review database: queues that start apart, reviews kept under concurrent saves."""

from __future__ import annotations

import datetime as dt
import sqlite3
import threading

import pytest

from conftest import sample_row
from occubench.results import Trajectory
from occubench.review import Review, ReviewError, ReviewStore, Verdict, is_database, read_reviews
from occubench.review._store import clean_name, van_der_corput

N = 24


def review(key, reviewer, verdict=Verdict.PASS, **fields):
    return Review(
        sample_key=key,
        reviewer=reviewer,
        verdict=verdict,
        saved_at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
        **fields,
    )


@pytest.fixture
def store(tmp_path):
    rows = [sample_row(task_id=i, run_id="run", industry=f"I{i % 3}") for i in range(N)]
    db = ReviewStore(tmp_path / "reviews.sqlite")
    assert db.add_samples(rows, [Trajectory() for _ in rows]) == N
    assert db.add_samples(rows, [Trajectory() for _ in rows]) == 0  # kept once
    return db


def test_van_der_corput_spreads_starting_points():
    assert [van_der_corput(i) for i in range(6)] == [0, 0.5, 0.25, 0.75, 0.125, 0.625]


def test_reviewers_start_on_different_samples_and_each_queue_holds_all(store):
    names = ["ada", "grace", "alan", "barbara"]
    queues = {n: [i.sample_key for i in store.queue(store.sign_in(n))] for n in names}
    firsts = [q[0] for q in queues.values()]
    assert len(set(firsts)) == len(names)
    assert all(sorted(q) == sorted(queues["ada"]) and len(q) == N for q in queues.values())
    # the second reviewer starts half-way round the first one's queue
    assert queues["ada"].index(queues["grace"][0]) == N // 2
    assert (
        store.sign_in("ada") == "ada"
        and [i.sample_key for i in store.queue("ada")] == queues["ada"]
    )


def test_a_new_sample_joins_every_queue(store):
    store.sign_in("ada")
    store.add_samples([sample_row(task_id=999, run_id="run")], [Trajectory()])
    store.sign_in("ada")
    assert len(store.queue("ada")) == N + 1 and store.queue("ada")[-1].sample_key == "run:999:1"


def test_saving_again_replaces_and_reviews_carry_context(store):
    store.sign_in("ada")
    key = store.queue("ada")[0].sample_key
    store.save_review(review(key, "ada", Verdict.FAIL, comment="first"))
    store.save_review(review(key, "ada", Verdict.PASS, scenario_realism=4, comment="second"))
    (saved,) = store.reviews()
    assert (saved.verdict, saved.scenario_realism, saved.comment) == (Verdict.PASS, 4, "second")
    assert (saved.agent, saved.env_mode, saved.automatic_verdict) == ("a/one", "E0", "pass")
    assert store.queue("ada")[0].mine == saved and store.queue("ada")[0].reviews == 1


def test_unknown_sample_or_reviewer_is_refused(store):
    store.sign_in("ada")
    with pytest.raises(ReviewError, match="no sample"):
        store.save_review(review("nope", "ada"))
    with pytest.raises(ReviewError, match="not signed in"):
        store.save_review(review(store.queue("ada")[0].sample_key, "mallory"))
    assert store.reviews() == []


def test_concurrent_saves_are_all_kept(store):
    reviewers = [f"reviewer {i}" for i in range(8)]
    for name in reviewers:
        store.sign_in(name)
    keys = [i.sample_key for i in store.queue("reviewer 0")]
    start = threading.Barrier(len(reviewers))
    failures: list[BaseException] = []

    def work(name):
        start.wait()
        try:
            for key in keys:
                store.save_review(review(key, name, comment=f"{name} on {key}"))
        except BaseException as e:  # reported below
            failures.append(e)

    threads = [threading.Thread(target=work, args=(n,)) for n in reviewers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    saved = store.reviews()
    assert len(saved) == len(reviewers) * N
    assert {(r.reviewer, r.sample_key) for r in saved} == {(n, k) for n in reviewers for k in keys}


def test_names_are_cleaned(store):
    assert clean_name("  Ada\x1b[2J   Lovelace\n") == "Ada[2J Lovelace"
    with pytest.raises(ReviewError, match="a name is needed"):
        clean_name("\x00\t ")
    with pytest.raises(ReviewError, match="at most 80"):
        clean_name("x" * 81)


def test_read_reviews_wants_a_review_database(store, tmp_path):
    assert is_database(store.path) and read_reviews(store.path) == []
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(ReviewError, match="not a review database"):
        read_reviews(other)
    text = tmp_path / "reviews.json"
    text.write_text("{}")
    assert not is_database(text)
    with pytest.raises(ReviewError, match="not an SQLite file"):
        read_reviews(text)
