"""The review database: samples to review, reviewers, their queues and their reviews (SQLite).

Every write runs in one ``BEGIN IMMEDIATE`` transaction on its own connection, in WAL
mode with a busy timeout: two reviewers saving at the same moment are serialised by
SQLite, and both reviews are kept. A reviewer's review of a sample is one row (saving
again replaces it).

Queues: the samples are put in one fixed mixed order (by a hash of their key), and
each reviewer gets that order rotated by an offset of their own, the van der Corput
sequence over the number of samples (0, 1/2, 1/4, 3/4, ... of the way round), so the
second reviewer starts half-way and every new reviewer starts as far as possible from
the others: reviewers see different samples first, and every sample is reached.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from occubench.analysis import setup_of
from occubench.errors import UsageError
from occubench.results import SampleRow, Trajectory
from occubench.review._reviews import Review, Verdict, automatic_verdict

SCHEMA = """
CREATE TABLE IF NOT EXISTS samples (
    sample_key TEXT PRIMARY KEY,
    mix TEXT NOT NULL,
    row_json TEXT NOT NULL,
    trajectory_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS reviewers (
    name TEXT PRIMARY KEY,
    number INTEGER NOT NULL UNIQUE,
    signed_up TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS assignments (
    reviewer TEXT NOT NULL REFERENCES reviewers(name),
    rank INTEGER NOT NULL,
    sample_key TEXT NOT NULL REFERENCES samples(sample_key),
    PRIMARY KEY (reviewer, rank),
    UNIQUE (reviewer, sample_key)
);
CREATE TABLE IF NOT EXISTS reviews (
    sample_key TEXT NOT NULL REFERENCES samples(sample_key),
    reviewer TEXT NOT NULL REFERENCES reviewers(name),
    verdict TEXT NOT NULL,
    scenario_realism INTEGER,
    rubric_realism INTEGER,
    comment TEXT NOT NULL,
    saved_at TEXT NOT NULL,
    PRIMARY KEY (sample_key, reviewer)
);
"""
BUSY_TIMEOUT_S = 30.0
"""How long a write waits for another one to finish before it fails."""
MAX_NAME = 80
"""Longest reviewer name."""
MAX_INTEGER = 2**63 - 1
"""Largest integer SQLite holds: a queue position beyond it is no position."""


class ReviewError(UsageError):
    """A review or a name that cannot be stored (the message says why)."""


class QueueItem(BaseModel):
    """One sample in a reviewer's queue."""

    rank: int = Field(description="Position in the reviewer's queue, from 0.")
    sample_key: str
    row: SampleRow
    mine: Review | None = Field(description="This reviewer's review, if saved.")
    reviews: int = Field(description="Reviews of the sample by anyone.")


class SampleView(QueueItem):
    """A sample with everything a reviewer needs to judge it."""

    trajectory: Trajectory
    total: int = Field(description="Length of the reviewer's queue.")


def van_der_corput(n: int) -> float:
    """The n-th point of the base-2 van der Corput sequence (0, 1/2, 1/4, 3/4, 1/8, ...)."""
    value, denominator = 0.0, 1.0
    while n:
        denominator *= 2
        n, bit = divmod(n, 2)
        value += bit / denominator
    return value


def clean_name(name: str) -> str:
    """A reviewer's name as stored: printable, trimmed, 1 to ``MAX_NAME`` characters.

    Raises:
        ReviewError: when nothing printable is left or the name is too long.

    """
    cleaned = " ".join("".join(c for c in name if c.isprintable()).split())
    if not cleaned:
        raise ReviewError("a name is needed to sign in")
    if len(cleaned) > MAX_NAME:
        raise ReviewError(f"a name has at most {MAX_NAME} characters")
    return cleaned


def _mix(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat()


class ReviewStore:
    """The SQLite file behind ``occubench review``."""

    def __init__(self, path: str | Path) -> None:
        """Open (or create) the database at ``path``."""
        self.path = Path(path)
        with self._connection() as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(SCHEMA)

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        try:
            db.execute("PRAGMA foreign_keys=ON")
            yield db
        finally:
            db.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken at once (``BEGIN IMMEDIATE``), committed or rolled back."""
        with self._connection() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def add_samples(self, rows: Sequence[SampleRow], trajectories: Sequence[Trajectory]) -> int:
        """Add samples (a sample already there is kept as it is); returns how many were new."""
        if len(rows) != len(trajectories):
            raise ValueError("one trajectory per row is needed")
        with self._transaction() as db:
            before = db.execute("SELECT COUNT(*) FROM samples").fetchone()[0]
            db.executemany(
                "INSERT OR IGNORE INTO samples VALUES (?, ?, ?, ?)",
                [
                    (
                        row.sample_key,
                        _mix(row.sample_key),
                        row.model_dump_json(),
                        t.model_dump_json(),
                    )
                    for row, t in zip(rows, trajectories, strict=True)
                ],
            )
            added: int = db.execute("SELECT COUNT(*) FROM samples").fetchone()[0] - before
            return added

    def sample_count(self) -> int:
        """Samples in the database."""
        with self._connection() as db:
            return int(db.execute("SELECT COUNT(*) FROM samples").fetchone()[0])

    def sign_in(self, name: str) -> str:
        """Register ``name`` (if new) and fill its queue with every sample; returns the name."""
        name = clean_name(name)
        with self._transaction() as db:
            found = db.execute("SELECT number FROM reviewers WHERE name = ?", (name,)).fetchone()
            if found is None:
                number = db.execute("SELECT COUNT(*) FROM reviewers").fetchone()[0]
                db.execute("INSERT INTO reviewers VALUES (?, ?, ?)", (name, number, _now()))
            else:
                number = found[0]
            keys = [
                k for (k,) in db.execute("SELECT sample_key FROM samples ORDER BY mix, sample_key")
            ]
            queued = {
                k
                for (k,) in db.execute(
                    "SELECT sample_key FROM assignments WHERE reviewer = ?", (name,)
                )
            }
            if len(queued) < len(keys):
                offset = int(van_der_corput(number) * len(keys))
                order = keys[offset:] + keys[:offset]
                start = len(queued)
                db.executemany(
                    "INSERT INTO assignments VALUES (?, ?, ?)",
                    [
                        (name, start + i, key)
                        for i, key in enumerate(k for k in order if k not in queued)
                    ],
                )
        return name

    def save_review(self, review: Review) -> None:
        """Store ``review`` (replacing the reviewer's earlier one for that sample).

        Raises:
            ReviewError: when the sample or the reviewer is unknown.

        """
        with self._transaction() as db:
            if (
                db.execute(
                    "SELECT 1 FROM samples WHERE sample_key = ?", (review.sample_key,)
                ).fetchone()
                is None
            ):
                raise ReviewError(f"no sample {review.sample_key!r} in this review database")
            if (
                db.execute("SELECT 1 FROM reviewers WHERE name = ?", (review.reviewer,)).fetchone()
                is None
            ):
                raise ReviewError(f"{review.reviewer!r} has not signed in")
            db.execute(
                """INSERT INTO reviews VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (sample_key, reviewer) DO UPDATE SET verdict = excluded.verdict,
                scenario_realism = excluded.scenario_realism,
                rubric_realism = excluded.rubric_realism, comment = excluded.comment,
                saved_at = excluded.saved_at""",
                (
                    review.sample_key,
                    review.reviewer,
                    review.verdict.value,
                    review.scenario_realism,
                    review.rubric_realism,
                    review.comment,
                    review.saved_at.isoformat(),
                ),
            )

    def _reviews(
        self, db: sqlite3.Connection, where: str = "", args: tuple[Any, ...] = ()
    ) -> list[Review]:
        query = (
            "SELECT r.sample_key, r.reviewer, r.verdict, r.scenario_realism, r.rubric_realism, "
            "r.comment, r.saved_at, s.row_json FROM reviews r JOIN samples s USING (sample_key) "
            f"{where} ORDER BY r.saved_at, r.reviewer, r.sample_key"
        )
        out = []
        for key, reviewer, verdict, scenario, rubric, comment, saved, row_json in db.execute(
            query, args
        ):
            row = SampleRow.model_validate_json(row_json)
            out.append(
                Review(
                    sample_key=key,
                    reviewer=reviewer,
                    verdict=Verdict(verdict),
                    scenario_realism=scenario,
                    rubric_realism=rubric,
                    comment=comment,
                    saved_at=dt.datetime.fromisoformat(saved),
                    task_id=str(row.task_id),
                    scenario=row.scenario,
                    industry=row.industry,
                    agent=setup_of(row)[0],
                    env_mode=row.env_mode,
                    automatic_verdict=automatic_verdict(row),
                )
            )
        return out

    def reviews(self) -> list[Review]:
        """Every review, oldest first, with its sample's context (the export)."""
        with self._connection() as db:
            return self._reviews(db)

    def queue(self, reviewer: str) -> list[QueueItem]:
        """The reviewer's queue in order, with their reviews and the count of all reviews."""
        with self._connection() as db:
            mine = {r.sample_key: r for r in self._reviews(db, "WHERE r.reviewer = ?", (reviewer,))}
            counts = dict(
                db.execute("SELECT sample_key, COUNT(*) FROM reviews GROUP BY sample_key")
            )
            return [
                QueueItem(
                    rank=rank,
                    sample_key=key,
                    row=SampleRow.model_validate_json(row_json),
                    mine=mine.get(key),
                    reviews=counts.get(key, 0),
                )
                for rank, key, row_json in db.execute(
                    "SELECT a.rank, a.sample_key, s.row_json FROM assignments a "
                    "JOIN samples s USING (sample_key) WHERE a.reviewer = ? ORDER BY a.rank",
                    (reviewer,),
                )
            ]

    def sample(self, reviewer: str, rank: int) -> SampleView | None:
        """The sample at ``rank`` in the reviewer's queue (None past its end, or below 0)."""
        if not 0 <= rank <= MAX_INTEGER:
            return None
        with self._connection() as db:
            found = db.execute(
                "SELECT a.sample_key, s.row_json, s.trajectory_json FROM assignments a "
                "JOIN samples s USING (sample_key) WHERE a.reviewer = ? AND a.rank = ?",
                (reviewer, rank),
            ).fetchone()
            if found is None:
                return None
            key, row_json, trajectory_json = found
            reviews = self._reviews(db, "WHERE r.sample_key = ?", (key,))
            total = db.execute(
                "SELECT COUNT(*) FROM assignments WHERE reviewer = ?", (reviewer,)
            ).fetchone()[0]
        mine = next((r for r in reviews if r.reviewer == reviewer), None)
        return SampleView(
            rank=rank,
            sample_key=key,
            row=SampleRow.model_validate_json(row_json),
            mine=mine,
            reviews=len(reviews),
            trajectory=Trajectory.model_validate_json(trajectory_json),
            total=total,
        )


def read_reviews(path: str | Path) -> list[Review]:
    """Every review in a review database (for ``occubench report --reviews DB``).

    Raises:
        ReviewError: when ``path`` is not a review database.

    """
    path = Path(path)
    if not is_database(path):
        raise ReviewError(f"{path} is not an SQLite file")
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
        finally:
            db.close()
        if not {"samples", "reviews", "reviewers"} <= tables:
            raise ReviewError(f"{path} is an SQLite file but not a review database")
        return ReviewStore(path).reviews()
    except sqlite3.DatabaseError as e:
        raise ReviewError(f"{path} is not a review database ({e})") from None


def is_database(path: str | Path) -> bool:
    """Whether ``path`` is an SQLite file (by its header)."""
    try:
        with Path(path).open("rb") as f:
            return f.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False
