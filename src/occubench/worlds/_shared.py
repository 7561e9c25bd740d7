"""One world object per world per process, shared by every sample that uses it.

A world is read whole when it is opened (``World.open``), so a run opens each world once
(``shared_world``) and its samples share it: one index, one segment written, one
request per key in flight. ``close_shared_worlds`` flushes them to disk; it also runs
when the process exits. What a log records of the world it used is ``WorldInLog``.
"""

from __future__ import annotations

import atexit
import threading
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from occubench.worlds._models import WorldMode
from occubench.worlds._store import World

WORLD_METADATA = "world"
"""Key of ``WorldInLog`` in the task metadata of a log that used a world."""

_OPEN: dict[Path, World] = {}
_GUARD = threading.Lock()


class WorldInLog(BaseModel):
    """The world a run used, as its log records it (``log.eval.metadata["world"]``)."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="The world as the run named it (--world).")
    digest: str = Field(
        description="The world's digest (World.digest) when the run started: for a replay, "
        "the world replayed; a recording run's additions are its steps of source simulator."
    )
    entries: int = Field(ge=0, description="Keys the world answered when the run started.")
    mode: WorldMode = Field(description="How the run used it (--world-mode).")
    variant: int | Literal["epoch"] = Field(description="The variant (--world-variant).")

    @classmethod
    def opened(cls, path: str, mode: WorldMode, variant: int | Literal["epoch"]) -> WorldInLog:
        """The record of the world at ``path`` as it is now (opened once per process).

        Raises:
            UsageError: the world cannot be opened as ``mode`` needs.
        """
        world = shared_world(path, writable=mode is WorldMode.RECORD)
        return cls(
            path=path, digest=world.digest(), entries=len(world.keys()), mode=mode, variant=variant
        )


def shared_world(path: str | Path, *, writable: bool) -> World:
    """The world at ``path``, opened once in this process (again, writable, if need be).

    Raises:
        UsageError: not a world, or a packed world asked for ``writable``.
    """
    resolved = Path(path).expanduser().resolve()
    with _GUARD:
        found = _OPEN.get(resolved)
        if found is not None and (found.writable or not writable):
            return found
        world = World.open(resolved, writable=writable)
        if found is not None:
            found.close()
        _OPEN[resolved] = world
        return world


def close_shared_worlds() -> None:
    """Flush and forget every world ``shared_world`` opened (the next use opens it again)."""
    with _GUARD:
        worlds = list(_OPEN.values())
        _OPEN.clear()
    for world in worlds:
        world.close()


atexit.register(close_shared_worlds)
