"""Worlds for the tests: a context, entries along paths, worlds written with them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from inspect_ai.model import Model, ModelOutput, get_model

from occubench.protocols import MessageStyle
from occubench.worlds import PathStep, World, WorldContext, WorldEntry

CONTEXT = WorldContext(
    env_digest="e" * 64,
    system_prompt_digest="f" * 64,
    layout=MessageStyle.OCCUBENCH,
    model="mockllm/simulator",
    generate={"max_tokens": 512, "seed": 7},
    retries=2,
)
START = datetime(2026, 1, 1, tzinfo=UTC)


class Counted:
    """A scripted model's answers (``occubench/NAME``) through mockllm, counted: how often a
    run asked it (``calls``), as a world's replay must not."""

    def __init__(self, name: str = "echo-simulator") -> None:
        self.calls = 0
        self.scripted = get_model(f"occubench/{name}", memoize=False)

    async def __call__(self, *request: Any) -> ModelOutput:
        """Mockllm's call (input, tools, tool choice, config), answered by the scripted model."""
        self.calls += 1
        out = await self.scripted.generate(*request)
        answer = ModelOutput.from_content("mockllm/model", out.completion)
        answer.usage = out.usage
        return answer

    def model(self) -> Model:
        """The model that answers as the scripted one, counting each call."""
        return get_model("mockllm/model", custom_outputs=self, memoize=False)


def steps(*calls: tuple[str, Any]) -> list[PathStep]:
    """Path steps of calls given as (tool, arguments)."""
    return [PathStep.of(tool, arguments) for tool, arguments in calls]


def entry(
    *calls: tuple[str, Any],
    answer: str = "ok",
    author: str = "mockllm/simulator",
    minute: int = 0,
    context: WorldContext = CONTEXT,
) -> WorldEntry:
    """The entry answering the last call after the ones before it."""
    *path, call = steps(*calls)
    return WorldEntry.record(
        context.digest(),
        path,
        call,
        text=f'{{"result": "{answer}"}}',
        observation={"result": answer},
        author=author,
        created=START + timedelta(minutes=minute),
    )


def chain(length: int, prefix: str = "step") -> list[WorldEntry]:
    """Entries along one path: each call answered after the ones before it."""
    calls = [("lookup", {"id": f"{prefix}-{i}"}) for i in range(length)]
    return [entry(*calls[: i + 1], answer=f"{prefix}-{i}", minute=i) for i in range(length)]


def write_world(folder: Path, entries: list[WorldEntry], context: WorldContext = CONTEXT) -> Path:
    """A world folder holding ``entries`` (in one segment)."""
    with World.open(folder, writable=True, description="a test world") as world:
        world.add_context(context)
        for found in entries:
            world.append(found)
    return folder


def segment(folder: Path) -> Path:
    """The one segment of a world folder written by ``write_world``."""
    (only,) = (folder / "segments").iterdir()
    return only


LONG_JUNK = 17 * 2**20
"""Bytes of a garbage line past the default line bound (16 MiB)."""


def insert_long_line(path: Path, after: int = 1, size: int = LONG_JUNK) -> int:
    """Put one garbage line of ``size`` bytes after line ``after`` of a file; its number."""
    lines = path.read_bytes().splitlines(keepends=True)
    with path.open("wb") as out:
        out.writelines(lines[:after])
        for start in range(0, size, 2**20):
            out.write(b"~" * min(2**20, size - start))
        out.write(b"\n")
        out.writelines(lines[after:])
    return after + 1
