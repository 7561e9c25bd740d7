"""The desk a browser plays at: the eval asks in one thread, the web app answers in another.

The session's eval runs in its own event loop; the web app (uvicorn) in another thread.
``HandOff`` holds the one thing they share, under a lock: the phase of the session, the
turn waiting for a move, and at the end the result. The eval's ``ask`` publishes a turn
and waits (in a worker thread) for the move; a form posted to the app hands it over with
``give``, which accepts it only for the turn that is waiting (a form sent twice, or from
a page of an earlier turn, is refused). Closing the desk ends a wait with no move as
giving up.

The same desk carries a person's replies in the user's seat (``TalkHandOff``: the turn is
the agent's message, the move the person's reply; closing the desk ends the conversation).
"""

from __future__ import annotations

import threading
from enum import Enum
from typing import Generic, Protocol, TypeVar

import anyio

from occubench.play._talk import Reply, TalkTurn
from occubench.play._turns import Move, PlayResult, Turn


class Phase(str, Enum):
    """Where a browser session is."""

    STARTING = "starting"
    """The environment is being opened: no turn yet."""
    ASKING = "asking"
    """A turn waits for the person's move."""
    WORKING = "working"
    """A tool call went to the environment: the next turn is coming."""
    GRADING = "grading"
    """The answer was given: the grader is at work."""
    DONE = "done"
    """The verdict is in."""
    CLOSED = "closed"
    """The person ended the session."""


class _Numbered(Protocol):
    @property
    def number(self) -> int: ...


TurnT = TypeVar("TurnT", bound=_Numbered)
MoveT = TypeVar("MoveT")


class _SharedDesk(Generic[TurnT, MoveT]):
    """The shared desk of a browser session (module doc), for one kind of turn and move."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._phase = Phase.STARTING
        self._turn: TurnT | None = None
        self._move: MoveT | None = None
        self._result: PlayResult | None = None

    def _left(self) -> MoveT:
        """The move of a person who closed the desk while a turn waited."""
        raise NotImplementedError

    def _after(self, move: MoveT) -> Phase:
        """The phase once ``move`` is handed over."""
        raise NotImplementedError

    def view(self) -> tuple[Phase, TurnT | None, PlayResult | None]:
        """The phase, the latest turn and the result (once in), as they are now."""
        with self._changed:
            return self._phase, self._turn, self._result

    async def _publish(self, turn: TurnT) -> MoveT:
        """Publish ``turn``; the move handed over for it (``_left`` if the desk closes)."""
        with self._changed:
            if self._phase is Phase.CLOSED:
                return self._left()
            self._turn, self._move, self._phase = turn, None, Phase.ASKING
            self._changed.notify_all()
        return await anyio.to_thread.run_sync(self._wait_for_move, abandon_on_cancel=True)

    def _wait_for_move(self) -> MoveT:
        with self._changed:
            while self._move is None and self._phase is not Phase.CLOSED:
                self._changed.wait()
            move, self._move = self._move, None
            return move if move is not None else self._left()

    def give(self, number: int, move: MoveT) -> bool:
        """Hand over the move for turn ``number``; False when that turn is not waiting."""
        with self._changed:
            waiting = self._phase is Phase.ASKING and self._turn is not None
            if not waiting or self._turn is None or self._turn.number != number:
                return False
            self._move = move
            self._phase = self._after(move)
            self._changed.notify_all()
            return True

    def finish(self, result: PlayResult) -> None:
        """The verdict is in (a desk closed before stays closed)."""
        with self._changed:
            self._result = result
            if self._phase is not Phase.CLOSED:
                self._phase = Phase.DONE
            self._changed.notify_all()

    def close(self) -> None:
        """The person ends the session (a waiting turn gives up)."""
        with self._changed:
            self._phase = Phase.CLOSED
            self._changed.notify_all()

    def settled(self, timeout: float) -> bool:
        """Wait until the session no longer waits on the environment; whether it did in time."""
        busy = (Phase.STARTING, Phase.WORKING, Phase.GRADING)
        with self._changed:
            return self._changed.wait_for(lambda: self._phase not in busy, timeout)

    def wait_closed(self, timeout: float | None = None) -> bool:
        """Wait until the person closes the session; whether they did (within ``timeout``)."""
        with self._changed:
            return self._changed.wait_for(lambda: self._phase is Phase.CLOSED, timeout)


class HandOff(_SharedDesk[Turn, Move]):
    """The browser desk of a person playing the agent: a tool call, or the answer."""

    async def ask(self, turn: Turn) -> Move:
        """Publish ``turn``; the move handed over for it (giving up if the desk closes)."""
        return await self._publish(turn)

    def _left(self) -> Move:
        return Move(answer="")

    def _after(self, move: Move) -> Phase:
        return Phase.WORKING if move.tool is not None else Phase.GRADING


class TalkHandOff(_SharedDesk[TalkTurn, Reply]):
    """The browser desk of a person in the user's seat: a reply to the agent's message."""

    async def reply(self, turn: TalkTurn) -> Reply:
        """Publish ``turn``; the reply handed over (the end of the conversation if it closes)."""
        return await self._publish(turn)

    def _left(self) -> Reply:
        return Reply(text="", end=True)

    def _after(self, move: Reply) -> Phase:
        return Phase.GRADING if move.end else Phase.WORKING
