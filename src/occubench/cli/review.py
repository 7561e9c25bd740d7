"""``occubench review``: the expert review app over a set of runs."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Annotated

import typer

from occubench.cli._common import console, user_errors, warn_if_exposed
from occubench.cli._options import Host, Port
from occubench.defaults import DEFAULT_ALLOWED_HOSTS
from occubench.errors import UsageError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


def review(
    logs: Annotated[
        list[str] | None,
        typer.Argument(help="Inspect log files or folders whose samples are to be reviewed."),
    ] = None,
    db: Annotated[
        Path, typer.Option(help="SQLite file of the reviews (created if missing; reused).")
    ] = Path("reviews.sqlite"),
    host: Host = DEFAULT_HOST,
    port: Port = DEFAULT_PORT,
    export: Annotated[
        Path | None,
        typer.Option(help="Write the reviews in DB to this file (.json or .csv) and exit."),
    ] = None,
) -> None:
    """Serve a web app where experts grade samples and rate scenario and rubric realism.

    Reviewers sign in with a name, walk through their own queue of samples (trajectory,
    fault log, verification plan, the verifier's votes and feedback), and record a
    verdict, two 1-5 realism ratings and a comment. The samples of LOGS are added to DB
    (samples already there are kept, with their reviews). Export the reviews from the
    app or with --export, and give them to `occubench report --reviews FILE`.
    """
    from occubench.results import read_runs, read_trajectories
    from occubench.review import ReviewStore, reviews_csv, reviews_json

    with user_errors():
        store = ReviewStore(db)
        if export is not None:
            reviews = store.reviews()
            text = (
                reviews_json(reviews) if export.suffix.lower() == ".json" else reviews_csv(reviews)
            )
            export.write_text(text, encoding="utf-8")
            console.print(f"Wrote {len(reviews)} review(s) to {export}", markup=False)
            return
        if not logs and store.sample_count() == 0:
            raise UsageError(f"{db} holds no sample yet: give the logs to review")
        rows = read_runs(logs or [])
        added = store.add_samples(rows, read_trajectories(rows)) if rows else 0
        listener = _listen(host, port)
    import uvicorn

    from occubench.review import create_app

    warn_if_exposed(host, "anyone who reaches it can review as anyone.")
    console.print(
        f"{store.sample_count()} sample(s) in {db} ({added} new). "
        f"Open http://{host}:{listener.getsockname()[1]}/ (Ctrl-C stops).",
        markup=False,
        highlight=False,
    )
    app = create_app(store, hosts=sorted({host, *DEFAULT_ALLOWED_HOSTS}))
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[listener])


def _listen(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port`` (port 0: a free one); ValueError if it cannot."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family)
    except OSError as e:
        raise ValueError(f"cannot serve on {host}:{port}: {e.strerror or e}") from e
