"""A browser desk's session for the play apps' tests: the desk, its app, a client, the moves.

Both seats' web tests (``tests/play/test_web.py``, ``test_web_user.py``) set their desk up
with it: a thread waits on the desk for each published turn, as the runner would.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Generic, TypeVar

import anyio
from fastapi import FastAPI
from fastapi.testclient import TestClient

from conftest import HANG_BOUND

TurnT = TypeVar("TurnT")
MoveT = TypeVar("MoveT")


class DeskSession(Generic[TurnT, MoveT]):
    """A desk, its app and a client; ``publish`` makes a turn wait for the person's move.

    Args:
        desk: The shared desk (``HandOff`` or ``TalkHandOff``).
        app: The app over ``desk``.
        key: The session's key (the start link carries it).
        wait: The desk's coroutine that publishes a turn and returns its move.
    """

    def __init__(
        self, desk: Any, app: FastAPI, key: str, wait: Callable[[TurnT], Awaitable[MoveT]]
    ) -> None:
        self.desk, self.app, self.key, self._wait = desk, app, key, wait
        self.client = TestClient(app)
        self.moves: list[MoveT] = []
        self.threads: list[threading.Thread] = []

    def publish(self, turn: TurnT) -> None:
        thread = threading.Thread(
            target=lambda: self.moves.append(anyio.run(self._wait, turn)), daemon=True
        )
        thread.start()
        self.threads.append(thread)
        assert self.desk.settled(HANG_BOUND)

    def enter(self) -> str:
        """Open the start link; the form token of the page it leads to."""
        page = self.client.get(f"/start?key={self.key}")
        assert page.status_code == 200
        return re.search(r'name="token" value="([^"]+)"', page.text).group(1)

    def handed(self) -> MoveT:
        """The move handed over for the last published turn."""
        self.threads[-1].join(HANG_BOUND)
        return self.moves[-1]


def opened(session: DeskSession[TurnT, MoveT], first: TurnT) -> Iterator[DeskSession[TurnT, MoveT]]:
    """``session`` with ``first`` waiting; closed after, its threads joined (a fixture's body)."""
    session.publish(first)
    yield session
    session.desk.close()
    for thread in session.threads:
        thread.join(HANG_BOUND)
