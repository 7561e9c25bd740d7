"""One writer process of the concurrency test (run with ``python -I``, not collected).

Usage: world_writer.py WORLD CALLS OUT READY GO KEYS

Asks WORLD for each key in KEYS (comma-separated integers), three tasks per key at once.
Each call of ``make`` appends "pid key" to CALLS (one short write to a file opened for
appending). Announces itself in the folder READY once its imports are done, then starts
when the file GO exists, so that all writers ask at once. Writes each key's entry digest
and source to OUT (JSON).
"""

import asyncio
import json
import os
import sys
import time
from pathlib import Path

from occubench.protocols import MessageStyle
from occubench.worlds import PathStep, World, WorldContext, WorldEntry, entry_key

CONTEXT = WorldContext(
    env_digest="e" * 64,
    system_prompt_digest="f" * 64,
    layout=MessageStyle.OCCUBENCH,
    model="mockllm/simulator",
    retries=2,
)
TASKS_PER_KEY = 3


async def ask(world: World, number: int, calls: Path) -> tuple[int, str, str]:
    digest = world.add_context(CONTEXT)
    path = [PathStep.of("open", {"folder": number % 3})]
    call = PathStep.of("lookup", f'{{"id": {number}}}')
    key = entry_key(digest, path, call)

    async def make() -> WorldEntry:
        with calls.open("a") as out:
            out.write(f"{os.getpid()} {number}\n")
        await asyncio.sleep(0.02)  # hold the key while the others ask for it
        answer = {"id": number, "by": os.getpid()}
        return WorldEntry.record(
            digest, path, call, text=json.dumps(answer), observation=answer, author="writer"
        )

    answer = await world.answer(key, make)
    return number, answer.entry.digest, answer.source.value


async def main() -> None:
    world_dir, calls, out, ready, go, keys = sys.argv[1:]
    numbers = [int(k) for k in keys.split(",")]
    with World.open(world_dir, writable=True) as world:
        Path(ready, str(os.getpid())).write_text("")
        while not Path(go).exists():
            time.sleep(0.01)
        asked = [ask(world, n, Path(calls)) for n in numbers for _ in range(TASKS_PER_KEY)]
        answers = await asyncio.gather(*asked)
    Path(out).write_text(json.dumps(answers))


if __name__ == "__main__":
    asyncio.run(main())
